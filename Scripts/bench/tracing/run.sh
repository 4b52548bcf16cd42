#!/usr/bin/env bash
# Tracing benchmarks: hostscope's tracer (a release-mode test, off by default) next to the same
# workload through the OpenTelemetry Python SDK; prints a Markdown table. See README.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if ! python3 -c 'import opentelemetry.sdk, opentelemetry.exporter.otlp.proto.common' 2>/dev/null; then
    python3 -m pip install --quiet opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
fi

# Testable imports stay enabled: some test targets use `@testable import`, and the whole test product is
# built. The measured code is AgentTracing's own hot path, which is optimized within its module either way.
HOSTSCOPE_BENCH=1 HOSTSCOPE_BENCH_OUT="$work/swift.json" \
    swift test -c release --filter TracingBenchmarks >"$work/swift.log" 2>&1 \
    || { cat "$work/swift.log"; exit 1; }
python3 Scripts/bench/tracing/otel_python_bench.py >"$work/python.json"
python3 Scripts/bench/tracing/table.py "$work/swift.json" "$work/python.json"
