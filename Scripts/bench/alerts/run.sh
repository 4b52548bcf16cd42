#!/usr/bin/env bash
# CPU per record of the shipped alert rules (the evaluator alone, no I/O): a release build of the
# tests (in .build-bench, as the snapshot benchmark), then AlertEvaluatorBenchmarks over 200,000
# records of 50 busy hosts. Target: < 50 µs. The build's and the run's output go to a log, shown on failure.
#   Scripts/bench/alerts/run.sh [RECORDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
export HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_RECORDS=${1:-200000}
log=$(mktemp "${TMPDIR:-/tmp}/hostscope-bench-alerts.XXXXXX")
swift test -c release -Xswiftc -enable-testing --scratch-path .build-bench --filter AlertEvaluatorBenchmarks \
    >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
grep 'alerts-bench:' "$log" || { tail -40 "$log"; exit 1; }
