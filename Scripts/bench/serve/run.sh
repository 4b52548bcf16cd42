#!/usr/bin/env bash
# serve benchmark: N OpenSSH servers on loopback (Scripts/bench/watch/fleet.sh) watched by
# `hostscope serve` every EVERY seconds. After the first round, a window of SECONDS without scrapes,
# then one of SECONDS with wrk scraping /metrics at about RATE a second; in the first window a
# node_exporter (Debian's prometheus-node-exporter) on the same machine is scraped every EVERY
# seconds, so the host-side CPU of a hostscope probe and of a node_exporter scrape are measured side
# by side. Prints the tables of docs/benchmarks.md#serve.
#   Scripts/bench/serve/run.sh [N] [SECONDS] [EVERY] [RATE]   (default 300 hosts, 60 s, every 5 s, 50/s)
#   KEEP_WORK=1 keeps the work directory (the database, wrk's output, serve's log).
#   FLEET_CGROUP=1 runs the fleet's sshds in a CPU cgroup of the smallest weight (Scripts/bench/watch/fleet.sh),
#   so that serve and wrk are measured rather than the wait for two cores the fleet's probes keep busy.
#   wrk asks for gzip as Prometheus does (Accept-Encoding: gzip); ACCEPT_ENCODING= (empty) scrapes
#   the uncompressed document instead.
set -euo pipefail
cd "$(dirname "$0")/../../.."
count=${1:-300}
seconds=${2:-60}
every=${3:-5}
rate=${4:-50}
accept_encoding=${ACCEPT_ENCODING-gzip}
# wrk is a closed loop: CONNECTIONS connections each waiting DELAY_MS between requests make about RATE
# a second (a little less: each cycle also holds the response time).
connections=10
delay_ms=$((connections * 1000 / rate))
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-serve.XXXXXX")
# sshd reads the keys below as the test user: the directory must be traversable.
chmod 755 "$work"
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    bash Scripts/bench/watch/fleet.sh stop "$work" >/dev/null 2>&1
    [[ -n "${KEEP_WORK:-}" ]] || rm -rf "$work"
}
trap cleanup EXIT
command -v wrk >/dev/null && command -v prometheus-node-exporter >/dev/null || {
    echo "wrk and prometheus-node-exporter are needed: bash Scripts/setup.sh --tests" >&2
    exit 1
}
# HOSTSCOPE_BIN names a hostscope built elsewhere; else the release build of this checkout.
bin=${HOSTSCOPE_BIN:-}
if [[ -z $bin ]]; then
    swift build -c release --product hostscope >/dev/null
    bin=.build/release/hostscope
fi
ulimit -n 65536 2>/dev/null || true
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
now() { date +%s.%N; }
cpu() { python3 Scripts/bench/serve/proc_cpu.py "$@"; }

bash Scripts/bench/watch/fleet.sh start "$work" "$count" >/dev/null
sshd_pids=$(cat "$work"/fleet/*/sshd.pid)
port=$(free_port)
# SERVE_ARGS: more options for serve (e.g. --no-alerts), split on spaces.
# shellcheck disable=SC2086
$bin serve 'fleet-*' -F "$work/ssh_config" --every "${every}s" --listen "127.0.0.1:$port" \
    --db "$work/serve.sqlite" --log-level warning ${SERVE_ARGS:-} 2>"$work/serve.log" &
serve_pid=$!
pids+=("$serve_pid")
node_port=$(free_port)
prometheus-node-exporter --web.listen-address="127.0.0.1:$node_port" --log.level=warn 2>"$work/node.log" &
node_pid=$!
pids+=("$node_pid")

# The first round: every host has ended a collection (or five minutes passed).
ready_start=$(now)
for _ in $(seq 600); do
    [[ $(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$port/readyz") == 200 ]] && break
    sleep 0.5
done
ready_end=$(now)
curl -s "127.0.0.1:$port/metrics" -o "$work/metrics.txt"
curl -s -H 'Accept-Encoding: gzip' "127.0.0.1:$port/metrics" -o "$work/metrics.gz"
# Let the watch settle into its steady ticks.
sleep "$every"

# Window 1: no scrapes of serve; node_exporter scraped every EVERY seconds.
t0=$(now)
cpu one "$serve_pid" >"$work/serve-cpu-0.json"
cpu tree $sshd_pids >"$work/hosts-cpu-0.json"
cpu one "$node_pid" >"$work/node-cpu-0.json"
python3 Scripts/bench/serve/scrape_every.py "http://127.0.0.1:$node_port/metrics" "$every" "$seconds" \
    "$work/node-scrapes.json"
t1=$(now)
cpu one "$serve_pid" >"$work/serve-cpu-1.json"
cpu tree $sshd_pids >"$work/hosts-cpu-1.json"
cpu one "$node_pid" >"$work/node-cpu-1.json"

# Window 2: wrk scrapes /metrics at about RATE a second.
DELAY_MS=$delay_ms ACCEPT_ENCODING=$accept_encoding wrk -t1 -c"$connections" -d"${seconds}s" --timeout 5s -s Scripts/bench/serve/scrape.lua \
    "http://127.0.0.1:$port/metrics" >"$work/wrk.txt"
t2=$(now)
cpu one "$serve_pid" >"$work/serve-cpu-2.json"
cpu tree $sshd_pids >"$work/hosts-cpu-2.json"

kill -TERM "$serve_pid"
wait "$serve_pid" || echo "serve exited with $?" >&2
pids=("$node_pid")
cat >"$work/plan.json" <<JSON
{"count": $count, "fleet_cgroup": "${FLEET_CGROUP:-}", "seconds": $seconds, "every": $every, "rate": $rate, "connections": $connections,
 "accept_encoding": "$accept_encoding",
 "delay_ms": $delay_ms, "ready_start": $ready_start, "ready_end": $ready_end, "t0": $t0, "t1": $t1, "t2": $t2,
 "node_scrapes": $(python3 -c "import json; print(json.load(open('$work/node-scrapes.json'))['scrapes'])")}
JSON
python3 Scripts/bench/serve/report.py "$work"
echo
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), $(uname -r)," \
    "$(prometheus-node-exporter --version 2>&1 | head -1), $(wrk -v 2>&1 | head -1)"
