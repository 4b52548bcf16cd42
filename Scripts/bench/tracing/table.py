#!/usr/bin/env python3
"""Prints the Swift and Python tracing figures side by side as a Markdown table."""

import json
import sys


def main(swift_path, python_path):
    with open(swift_path) as file:
        swift = json.load(file)
    with open(python_path) as file:
        python = json.load(file)

    def number(figures, key, digits=0, scale=1.0):
        value = figures.get(key)
        return "n/a" if value is None else f"{value * scale:,.{digits}f}"

    rows = [
        ("record a span with 4 attributes, 1 thread, wall time (ns/span)",
         number(swift, "record_1thread_ns_per_span"), number(python, "record_1thread_ns_per_span")),
        ("same, thread CPU time (ns/span)",
         number(swift, "record_1thread_cpu_ns_per_span"), number(python, "record_1thread_cpu_ns_per_span")),
        ("same through swift-distributed-tracing's SpanAttributes, CPU time (ns/span)",
         number(swift, "record_protocol_1thread_cpu_ns_per_span"), "n/a"),
        ("record, 1 thread (spans/s, wall)",
         number(swift, "record_1thread_spans_per_s"), number(python, "record_1thread_spans_per_s")),
        ("record, 2 threads into one tracer (spans/s, wall)",
         number(swift, "record_2threads_spans_per_s"), number(python, "record_2threads_spans_per_s")),
        ("2 threads, a tracer each (spans/s, wall): what the machine allowed",
         number(swift, "record_2tracers_spans_per_s"), "n/a"),
        ("2 threads: wall-time speed-up over 1 thread",
         number(swift, "record_2threads_speedup", 2), number(python, "record_2threads_speedup", 2)),
        ("2 threads: CPU time per span per thread (ns/span)",
         number(swift, "record_2threads_cpu_ns_per_span_per_thread"),
         number(python, "record_2threads_cpu_ns_per_span_per_thread")),
        ("memory per held span (bytes)",
         number(swift, "memory_bytes_per_held_span"), number(python, "memory_bytes_per_held_span")),
        (f"resident memory growth while {number(swift, 'memory_spans')} spans pass a full "
         f"{number(swift, 'memory_capacity')}-span ring (MiB)",
         number(swift, "memory_growth_after_full_mib", 1),
         "unbounded (the in-memory exporter keeps every span)"),
        ("OTLP JSON export (MB/s)",
         number(swift, "export_otlp_mb_per_s", 1), number(python, "export_otlp_mb_per_s", 1)),
        ("OTLP JSON export (spans/s)",
         number(swift, "export_otlp_spans_per_s"), number(python, "export_otlp_spans_per_s")),
        ("OTLP JSON bytes per span", number(swift, "export_otlp_bytes_per_span"),
         number(python, "export_otlp_bytes_per_span")),
        ("flat spans export (MB/s)", number(swift, "export_flat_mb_per_s", 1), "n/a"),
    ]
    print("| measure | hostscope (Swift, release) | OpenTelemetry Python SDK |")
    print("|---|---:|---:|")
    for name, left, right in rows:
        print(f"| {name} | {left} | {right} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
