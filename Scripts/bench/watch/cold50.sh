#!/usr/bin/env bash
# One cold snapshot of 50 hosts at once, hostscope builds against ssh2-python, alternating, with the
# CPU the hosts spent on each: the fleet's sshds (and so every session, shell and probe they run)
# are in a CPU-accounting cgroup. Root only; cgroup v1 (cpuacct) or v2.
#   Scripts/bench/watch/cold50.sh [ROUNDS] BINARY...     (default 3 rounds; each BINARY a hostscope)
# Per line: wall time, the client's CPU (the process and its children) and the hosts' CPU, in all and
# per host.
set -euo pipefail
cd "$(dirname "$0")/../../.."
rounds=3
if [[ ${1:-} =~ ^[0-9]+$ ]]; then rounds=$1; shift; fi
[[ $# -ge 1 ]] || { echo "usage: $0 [ROUNDS] BINARY..." >&2; exit 2; }
python3 -c 'import ssh2' 2>/dev/null || python3 -m pip install --quiet --root-user-action=ignore ssh2-python
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-cold50.XXXXXX")
chmod 755 "$work"
if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    group=/sys/fs/cgroup/hostscope-cold50
    usage() { awk '$1 == "usage_usec" { print $2 * 1000 }' "$group/cpu.stat"; }
else
    group=/sys/fs/cgroup/cpuacct/hostscope-cold50
    usage() { cat "$group/cpuacct.usage"; }
fi
trap 'bash Scripts/bench/watch/fleet.sh stop "$work" >/dev/null 2>&1; rm -rf "$work"; rmdir "$group" 2>/dev/null || true' EXIT
ulimit -n 65536 2>/dev/null || true
bash Scripts/bench/watch/fleet.sh start "$work" 50 >/dev/null
source "$work/base/env"
mkdir -p "$group"
for pidfile in "$work"/fleet/*/sshd.pid; do cat "$pidfile" >"$group/cgroup.procs"; done

run() {
    local label=$1
    shift
    local before after
    before=$(usage)
    python3 Scripts/bench/watch/measure.py "$work/m.json" -- "$@" >/dev/null
    sleep 0.5 # sessions still closing on the hosts' side
    after=$(usage)
    python3 - "$work/m.json" "$label" "$before" "$after" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
host = (int(float(sys.argv[4])) - int(float(sys.argv[3]))) / 1e9
print("%-28s wall %.2f s  client CPU %.2f s  hosts' CPU %.2f s = %.1f ms per host"
      % (sys.argv[2], m["wall_s"], m["user_s"] + m["sys_s"], host, host * 1000 / 50))
PY
}

for round in $(seq 1 "$rounds"); do
    for binary in "$@"; do
        run "$(basename "$binary")" "$binary" snapshot 'fleet-00?' 'fleet-01?' 'fleet-02?' 'fleet-03?' 'fleet-04?' \
            -F "$work/ssh_config" -o ndjson --top 5
        sleep 1
    done
    run ssh2-python python3 Scripts/bench/watch/ssh2_watch.py --snapshot "$work/hosts.txt" \
        "$work/base/id_ed25519" "$HOSTSCOPE_TEST_SSH_USER" "$work/ssh2.ndjson"
    sleep 1
done
