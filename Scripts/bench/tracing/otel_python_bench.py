#!/usr/bin/env python3
"""The tracing benchmark's workload through the OpenTelemetry Python SDK, for comparison.

Records client spans with four attributes through a TracerProvider with a SimpleSpanProcessor and
the SDK's InMemorySpanExporter (one thread, then two), measures the exporter's memory per span
(it keeps every span: it has no bound), and encodes the spans as OTLP JSON (the SDK's protobuf
encoder, then protobuf's JSON printer). Prints one JSON object of figures.

Needs: pip install opentelemetry-sdk opentelemetry-exporter-otlp-proto-common
"""

import json
import os
import sys
import threading
import time

from google.protobuf import json_format
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

SPANS = int(os.environ.get("HOSTSCOPE_BENCH_PYTHON_SPANS", "200000"))


def resident_bytes():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def make_tracer():
    exporter = InMemorySpanExporter()
    provider = TracerProvider(
        resource=Resource.create({"service.name": "hostscope", "service.version": "0.1.0", "host.name": "bench"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider.get_tracer("hostscope", "0.1.0"), exporter


def record(tracer, count, exporter=None, cpu=None):
    start = time.thread_time()
    for index in range(count):
        span = tracer.start_span("exec", kind=SpanKind.CLIENT)
        span.set_attribute("server.address", "web1")
        span.set_attribute("process.exit.code", 0)
        span.set_attribute("hostscope.bytes.out", 1234)
        span.set_attribute("hostscope.collector", "proc")
        span.end()
        # Keep the exporter as small as the Swift ring so that timing is not a test of list growth.
        if exporter is not None and index % 10000 == 9999:
            exporter.clear()
    if cpu is not None:
        cpu.append(time.thread_time() - start)


def main():
    results = {"python_spans": SPANS}

    tracer, exporter = make_tracer()
    record(tracer, 10000, exporter)
    cpu = []
    start = time.perf_counter()
    record(tracer, SPANS, exporter, cpu)
    elapsed = time.perf_counter() - start
    results["record_1thread_ns_per_span"] = elapsed / SPANS * 1e9
    results["record_1thread_cpu_ns_per_span"] = cpu[0] / SPANS * 1e9
    results["record_1thread_spans_per_s"] = SPANS / elapsed

    tracer, exporter = make_tracer()
    cpu = []
    threads = [threading.Thread(target=record, args=(tracer, SPANS // 2, exporter, cpu)) for _ in range(2)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    results["record_2threads_spans_per_s"] = SPANS / elapsed
    results["record_2threads_speedup"] = results["record_2threads_spans_per_s"] / results["record_1thread_spans_per_s"]
    results["record_2threads_cpu_ns_per_span_per_thread"] = sum(cpu) / len(cpu) / (SPANS // 2) * 1e9

    # Memory: the in-memory exporter keeps every finished span.
    tracer, exporter = make_tracer()
    before = resident_bytes()
    record(tracer, SPANS)
    after = resident_bytes()
    results["memory_bytes_per_held_span"] = (after - before) / SPANS
    results["memory_held_spans"] = len(exporter.get_finished_spans())

    # OTLP JSON export of 10 000 spans, as the Swift side exports a full 10 000-span ring.
    spans = exporter.get_finished_spans()[:10000]
    rounds = 3
    total = 0
    start = time.perf_counter()
    for _ in range(rounds):
        request = encode_spans(spans)
        total += len(json_format.MessageToJson(request, indent=None).encode()) + 1
    elapsed = time.perf_counter() - start
    results["export_otlp_mb_per_s"] = total / elapsed / 1e6
    results["export_otlp_spans_per_s"] = len(spans) * rounds / elapsed
    results["export_otlp_bytes_per_span"] = total / (len(spans) * rounds)

    json.dump(results, sys.stdout, indent=2, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
