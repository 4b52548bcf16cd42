#!/usr/bin/env bash
# What a watch tick costs the host, before and after the node_exporter parity families, in one run, by the
# cgroup method of docs/benchmarks.md: a harness sshd started inside a `cpuacct` cgroup (v1) of its own, so
# that its sessions and every probe they run are counted there and the client is not. The sshd also runs in a
# PID namespace of its own holding PROCS processes in all (default 100), so the host the probe sees has the
# same number of processes whatever else runs on this machine. Root only.
#
#   Scripts/bench/parity/host_cost.sh AFTER [BEFORE] [TICKS] [ROUNDS]
#
# AFTER and BEFORE are two hostscope binaries (BEFORE: a build from before the parity families, e.g.
# a686ea6; leave it out to measure AFTER alone). Each round runs, alternating, `hostscope watch` of the host
# every 250 ms for TICKS ticks with:
#   before     BEFORE as it is
#   after      AFTER as it is (the textfile directory is Debian's default; absent or empty, it costs a stat)
#   textfiles  AFTER with --textfile-directory holding FILES *.prom files of 20 samples each
# and prints for each the host's CPU per tick on an open connection (the cgroup's usage over the run less that
# of a one-tick watch, over TICKS - 1; the one-tick watch's own figure is the connection's cost and its first
# tick's) and the bytes the probe sent per tick (the median over the ticks of the
# stdout bytes of the tick's `ssh exec` spans, from the run's own database). Then, for each binary, the bytes
# the host's processes read per tick: one more watch (every 5 s, READ_TICKS ticks, default 6) with the sshd's processes under
# `strace -f`, summing the return values of read(2) on every file under /proc, /sys and the textfile directory, over the ticks that
# made a record (the first tick's connection and the host's start-up reads are in it, as in the CPU figure).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
after=${1:?usage: host_cost.sh AFTER [BEFORE] [TICKS] [ROUNDS]}
before=${2:-}
ticks=${3:-40}
rounds=${4:-3}
files=${FILES:-4}
read_ticks=${READ_TICKS:-6}
procs=${PROCS:-100}
work=$(mktemp -d /tmp/hostscope-hostcost.XXXXXX)
group=/sys/fs/cgroup/cpuacct/hostscope-hostcost-$$
mkdir -p "$group"
namespace_pid=
cleanup() {
    [[ -n "$namespace_pid" ]] && kill -9 "$namespace_pid" 2>/dev/null || true
    sleep 0.5
    rmdir "$group" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
# The namespace's first process joins the cgroup, starts the harness, fills the namespace up to PROCS
# processes with sleepers and stays (when it ends, the namespace ends).
cat >"$work/host.sh" <<HOST
echo \$\$ >"$group/cgroup.procs"
bash "$root/Scripts/sshd-harness.sh" start "$work/h" >/dev/null
for _ in \$(seq \$(( $procs - \$(ls -d /proc/[0-9]* | wc -l) - 1 ))); do sleep 100000 & done
touch "$work/ready"
wait
HOST
unshare --pid --fork --kill-child --mount-proc bash "$work/host.sh" &
namespace_pid=$!
disown "$namespace_pid"
for _ in $(seq 600); do [[ -f "$work/ready" ]] && break; sleep 0.1; done
[[ -f "$work/ready" ]] || { echo "the harness did not start in its namespace" >&2; exit 1; }
source "$work/h/env"
mkdir -p "$work/textfiles"
for i in $(seq "$files"); do
    for j in $(seq 20); do echo "bench_job_value{job=\"j$i\",n=\"$j\"} $j"; done >"$work/textfiles/job$i.prom"
done
chmod -R a+rX "$work/textfiles"
cat >"$work/ssh_config" <<CONFIG
Host bench
    HostName $HOSTSCOPE_TEST_SSH_HOST
    Port $HOSTSCOPE_TEST_SSH_PORT
    User $HOSTSCOPE_TEST_SSH_USER
    IdentityFile $HOSTSCOPE_TEST_SSH_DIR/id_ed25519
    UserKnownHostsFile $HOSTSCOPE_TEST_SSH_DIR/known_hosts
CONFIG
usage() { cat "$group/cpuacct.usage"; }
# watch BINARY DB EVERY COUNT [OPTIONS...]: COUNT records of the host into DB; prints the number of records.
watch() {
    local binary=$1 db=$2 every=$3 count=$4
    shift 4
    rm -f "$db" "$db"-*
    "$binary" watch bench -F "$work/ssh_config" --every "$every" --count "$count" -f ndjson --db "$db" "$@" 2>/dev/null |
        grep -c '"schema"'
}
bytes_per_tick() {
    sqlite3 "$1" "select sum(json_extract(json, '$.attributes.\"hostscope.process.stdout.bytes\"')) from span
        where name = 'ssh exec' and trace_id in (select trace_id from span where name = 'collect snapshot')
        group by trace_id order by 1" | awk '{ v[NR] = $1 } END { printf "%d", v[int((NR + 1) / 2)] }'
}
run() {
    local binary=$1 start middle stop records
    shift
    # One watch of a single tick (the connection, the authentication and the first tick), then one of TICKS:
    # the difference over TICKS - 1 is a tick's cost on a connection already open, as in a running watch.
    start=$(usage)
    watch "$binary" "$work/run.sqlite" 250ms 1 "$@" >/dev/null
    middle=$(usage)
    records=$(watch "$binary" "$work/run.sqlite" 250ms "$ticks" "$@")
    stop=$(usage)
    awk -v a="$start" -v b="$middle" -v c="$stop" -v n="$records" -v bytes="$(bytes_per_tick "$work/run.sqlite")" \
        'BEGIN { printf "%.2f ms per tick (connection and first tick %.1f ms), %d bytes per tick", (c - b - (b - a)) / (n - 1) / 1e6, (b - a) / 1e6, bytes }'
}
echo "processes on the host (its PID namespace): $procs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    line="round $round:"
    [[ -n "$before" ]] && line+=" before $(run "$before");"
    line+=" after $(run "$after"); textfiles $(run "$after" --textfile-directory "$work/textfiles")"
    echo "$line"
done
# reads BINARY [OPTIONS...]: bytes read from /proc and /sys per tick by the host's processes.
reads() {
    local binary=$1 listener records
    shift
    listener=$(pgrep -f "sshd -f $work/h/sshd_config" | head -1)
    strace -f -qq -y -p "$listener" -e trace=read -o "$work/strace" &
    local tracer=$!
    sleep 1
    watch "$binary" "$work/reads.sqlite" 5s "$read_ticks" --timeout 4s --connect-timeout 20s "$@" >/dev/null
    kill -INT "$tracer"
    wait "$tracer" 2>/dev/null || true
    # Under strace a tick can miss its limit: only the ticks that made a record count.
    records=$(sqlite3 "$work/reads.sqlite" "select count(*) from span where name = 'collect snapshot' and status_code != 2")
    python3 - "$work/strace" "$records" "$work/textfiles" <<'PY'
import re, sys
# With -y each read names its file: `PID read(3</proc/stat>, ...) = N`; a read another process interrupted
# ends on a later `PID <... read resumed> ...) = N` line.
pending, total = {}, 0
for line in open(sys.argv[1], errors="replace"):
    pid = line.split(None, 1)[0]
    m = re.search(r"read\(\d+<([^>]*)>", line)
    path = m.group(1) if m else None
    if line.rstrip().endswith("<unfinished ...>"):
        pending[pid] = path
        continue
    if "resumed>" in line:
        path = pending.pop(pid, None)
    m = re.search(r"\) = (\d+)$", line.rstrip())
    if m and path and path.startswith(("/proc", "/sys", sys.argv[3])):
        total += int(m.group(1))
print(f"{total / int(sys.argv[2]) / 1024:.1f} KiB read from /proc, /sys and the textfiles per tick ({sys.argv[2]} ticks)")
PY
}
[[ -n "$before" ]] && echo "before: $(reads "$before")"
echo "after: $(reads "$after")"
echo "textfiles: $(reads "$after" --textfile-directory "$work/textfiles")"
