#!/usr/bin/env python3
"""Prints what real_load.sh measured: spans per minute, attributes per span, and the tracer's share of CPU.

    load_report.py WORK HOSTS SECONDS EVERY

WORK holds watch.json and chat-N.json (measure.py: wall and CPU time of each run), watch-spans.jsonl and
chat-spans.jsonl (the spans each stored, as `trace export --format spans` prints them) and replay.json (what
recording those spans again cost per span, from TracingLoadBenchmarks).
"""
import collections
import glob
import json
import os
import sys


def spans(path):
    with open(path) as file:
        return [json.loads(line) for line in file if line.strip()]


def cpu(path):
    with open(path) as file:
        run = json.load(file)
    return run["wall_s"], run["user_s"] + run["sys_s"], run["status"]


def main(work, hosts, seconds, every):
    with open(os.path.join(work, "replay.json")) as file:
        replay = json.load(file)

    watch_spans = spans(os.path.join(work, "watch-spans.jsonl"))
    watch_wall, watch_cpu, watch_status = cpu(os.path.join(work, "watch.json"))
    chat_spans = spans(os.path.join(work, "chat-spans.jsonl"))
    chat_runs = [cpu(path) for path in sorted(glob.glob(os.path.join(work, "chat-*.json")))]
    chat_wall = sum(run[0] for run in chat_runs)
    chat_cpu = sum(run[1] for run in chat_runs)

    def cost(name):
        figures = replay[name]
        return figures["record_cpu_ns_per_span"] + figures["read_cpu_ns_per_span"], figures

    rows = []
    for label, stored, wall, used, figures_name in (
        (f"watch, {hosts} hosts every {every}, {seconds} s", watch_spans, watch_wall, watch_cpu, "watch-spans.jsonl"),
        (f"chat session, {len(chat_runs)} turns with tool calls", chat_spans, chat_wall, chat_cpu, "chat-spans.jsonl"),
    ):
        per_span, figures = cost(figures_name)
        per_minute = len(stored) / wall * 60
        attributes = sum(len(span["attributes"]) for span in stored) / max(len(stored), 1)
        events = sum(len(span["events"]) for span in stored) / max(len(stored), 1)
        tracer_s = len(stored) * per_span / 1e9
        rows.append((label, len(stored), per_minute, attributes, events, used, wall, figures, per_span, tracer_s))

    print(f"| workload | spans stored | spans per minute | attributes per span | events per span "
          f"| hostscope CPU (s) in wall time (s) | tracer CPU per span, record + read (µs) "
          f"| tracer CPU (ms) | tracer share of hostscope's CPU |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, count, per_minute, attributes, events, used, wall, figures, per_span, tracer_s in rows:
        print(f"| {label} | {count:,} | {per_minute:,.0f} | {attributes:.1f} | {events:.2f} "
              f"| {used:.2f} in {wall:.1f} | {figures['record_cpu_ns_per_span'] / 1000:.2f} + "
              f"{figures['read_cpu_ns_per_span'] / 1000:.2f} | {tracer_s * 1000:.1f} "
              f"| {tracer_s / used * 100:.2f} % |")
    print()
    records = 0
    errors = 0
    with open(os.path.join(work, "watch.ndjson")) as file:
        for line in file:
            if line.strip():
                records += 1
                errors += 1 if json.loads(line).get("error") else 0
    print(f"watch: {records} records, {errors} error records, exit status {watch_status}; "
          f"chat exit statuses {[run[2] for run in chat_runs]}")
    names = collections.Counter(span["name"].split(" ")[0] + (" " + span["name"].split(" ")[1]
                                if span["name"].startswith(("ssh", "collect")) else "") for span in watch_spans)
    print("watch spans by name: " + ", ".join(f"{name} {count}" for name, count in names.most_common(8)))
    names = collections.Counter(span["name"] for span in chat_spans)
    print("chat spans by name: " + ", ".join(f"{name} {count}" for name, count in names.most_common(10)))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
