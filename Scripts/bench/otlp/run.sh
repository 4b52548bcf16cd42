#!/usr/bin/env bash
# OTLP push benchmark: `hostscope trace push` of the same stored spans to the same local receiver (PyPI's
# rotel collector on loopback) as OTLP/JSON (the only form before protobuf), JSON + gzip, protobuf, and
# protobuf + gzip (the default), interleaved in one run: spans per second and bytes on the wire, side by side.
#   Scripts/bench/otlp/run.sh [SPANS] [RUNS]        defaults: 50000 spans, 5 runs of each format
set -euo pipefail
cd "$(dirname "$0")/../../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build -c release --product hostscope >"$log" 2>&1 || { cat "$log"; exit 1; }
python3 Scripts/bench/otlp/measure.py "$(swift build -c release --show-bin-path)/hostscope" "${1:-50000}" "${2:-5}"
echo
echo "machine: $(nproc) cores, $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg), zlib $(pkg-config --modversion zlib)"
