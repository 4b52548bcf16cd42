#!/usr/bin/env bash
# A small network of SSH hosts in network namespaces, for the bastion tests: hosts the test process
# (in the root namespace) cannot reach except through a jump host. Root only; needs iproute2.
#
#   Scripts/netns-lab.sh up LAB BASE OWNER   build lab LAB (a directory) for the harness started in BASE
#                                            (Scripts/sshd-harness.sh start); OWNER is the pid of the
#                                            process using it: when it ends, the lab is taken down and
#                                            LAB removed; writes LAB/env
#   Scripts/netns-lab.sh down LAB            stop its servers, delete its namespaces and links
#   Scripts/netns-lab.sh sweep               take down labs whose owner process has ended
#
# The network, N being the lab's number (the first one free, so several runs can coexist):
#
#   root 10.231.N.1 ── 10.231.N.2  b1 (jump host, sshd :22)
#                      10.231.N.5  ──── 10.231.N.6   in (targets: sshd :22 and :2222; :2299 accepts
#                                                        TCP and never answers; :2298 never accepts)
#                      10.231.N.9  ──── 10.231.N.10  b2 (second jump host, sshd :22)
#                                       10.231.N.13 ──── 10.231.N.14 dp (target behind b2, sshd :22)
#
# Every link is a veth pair with a /30 on it, no namespace forwards, and none has a route beyond its
# own links: from the root namespace only b1 answers (the rest of 10.231.N.0/24 is an unreachable
# route there, so nothing aimed at the lab leaves the machine), from b1 only its three neighbours.
set -Eeuo pipefail

# Descriptors inherited from the caller (a test runner's pipes) must not live on in the servers and the
# watcher started here: the caller would wait for them to close. (255 is bash's own copy of this script.)
for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    if ((fd > 2 && fd < 255)); then eval "exec $fd>&-" 2>/dev/null || true; fi
done

registry=/run/hostscope-labs
command=${1:-}

usage() {
    echo "usage: $0 up LAB BASE OWNER | down LAB | sweep" >&2
    exit 2
}

# Takes down the lab whose number is $1, using its registry entry.
down_index() {
    local index=$1 lab=""
    [[ -f "$registry/$index" ]] && lab=$(sed -n 2p "$registry/$index")
    if [[ -n "$lab" && -d "$lab" ]]; then
        for server in "$lab"/sshd-*; do
            [[ -d "$server" ]] && bash "$(dirname "$0")/sshd-harness.sh" stop "$server"
        done
        if [[ -f "$lab/silent.pid" ]]; then
            kill "$(cat "$lab/silent.pid")" 2>/dev/null || true
            rm -f "$lab/silent.pid"
        fi
    fi
    local namespace
    for namespace in b1 in b2 dp; do
        namespace="hsl$index-$namespace"
        if ip netns list | grep -qw "$namespace"; then
            # Anything still running inside would keep the namespace alive.
            local pids
            pids=$(ip netns pids "$namespace" 2>/dev/null || true)
            [[ -n "$pids" ]] && kill -KILL $pids 2>/dev/null || true
            ip netns del "$namespace" 2>/dev/null || true
        fi
    done
    ip link del "hsl$index-r" 2>/dev/null || true
    ip route del unreachable "10.231.$index.0/24" 2>/dev/null || true
    rm -f "$registry/$index"
}

sweep() {
    [[ -d "$registry" ]] || return 0
    local entry owner
    for entry in "$registry"/*; do
        [[ -f "$entry" ]] || continue
        owner=$(sed -n 1p "$entry")
        if [[ -z "$owner" ]] || ! kill -0 "$owner" 2>/dev/null; then
            down_index "$(basename "$entry")"
        fi
    done
}

case "$command" in
up)
    lab=${2:-}
    base=${3:-}
    owner=${4:-}
    [[ -n "$lab" && -n "$base" && -n "$owner" ]] || usage
    if [[ $(id -u) -ne 0 ]]; then
        echo "the lab needs root (network namespaces)" >&2
        exit 3
    fi
    if ! command -v ip >/dev/null || ! ip netns list >/dev/null 2>&1; then
        echo "ip netns is not available: install iproute2 (Scripts/setup.sh --tests does)" >&2
        exit 3
    fi
    sweep
    mkdir -p "$lab" "$registry"
    lab=$(cd "$lab" && pwd)
    # Claim the first free number: creating the registry entry with noclobber is the lock.
    index=""
    for candidate in $(seq 0 250); do
        if (set -o noclobber && printf '%s\n%s\n' "$owner" "$lab" >"$registry/$candidate") 2>/dev/null; then
            index=$candidate
            break
        fi
    done
    if [[ -z "$index" ]]; then
        echo "no free lab number; run '$0 sweep'" >&2
        exit 1
    fi
    trap 'down_index "$index"' ERR
    net="10.231.$index"
    for namespace in b1 in b2 dp; do
        ip netns add "hsl$index-$namespace"
        ip -n "hsl$index-$namespace" link set lo up
        ip netns exec "hsl$index-$namespace" sysctl -qw net.ipv4.ip_forward=0
    done
    # link NAME_A NS_A ADDRESS_A NAME_B NS_B ADDRESS_B (NS_A empty: the root namespace)
    link() {
        local a=$1 ns_a=$2 address_a=$3 b=$4 ns_b=$5 address_b=$6
        if [[ -z "$ns_a" ]]; then
            ip link add "$a" type veth peer name "$b" netns "$ns_b"
            ip addr add "$address_a/30" dev "$a"
            ip link set "$a" up
        else
            ip -n "$ns_a" link add "$a" type veth peer name "$b" netns "$ns_b"
            ip -n "$ns_a" addr add "$address_a/30" dev "$a"
            ip -n "$ns_a" link set "$a" up
        fi
        ip -n "$ns_b" addr add "$address_b/30" dev "$b"
        ip -n "$ns_b" link set "$b" up
    }
    # The rest of the lab's addresses lead nowhere from here: without this they would follow the default
    # route off the machine.
    ip route add unreachable "$net.0/24"
    link "hsl$index-r" "" "$net.1" uplink "hsl$index-b1" "$net.2"
    link to-in "hsl$index-b1" "$net.5" uplink "hsl$index-in" "$net.6"
    link to-b2 "hsl$index-b1" "$net.9" uplink "hsl$index-b2" "$net.10"
    link to-dp "hsl$index-b2" "$net.13" uplink "hsl$index-dp" "$net.14"

    harness="$(dirname "$0")/sshd-harness.sh"
    bash "$harness" start-netns "$lab/sshd-b1" "hsl$index-b1" "$net.2" 22 "$base"
    bash "$harness" start-netns "$lab/sshd-in" "hsl$index-in" "$net.6" 22 "$base"
    bash "$harness" start-netns "$lab/sshd-in2" "hsl$index-in" "$net.6" 2222 "$base"
    bash "$harness" start-netns "$lab/sshd-b2" "hsl$index-b2" "$net.10" 22 "$base"
    bash "$harness" start-netns "$lab/sshd-dp" "hsl$index-dp" "$net.14" 22 "$base"
    # A host that accepts TCP connections and never says a word (the kernel completes the handshake
    # for a listening socket that nobody accepts from), and one whose accept queue is kept full, so a
    # connection to it is never even accepted (its SYNs are dropped, as a firewall would).
    ip netns exec "hsl$index-in" python3 -c '
import signal, socket, sys
silent = socket.socket()
silent.bind(("0.0.0.0", 2299))
silent.listen(64)
full = socket.socket()
full.bind(("0.0.0.0", 2298))
full.listen(0)
filler = socket.create_connection(("127.0.0.1", 2298))
open(sys.argv[1], "w").close()
signal.pause()
' "$lab/silent.ready" </dev/null >/dev/null 2>&1 &
    echo $! >"$lab/silent.pid"
    # Tests start as soon as this script returns: both ports must be listening (and 2298's queue full) by then.
    for _ in $(seq 50); do
        [[ -f "$lab/silent.ready" ]] && break
        sleep 0.1
    done
    [[ -f "$lab/silent.ready" ]] || { echo "the silent listeners did not start" >&2; false; }
    cat "$lab"/sshd-*/known_hosts >"$lab/known_hosts"
    cat >"$lab/env" <<ENV
LAB_INDEX=$index
LAB_BASTION=$net.2
LAB_INNER=$net.6
LAB_BASTION2=$net.10
LAB_DEEP=$net.14
LAB_SILENT_PORT=2299
LAB_UNANSWERED_PORT=2298
ENV
    trap - ERR
    # Taken down when its owner ends, however it ends (a crashed test run included); nothing is left to
    # the owner's own exit path.
    setsid bash -c "while kill -0 $owner 2>/dev/null; do sleep 0.5; done; bash '$0' down '$lab'; rm -rf '$lab'" \
        </dev/null >/dev/null 2>&1 &
    echo "lab $index up in $lab"
    ;;
down)
    lab=${2:-}
    [[ -n "$lab" ]] || usage
    [[ -f "$lab/env" ]] || exit 0
    index=$(sed -n 's/^LAB_INDEX=//p' "$lab/env")
    [[ -n "$index" ]] && down_index "$index"
    ;;
sweep)
    sweep
    ;;
*)
    usage
    ;;
esac
