#!/usr/bin/env bash
# Snapshot benchmark: a warm hostscope snapshot on one persistent session next to a bare
# `exec true`, OpenSSH running the same probe, and a connection per classic command.
# Starts its own loopback sshd (Scripts/sshd-harness.sh) and prints a Markdown table.
#   Scripts/bench/snapshot/run.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
harness=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-sshd.XXXXXX")
out=$(mktemp)
trap 'bash Scripts/sshd-harness.sh stop "$harness" >/dev/null 2>&1; rm -rf "$harness" "$out"' EXIT
bash Scripts/sshd-harness.sh start "$harness" >/dev/null
HOSTSCOPE_TEST_SSH_DIR="$harness" HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_ITERATIONS="${1:-200}" HOSTSCOPE_BENCH_OUT="$out" \
    swift test -c release -Xswiftc -enable-testing --filter SnapshotBenchmarks >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cat "$out"
echo
echo "machine: $(nproc) cores, $(uname -r), $(ssh -V 2>&1), libssh2 $(pkg-config --modversion libssh2)"
