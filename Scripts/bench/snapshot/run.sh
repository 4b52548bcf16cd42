#!/usr/bin/env bash
# Snapshot benchmark: a warm hostscope snapshot on one persistent session next to a bare
# `exec true`, OpenSSH running the same probe, and a connection per classic command.
# Starts its own loopback sshd (Scripts/sshd-harness.sh) and prints a Markdown table. The release
# build with testing enabled goes to .build-bench, so that .build/release keeps the plain product
# build the other benchmarks use (the first run builds everything there: about ten minutes here).
#   Scripts/bench/snapshot/run.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
harness=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-sshd.XXXXXX")
out=$(mktemp)
trap 'bash Scripts/sshd-harness.sh stop "$harness" >/dev/null 2>&1; rm -rf "$harness" "$out" "$out".*' EXIT
bash Scripts/sshd-harness.sh start "$harness" >/dev/null
HOSTSCOPE_TEST_SSH_DIR="$harness" HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_ITERATIONS="${1:-200}" HOSTSCOPE_BENCH_OUT="$out" \
    swift test -c release -Xswiftc -enable-testing --scratch-path .build-bench --filter SnapshotBenchmarks \
    >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cat "$out"
# The libssh2 peer: ssh2-python running the same lean tick probe on one warm session, parsed.
python3 -c 'import ssh2' 2>/dev/null || python3 -m pip install --quiet --root-user-action=ignore ssh2-python
source "$harness/env"
echo "h 127.0.0.1 $HOSTSCOPE_TEST_SSH_PORT" >"$out.hosts"
python3 Scripts/bench/watch/ssh2_watch.py --warm "$out.hosts" "$harness/id_ed25519" "$HOSTSCOPE_TEST_SSH_USER" \
    "${1:-200}" "$out.ssh2"
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print("ssh2-python warm tick (same lean probe, parsed): wall median %.2f ms, client CPU %.3f ms" % (r["wall_median_ms"], r["client_cpu_ms"]))' "$out.ssh2"
echo
echo "machine: $(nproc) cores, $(uname -r), $(ssh -V 2>&1), libssh2 $(pkg-config --modversion libssh2)"
