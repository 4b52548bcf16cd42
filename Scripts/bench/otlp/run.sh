#!/usr/bin/env bash
# OTLP push benchmark: `hostscope trace push` of the same stored spans to the same local receiver (PyPI's
# rotel collector on loopback) by the build before protobuf (its JSON push, the baseline) and by this tree's
# build as OTLP/JSON, JSON + gzip, protobuf, and protobuf + gzip (the default), interleaved in one run: spans per
# second, CPU time and bytes on the wire, side by side.
#   Scripts/bench/otlp/run.sh [SPANS] [RUNS]        defaults: 50000 spans, 5 runs of each push
# The baseline is commit 257bb0d (the parent of the commit that brought protobuf), built once into
# .build-otlp-base/; BASE_BIN names another binary (BASE_ARGS its options, e.g. "--encoding json" for a build
# that has protobuf), BASE_BIN= (empty) leaves the baseline out.
# HOSTSCOPE_BENCH_CALLGRIND=1 also counts each push's instructions once under valgrind's callgrind.
set -euo pipefail
cd "$(dirname "$0")/../../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build -c release --product hostscope >"$log" 2>&1 || { cat "$log"; exit 1; }
if [[ -z ${BASE_BIN+set} ]]; then
    revision=257bb0db258f118d87f583838e5bd1236c170c2a
    source=.build-otlp-base/$revision
    if [[ ! -x $source/.build/release/hostscope ]]; then
        echo "building the baseline ($revision) into $source: several minutes, once" >&2
        rm -rf "$source"
        mkdir -p "$source"
        git archive "$revision" | tar -x -C "$source"
        (cd "$source" && swift build -c release --product hostscope) >"$log" 2>&1 || { cat "$log"; exit 1; }
    fi
    BASE_BIN=$source/.build/release/hostscope
fi
python3 Scripts/bench/otlp/measure.py "$(swift build -c release --show-bin-path)/hostscope" "${1:-50000}" \
    "${2:-5}" "${BASE_BIN:-}"
echo
echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg), zlib $(pkg-config --modversion zlib)"
