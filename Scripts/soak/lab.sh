#!/usr/bin/env bash
# A fleet of real sshds for the soak test, one per network namespace, each behind its own veth link so
# that a fault (a link down, netem loss and delay, a stopped or restarted sshd) touches one host only.
# Root only; needs iproute2 and OpenSSH's sshd.
#
#   Scripts/soak/lab.sh up LAB [COUNT]   build COUNT hosts (default 50) under directory LAB; writes
#                                        LAB/ssh_config (Host soak-1 … soak-COUNT), LAB/known_hosts,
#                                        LAB/hosts.txt and LAB/env
#   Scripts/soak/lab.sh down LAB         stop every sshd of LAB, delete its namespaces and links
#   Scripts/soak/lab.sh stop-sshd LAB I  end host I's sshd and every connection it serves (a host going down)
#   Scripts/soak/lab.sh start-sshd LAB I start host I's sshd again (same address and host key)
#
# Host I (1-based) is namespace hsoak-I, reached at 10.233.I.2 over the link hsoak-I-r (root side,
# 10.233.I.1/24) and eth0 inside. Every host shares one host key and the user and client keys of a
# Scripts/sshd-harness.sh harness in LAB/base (started once, then its own loopback sshd stopped).
set -Eeuo pipefail

command=${1:-}
lab=${2:-}
if [[ -z $command || -z $lab ]]; then
    echo "usage: $0 up LAB [COUNT] | down LAB | stop-sshd LAB I | start-sshd LAB I" >&2
    exit 2
fi
scripts=$(cd "$(dirname "$0")/.." && pwd)
sshd_bin=$(command -v sshd || echo /usr/sbin/sshd)

namespace() { echo "hsoak-$1"; }
address() { echo "10.233.$1.2"; }

start_sshd() {
    local index=$1 dir="$lab/hosts/$1"
    ip netns exec "$(namespace "$index")" "$sshd_bin" -f "$dir/sshd_config" -E "$dir/sshd.log"
    for _ in $(seq 1 100); do
        if [[ -s $dir/sshd.pid ]] &&
            ip netns exec "$(namespace "$index")" bash -c "exec 3<>/dev/tcp/$(address "$index")/22" 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    echo "sshd of host $index did not start; see $dir/sshd.log" >&2
    return 1
}

# Ends the listener and its descendants, as a host going down would (sshd-harness.sh says how).
stop_sshd() {
    bash "$scripts/sshd-harness.sh" stop-sshd "$lab/hosts/$1"
}

down() {
    local dir
    for dir in "$lab"/hosts/*; do
        [[ -d $dir ]] && stop_sshd "$(basename "$dir")"
    done
    local name
    for name in $(ip netns list | awk '/^hsoak-[0-9]+/ {print $1}'); do
        local pids
        pids=$(ip netns pids "$name" 2>/dev/null || true)
        [[ -n $pids ]] && kill -KILL $pids 2>/dev/null || true
        ip netns del "$name" 2>/dev/null || true
    done
    for name in $(ip -o link show | awk -F': ' '/hsoak-[0-9]+-r/ {sub(/@.*/, "", $2); print $2}'); do
        ip link del "$name" 2>/dev/null || true
    done
    [[ -d $lab/base ]] && bash "$scripts/sshd-harness.sh" stop "$lab/base" >/dev/null 2>&1 || true
}

case $command in
up)
    count=${3:-50}
    mkdir -p "$lab"
    lab=$(cd "$lab" && pwd)
    down
    bash "$scripts/sshd-harness.sh" start "$lab/base" >/dev/null
    # Only its users and keys are needed; the loopback sshd and agent would be one more process to account for.
    bash "$scripts/sshd-harness.sh" stop "$lab/base"
    # shellcheck disable=SC1091
    source "$lab/base/env"
    : >"$lab/known_hosts"
    : >"$lab/ssh_config"
    : >"$lab/hosts.txt"
    for index in $(seq 1 "$count"); do
        ns=$(namespace "$index")
        ip netns add "$ns"
        ip link add "$ns-r" type veth peer name eth0 netns "$ns"
        ip addr add "10.233.$index.1/24" dev "$ns-r"
        ip link set "$ns-r" up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "$(address "$index")/24" dev eth0
        ip -n "$ns" link set eth0 up
        dir="$lab/hosts/$index"
        mkdir -p "$dir"
        sed -e "s/^Port .*/Port 22/" -e "s/^ListenAddress .*/ListenAddress $(address "$index")/" \
            -e "s|^PidFile .*|PidFile $dir/sshd.pid|" -e "s/^LogLevel .*/LogLevel ERROR/" \
            "$lab/base/sshd_config" >"$dir/sshd_config"
        start_sshd "$index"
        echo "$(address "$index") $(cut -d' ' -f1-2 "$lab/base/ssh_host_ed25519_key.pub")" >>"$lab/known_hosts"
        printf 'Host soak-%s\n    HostName %s\n    User %s\n    IdentityFile %s\n    IdentitiesOnly yes\n' \
            "$index" "$(address "$index")" "$HOSTSCOPE_TEST_SSH_USER" "$lab/base/id_ed25519" >>"$lab/ssh_config"
        echo "soak-$index" >>"$lab/hosts.txt"
    done
    echo "LAB=$lab" >"$lab/env"
    echo "COUNT=$count" >>"$lab/env"
    echo "$count hosts up: ssh_config in $lab/ssh_config"
    ;;
down) down ;;
stop-sshd) stop_sshd "$3" ;;
start-sshd) start_sshd "$3" ;;
*)
    echo "usage: $0 up LAB [COUNT] | down LAB | stop-sshd LAB I | start-sshd LAB I" >&2
    exit 2
    ;;
esac
