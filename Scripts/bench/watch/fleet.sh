#!/usr/bin/env bash
# Starts N OpenSSH servers on loopback that stand in for a fleet, sharing one host key and one
# test user, with an ssh_config naming them fleet-000 … and a known_hosts for all of them.
#   Scripts/bench/watch/fleet.sh start DIR [N]    (default N=100)
#   Scripts/bench/watch/fleet.sh stop DIR
#   FLEET_CGROUP=1 puts the servers (and so every session and probe they run) in a CPU cgroup of the
#   smallest weight, hostscope-fleet: the fleet then takes the CPU the client and its scrapers leave,
#   as hosts on other machines would. (Neither a niceness nor SCHED_IDLE is enough: 300 runnable sshds
#   at niceness 19, or their probes' kernel time, still outweigh one process at niceness 0.) Root only;
#   cgroup v2 or v1's cpu controller.
set -euo pipefail
command=${1:?usage: $0 start|stop DIR [N]}
dir=${2:?usage: $0 start|stop DIR [N]}
count=${3:-100}
root=$(cd "$(dirname "$0")/../../.." && pwd)

if [[ $command == stop ]]; then
    for pidfile in "$dir"/fleet/*/sshd.pid; do
        [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    bash "$root/Scripts/sshd-harness.sh" stop "$dir/base" >/dev/null 2>&1 || true
    exit 0
fi

bash "$root/Scripts/sshd-harness.sh" start "$dir/base" >/dev/null
source "$dir/base/env"
if [[ -n ${FLEET_CGROUP:-} ]]; then
    # The shell joins the cgroup, so that every sshd started below is in it from its start.
    if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
        group=/sys/fs/cgroup/hostscope-fleet
        mkdir -p "$group"
        echo 1 >"$group/cpu.weight"
    else
        group=/sys/fs/cgroup/cpu/hostscope-fleet
        mkdir -p "$group"
        echo 2 >"$group/cpu.shares"
    fi
    echo $$ >"$group/cgroup.procs"
fi
base=$dir/base
: >"$dir/known_hosts"
: >"$dir/ssh_config"
mkdir -p "$dir/fleet"
for index in $(seq 0 $((count - 1))); do
    name=$(printf 'fleet-%03d' "$index")
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$dir/fleet/$name"
    sed -e "s|^Port .*|Port $port|" -e "s|^PidFile .*|PidFile $dir/fleet/$name/sshd.pid|" \
        "$base/sshd_config" >"$dir/fleet/$name/sshd_config"
    /usr/sbin/sshd -f "$dir/fleet/$name/sshd_config" -E "$dir/fleet/$name/sshd.log"
    echo "[127.0.0.1]:$port $(cut -d' ' -f1-2 "$base/ssh_host_ed25519_key.pub")" >>"$dir/known_hosts"
    cat >>"$dir/ssh_config" <<CONFIG
Host $name
    HostName 127.0.0.1
    Port $port
    User $HOSTSCOPE_TEST_SSH_USER
    IdentityFile $base/id_ed25519
    IdentitiesOnly yes
    UserKnownHostsFile $dir/known_hosts
CONFIG
    echo "$name 127.0.0.1 $port" >>"$dir/hosts.txt"
done
# Wait until every server accepts connections.
while read -r _ _ port; do
    for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.05; done
done <"$dir/hosts.txt"
echo "$count sshd instances up; ssh_config in $dir/ssh_config"
