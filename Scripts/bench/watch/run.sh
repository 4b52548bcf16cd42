#!/usr/bin/env bash
# Watch benchmark: N OpenSSH servers on loopback watched every EVERY seconds for SECONDS by
# hostscope, by an asyncssh loop and by ssh2-python threads (libssh2 inside) doing the same work,
# one after another in the same run; plus cold snapshots of all N hosts and of 50 of them (hostscope
# against ssh2-python) and warm ticks on one host. Prints the tables of docs/benchmarks.md.
#   Scripts/bench/watch/run.sh [N] [SECONDS] [EVERY]     (default 100 hosts, 120 s, every 5 s)
#   PEERS=0 skips the Python peers (for fleets too big for one Python thread each).
set -euo pipefail
cd "$(dirname "$0")/../../.."
count=${1:-100}
seconds=${2:-120}
every=${3:-5}
peers=${PEERS:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-watch.XXXXXX")
# sshd reads the keys below as the test user: the directory must be traversable.
chmod 755 "$work"
trap 'bash Scripts/bench/watch/fleet.sh stop "$work" >/dev/null 2>&1; [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"' EXIT
python3 -c 'import asyncssh, ssh2' 2>/dev/null ||
    python3 -m pip install --quiet --root-user-action=ignore asyncssh ssh2-python
swift build -c release --product hostscope >/dev/null
bin=.build/release/hostscope
# Each session holds a socket; sshd per host needs a few more descriptors.
ulimit -n 65536 2>/dev/null || true
bash Scripts/bench/watch/fleet.sh start "$work" "$count" >/dev/null
source "$work/base/env"
measure=Scripts/bench/watch/measure.py
peer=Scripts/bench/watch/ssh2_watch.py
key=$work/base/id_ed25519
head -50 "$work/hosts.txt" >"$work/hosts50.txt"
echo "{\"count\": $count, \"seconds\": $seconds, \"every\": $every, \"peers\": $peers}" >"$work/plan.json"

python3 $measure "$work/cold.json" -- $bin snapshot 'fleet-*' -F "$work/ssh_config" -o ndjson --top 5 >"$work/cold.ndjson"
if [[ $count -ge 50 && $peers == 1 ]]; then
    python3 $measure "$work/cold50.json" -- $bin snapshot 'fleet-00?' 'fleet-01?' 'fleet-02?' 'fleet-03?' 'fleet-04?' \
        -F "$work/ssh_config" -o ndjson --top 5 >"$work/cold50.ndjson"
    python3 $measure "$work/cold50-ssh2.json" -- python3 $peer --snapshot "$work/hosts50.txt" "$key" \
        "$HOSTSCOPE_TEST_SSH_USER" "$work/cold50-ssh2.ndjson"
fi
python3 $measure "$work/hostscope.json" -- $bin watch 'fleet-*' -F "$work/ssh_config" --every "${every}s" \
    --for "${seconds}s" -o "$work/hostscope.ndjson" --no-history
if [[ $peers == 1 ]]; then
    python3 $measure "$work/python.json" -- python3 Scripts/bench/watch/asyncssh_watch.py "$work/hosts.txt" \
        "$key" "$work/known_hosts" "$HOSTSCOPE_TEST_SSH_USER" "$every" "$seconds" "$work/python.ndjson"
    python3 $measure "$work/ssh2.json" -- python3 $peer "$work/hosts.txt" "$key" "$HOSTSCOPE_TEST_SSH_USER" \
        "$every" "$seconds" "$work/ssh2.ndjson"
fi
python3 Scripts/bench/watch/report.py "$work"
echo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r), $(ssh -V 2>&1)"
