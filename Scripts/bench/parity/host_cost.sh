#!/usr/bin/env bash
# Host CPU per watch tick by the cgroup method of docs/benchmarks.md: a harness sshd started inside a
# `cpuacct` cgroup (v1) of its own, so that its sessions and every probe they run are counted there and the
# client is not; `hostscope watch` ticks it ROUNDS times per variant, the variants alternating:
#   textfiles  the textfile directory holding FILES *.prom files of 20 samples each (read every tick)
#   none       --textfile-directory pointing nowhere (no stat, no textfile read)
# and, in the same cgroup, the cost of one read of /proc/net/stat/nf_conntrack (the conntrack statistics
# the parity work added) against an empty read, over READS reads. Root only.
#   Scripts/bench/parity/host_cost.sh [HOSTSCOPE] [TICKS] [ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
binary=${1:-$root/.build/debug/hostscope}
ticks=${2:-40}
rounds=${3:-3}
files=${FILES:-4}
reads=${READS:-2000}
work=$(mktemp -d /tmp/hostscope-hostcost.XXXXXX)
group=/sys/fs/cgroup/cpuacct/hostscope-hostcost-$$
mkdir -p "$group"
cleanup() {
    bash "$root/Scripts/sshd-harness.sh" stop "$work/h" >/dev/null 2>&1 || true
    sleep 0.5
    rmdir "$group" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
# The harness's sshd joins the cgroup from its start.
(echo $BASHPID >"$group/cgroup.procs"; bash "$root/Scripts/sshd-harness.sh" start "$work/h" >/dev/null)
source "$work/h/env"
mkdir -p "$work/textfiles" && chmod 755 "$work" "$work/textfiles"
for i in $(seq "$files"); do
    for j in $(seq 20); do echo "bench_job_value{job=\"j$i\",n=\"$j\"} $j"; done >"$work/textfiles/job$i.prom"
done
cat >"$work/ssh_config" <<CONFIG
Host bench
    HostName $HOSTSCOPE_TEST_SSH_HOST
    Port $HOSTSCOPE_TEST_SSH_PORT
    User $HOSTSCOPE_TEST_SSH_USER
    IdentityFile $HOSTSCOPE_TEST_SSH_DIR/id_ed25519
    UserKnownHostsFile $HOSTSCOPE_TEST_SSH_DIR/known_hosts
CONFIG
usage() { cat "$group/cpuacct.usage"; }
run() {
    local directory=$1 before after records
    before=$(usage)
    records=$("$binary" watch bench -F "$work/ssh_config" --every 250ms --count "$ticks" --no-history -f ndjson \
        --textfile-directory "$directory" | grep -c '"schema"')
    after=$(usage)
    # The first tick connects (authentication is the host's largest cost): left in, as for every variant.
    awk -v b="$before" -v a="$after" -v n="$records" 'BEGIN { printf "%.2f ms per tick (%d ticks)", (a - b) / n / 1e6, n }'
}
echo "processes on the host: $(ps -e --no-headers | wc -l); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
    echo "round $round: textfiles $(run "$work/textfiles"); none $(run /nonexistent/textfiles)"
done
read_cost() {
    local file=$1 before after
    before=$(usage)
    (echo $BASHPID >"$group/cgroup.procs"; for _ in $(seq "$reads"); do read -r -d '' _ <"$file" || true; done)
    after=$(usage)
    awk -v b="$before" -v a="$after" -v n="$reads" 'BEGIN { printf "%.1f µs", (a - b) / n / 1e3 }'
}
for round in $(seq "$rounds"); do
    echo "one read of /proc/net/stat/nf_conntrack: $(read_cost /proc/net/stat/nf_conntrack); of /dev/null: $(read_cost /dev/null)"
done
echo "bytes: /proc/net/stat/nf_conntrack $(wc -c </proc/net/stat/nf_conntrack), the textfiles $(cat "$work"/textfiles/*.prom | wc -c)"
