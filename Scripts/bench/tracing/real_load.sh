#!/usr/bin/env bash
# What hostscope really records, and what its tracer costs for it. A watch of HOSTS host aliases (all
# pointing at one OpenSSH server on loopback) every EVERY for SECONDS, then a chat session with tool calls
# against Scripts/llm_mock_server.py on one of those hosts; both store their spans in SQLite. It counts the
# spans per minute and the attributes per span they stored, records those same spans again through the
# tracer in a release build (TracingLoadBenchmarks), and prints what that costs as a share of each
# workload's own CPU. See README.md.
#   Scripts/bench/tracing/real_load.sh [HOSTS] [SECONDS] [EVERY]    (default 300 hosts, 120 s, 5s)
# HOSTSCOPE_BIN runs another build of hostscope for the workloads (the replay always uses this tree).
set -euo pipefail
cd "$(dirname "$0")/../../.."
hosts=${1:-300}
seconds=${2:-120}
every=${3:-5s}
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-trace-load.XXXXXX")
# sshd reads the harness keys as the test user, and the chat's file tools read $work/files: traversable.
chmod 755 "$work"
mock_pid=
cleanup() {
    if [[ -n $mock_pid ]]; then
        # Closing its standard input ends the mock server (--exit-on-stdin-eof).
        eval "exec ${mock_stdin}>&-"
        wait "$mock_pid" 2>/dev/null || true
    fi
    bash Scripts/sshd-harness.sh stop "$work/harness" >/dev/null 2>&1 || true
    [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT

# One release build serves both: the test build (testable imports on, as run.sh builds it) includes hostscope.
env -u HOSTSCOPE_BENCH_REPLAY swift test -c release --filter TracingLoadBenchmarks >"$work/build.log" 2>&1 \
    || { cat "$work/build.log"; exit 1; }
bin=${HOSTSCOPE_BIN:-.build/release/hostscope}
measure=Scripts/bench/watch/measure.py

bash Scripts/sshd-harness.sh start "$work/harness" >/dev/null
source "$work/harness/env"
bash Scripts/bench/alias_config.sh "$hosts" "$work/harness" >"$work/ssh_config"

# The watch: every host's spans go to watch.sqlite, as `hostscope watch` stores them by default.
python3 $measure "$work/watch.json" -- "$bin" watch 'fleet-*' -F "$work/ssh_config" --every "$every" \
    --for "${seconds}s" -o "$work/watch.ndjson" --db "$work/watch.sqlite"

# The chat session: three turns whose model asks for tools, answered by the mock server's recorded streams.
mkdir -p "$work/files/logs"
printf 'deploy notes\nrotate the logs weekly\n' >"$work/files/notes.txt"
for line in $(seq 1 200); do echo "2026-11-18T10:$((line % 60)):00Z INFO request $line served"; done \
    >"$work/files/logs/app.log"
echo "2026-11-18T10:59:59Z ERROR disk almost full" >>"$work/files/logs/app.log"
chmod -R a+rX "$work/files"
coproc MOCK { exec python3 Scripts/llm_mock_server.py --port 0 --exit-on-stdin-eof 2>"$work/mock.log"; }
mock_pid=$MOCK_PID
mock_stdin=${MOCK[1]}
read -r ready <&"${MOCK[0]}"
port=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["port"])' "$ready")
turn=0
for scenario in host-files tool-loop parallel-tools; do
    turn=$((turn + 1))
    OPENAI_API_KEY=bench-key python3 $measure "$work/chat-$turn.json" -- "$bin" chat --host fleet-000 \
        -F "$work/ssh_config" --root "$work/files" --provider openai --base-url "http://127.0.0.1:$port/v1" \
        --model "mock-$scenario" --message "Why is the disk filling up?" --jsonl --db "$work/chat.sqlite" \
        >"$work/chat-$turn.jsonl"
done

"$bin" trace export --format spans --db "$work/watch.sqlite" >"$work/watch-spans.jsonl"
"$bin" trace export --format spans --db "$work/chat.sqlite" >"$work/chat-spans.jsonl"

HOSTSCOPE_BENCH_REPLAY="$work/watch-spans.jsonl:$work/chat-spans.jsonl" HOSTSCOPE_BENCH_OUT="$work/replay.json" \
    swift test -c release --filter TracingLoadBenchmarks >"$work/replay.log" 2>&1 || { cat "$work/replay.log"; exit 1; }
python3 Scripts/bench/tracing/load_report.py "$work" "$hosts" "$seconds" "$every"
