#!/usr/bin/env bash
# Chat benchmark: time to first token through the HTTP client, SSE parser and provider decoder next to the
# same client reading raw bytes and to `curl -N`, and the rate at which a 10,000-chunk stream is consumed,
# in memory and over loopback HTTP from Scripts/llm_mock_server.py; then what the terminal's Markdown renderer
# adds (ChatRenderingBenchmarks). Prints a Markdown table.
#   Scripts/bench/chat/run.sh [ITERATIONS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
out=$(mktemp)
trap 'rm -f "$out" "$out.log"' EXIT
HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_ITERATIONS="${1:-200}" HOSTSCOPE_BENCH_OUT="$out" \
    swift test -c release -Xswiftc -enable-testing --filter 'ChatBenchmarks|ChatRenderingBenchmarks' >"$out.log" 2>&1 || { cat "$out.log"; exit 1; }
cat "$out"
echo
echo "machine: $(nproc) cores, $(uname -r), $(curl --version | head -1 | cut -d' ' -f1-2), python $(python3 -c 'import platform; print(platform.python_version())')"
