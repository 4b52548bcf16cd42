#!/usr/bin/env bash
# /metrics of 300 hosts before and after the node_exporter parity families, side by side in one run:
# Scripts/bench/serve/run.sh (the serve benchmark of docs/benchmarks.md, its fleet in a CPU cgroup of the
# smallest weight as in its run D) with each build in turn, ROUNDS times, alternating, and the lines that
# compare them: the size of the document, the scrape latencies under wrk and the ticks on time.
#   Scripts/bench/parity/metrics_latency.sh BEFORE AFTER [ROUNDS] [N] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
before=${1:?usage: metrics_latency.sh BEFORE AFTER [ROUNDS] [N] [SECONDS]}
after=${2:?usage: metrics_latency.sh BEFORE AFTER [ROUNDS] [N] [SECONDS]}
rounds=${3:-2}
count=${4:-300}
seconds=${5:-60}
for round in $(seq "$rounds"); do
    for build in before after; do
        binary=$before
        [[ $build == after ]] && binary=$after
        echo "## round $round, $build ($binary)"
        FLEET_CGROUP=1 HOSTSCOPE_BIN=$binary bash Scripts/bench/serve/run.sh "$count" "$seconds" 5 50 |
            grep -E '^[0-9]+ hosts every|^\| (no scrapes|wrk at|[0-9]+ connections)|^machine:'
    done
done
