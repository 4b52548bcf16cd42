#!/usr/bin/env bash
# Watch benchmark: N OpenSSH servers on loopback watched every 5 s for 2 minutes by hostscope and
# by an asyncssh loop doing the same, plus one cold snapshot of all of them; prints a table.
#   Scripts/bench/watch/run.sh [N] [SECONDS]     (default 100 hosts, 120 s)
set -euo pipefail
cd "$(dirname "$0")/../../.."
count=${1:-100}
seconds=${2:-120}
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-watch.XXXXXX")
# sshd reads the keys below as the test user: the directory must be traversable.
chmod 755 "$work"
trap 'bash Scripts/bench/watch/fleet.sh stop "$work" >/dev/null 2>&1; [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"' EXIT
python3 -c 'import asyncssh' 2>/dev/null || python3 -m pip install --quiet --root-user-action=ignore asyncssh
swift build -c release --product hostscope >/dev/null
bin=.build/release/hostscope
bash Scripts/bench/watch/fleet.sh start "$work" "$count" >/dev/null
source "$work/base/env"
measure=Scripts/bench/watch/measure.py

python3 $measure "$work/cold.json" -- $bin snapshot 'fleet-*' -F "$work/ssh_config" -o ndjson --top 5 >"$work/cold.ndjson"
python3 $measure "$work/hostscope.json" -- $bin watch 'fleet-*' -F "$work/ssh_config" --every 5s --for "${seconds}s" \
    -o "$work/hostscope.ndjson" --no-history
python3 $measure "$work/python.json" -- python3 Scripts/bench/watch/asyncssh_watch.py "$work/hosts.txt" \
    "$work/base/id_ed25519" "$work/known_hosts" "$HOSTSCOPE_TEST_SSH_USER" 5 "$seconds" "$work/python.ndjson"
python3 Scripts/bench/watch/report.py "$work" "$count" "$seconds"
