#!/usr/bin/env bash
# CPU per record of the shipped alert rules (the evaluator alone, no I/O), optimized: a release build of the
# Alerting module and what it needs (in .build-bench, as the snapshot benchmark), then AlertEvaluatorBenchmarks
# compiled with -O beside a one-line main and linked against those objects, over 200,000 records of 50 busy
# hosts. Building only Alerting keeps the release build to minutes (`swift test -c release` would build every
# module of the package). Target: < 50 µs. The build's and the link's output go to a log, shown on failure.
#   Scripts/bench/alerts/run.sh [RECORDS]
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD
export HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_RECORDS=${1:-200000}
log=$(mktemp "${TMPDIR:-/tmp}/hostscope-bench-alerts.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/hostscope-bench-alerts-bin.XXXXXX")
trap 'rm -rf "$work"' EXIT
swift build -c release --target Alerting --scratch-path .build-bench >"$log" 2>&1 || { tail -40 "$log"; exit 1; }
release=.build-bench/release
echo 'AlertEvaluatorBenchmarks().theShippedRulesCostUnderFiftyMicrosecondsOfCPUPerRecord()' >"$work/main.swift"
maps=()
for map in Sources/C*/module.modulemap; do maps+=(-Xcc "-fmodule-map-file=$root/$map"); done
yaml=.build-bench/checkouts/Yams/Sources/CYaml/include
# Alerting's module closure: its own modules, swift-collections' HeapModule (SSHTransport) and Yams.
objects=()
for module in Alerting HostStats ValueFormats OrderedJSON SSHTransport Digests HeapModule \
    InternalCollectionsUtilities Yams; do
    objects+=("$release/$module.build/"*.o)
done
objects+=("$release/CYaml.build/src/"*.o)
swiftc -O -module-name AlertsBench "$work/main.swift" Tests/AlertingTests/AlertEvaluatorBenchmarks.swift \
    -I "$release/Modules" "${maps[@]}" -Xcc "-fmodule-map-file=$root/$yaml/module.modulemap" -Xcc "-I$root/$yaml" \
    "${objects[@]}" -lssh2 -lcrypto -lz -o "$work/alerts-bench" >>"$log" 2>&1 || { tail -40 "$log"; exit 1; }
"$work/alerts-bench" 2>&1 | grep 'alerts-bench:'
