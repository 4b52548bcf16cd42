#!/usr/bin/env bash
# Files benchmark: listing a 10,000-entry directory next to OpenSSH `sftp -b` doing `ls -l`,
# downloading a 200 MB file next to `sftp` get, and `files cat --tail 100` of a 1 GB log.
# Starts its own loopback sshd (Scripts/sshd-harness.sh) and prints a Markdown table.
#   Scripts/bench/files/run.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
harness=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-sshd.XXXXXX")
out=$(mktemp)
trap 'bash Scripts/sshd-harness.sh stop "$harness" >/dev/null 2>&1; rm -rf "$harness" "$out" "$out.log"' EXIT
bash Scripts/sshd-harness.sh start "$harness" >/dev/null
swift build -c release -Xswiftc -enable-testing --build-tests >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
HOSTSCOPE_TEST_SSH_DIR="$harness" HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_ITERATIONS="${1:-7}" HOSTSCOPE_BENCH_OUT="$out" \
    swift test -c release -Xswiftc -enable-testing --skip-build --filter FilesBenchmarks >>"$out.log" 2>&1 \
    || { cat "$out.log"; exit 1; }
cat "$out"
echo
echo "machine: $(nproc) cores, $(uname -r), $(ssh -V 2>&1), libssh2 $(pkg-config --modversion libssh2)"
