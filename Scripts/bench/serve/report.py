#!/usr/bin/env python3
"""Prints the serve benchmark's tables from the files run.sh left in its work directory.

Lateness is how long after its slot a tick's record was complete (collected_at + duration − slot),
as in the watch benchmark; a tick is on time when it completed within its interval. Ticks are
assigned to a window by their slot. CPU figures are differences of /proc/PID/stat readings taken at
the windows' edges (proc_cpu.py).
"""
import datetime
import json
import sqlite3
import sys

work = sys.argv[1]
plan = json.load(open(f"{work}/plan.json"))
every = plan["every"]


def load(name):
    return json.load(open(f"{work}/{name}.json"))


def stamp(value):
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def quantile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


records = [json.loads(row[0]) for row in sqlite3.connect(f"{work}/serve.sqlite").execute(
    "SELECT json FROM snapshot_record")]


def window(start, end):
    chosen = [r for r in records if "slot" in r and start <= stamp(r["slot"]) < end]
    late = [stamp(r["collected_at"]) + r.get("duration_ms", 0) / 1000 - stamp(r["slot"]) for r in chosen]
    errors = sum(1 for r in chosen if "error" in r)
    return {"ticks": len(chosen), "errors": errors, "late": late,
            "on_time": sum(1 for x in late if x < every) / len(late) if late else float("nan")}


quiet = window(plan["t0"], plan["t1"])
# The scraped window's last interval is left out: its ticks may end after wrk stops.
scraped = window(plan["t1"], plan["t2"] - every)
wrk = json.loads(open(f"{work}/wrk.txt").read().strip().splitlines()[-1])
metrics_bytes = len(open(f"{work}/metrics.txt", "rb").read())
try:
    gzip_bytes = len(open(f"{work}/metrics.gz", "rb").read())
except FileNotFoundError:  # a run of a build that did not compress
    gzip_bytes = None


def cpu(name, a, b):
    return load(f"{name}-cpu-{b}")["cpu_s"] - load(f"{name}-cpu-{a}")["cpu_s"]


serve_quiet, serve_scraped = cpu("serve", 0, 1), cpu("serve", 1, 2)
hosts_quiet = cpu("hosts", 0, 1)
node_cpu = cpu("node", 0, 1)
scrapes = wrk["requests"]
window_seconds = plan["t1"] - plan["t0"]

print(f"{plan['count']} hosts every {every} s; first round complete after "
      f"{plan['ready_end'] - plan['ready_start']:.1f} s; windows of {plan['seconds']} s asked; /metrics is "
      f"{metrics_bytes / 1024:.0f} KiB" + (f" ({gzip_bytes / 1024:.0f} KiB gzip)" if gzip_bytes else "")
      + ("; the fleet's sshds in a CPU cgroup of the smallest weight" if plan.get("fleet_cgroup") else ""))
print()
print("| window | length (s) | ticks (due) | errors | on time | lateness median / p99 / max (s) |")
print("|---|---|---|---|---|---|")
spans = [plan["t1"] - plan["t0"], plan["t2"] - every - plan["t1"]]
for (name, w), span in zip([("no scrapes", quiet), (f"wrk at ~{plan['rate']}/s", scraped)], spans):
    due = int(plan["count"] * span / every)
    print(f"| {name} | {span:.0f} | {w['ticks']} ({due}) | {w['errors']} | {w['on_time'] * 100:.1f} % | "
          f"{quantile(w['late'], 0.5):.3f} / {quantile(w['late'], 0.99):.3f} / {max(w['late'] or [0]):.3f} |")
print()
print("| /metrics under the watch | scrapes | rate | p50 / p90 / p99 / max (ms) | errors, non-2xx |")
print("|---|---|---|---|---|")
encoding = plan.get("accept_encoding") or "none"
print(f"| {plan['connections']} connections, {plan['delay_ms']} ms apart, Accept-Encoding: {encoding}, "
      f"{wrk['bytes'] / max(1, scrapes) / 1024:.0f} KiB a response | {scrapes} | "
      f"{scrapes / wrk['duration_s']:.1f}/s | {wrk['p50_ms']:.2f} / {wrk['p90_ms']:.2f} / {wrk['p99_ms']:.2f} / "
      f"{wrk['max_ms']:.2f} | {wrk['errors']}, {wrk['non_2xx']} |")
print()
print("| CPU | figure |")
print("|---|---|")
print(f"| hostscope serve, watch alone | {serve_quiet / window_seconds * 100:.1f} % of a core, "
      f"{serve_quiet / max(1, quiet['ticks']) * 1000:.2f} ms per tick |")
print(f"| hostscope serve, per /metrics scrape (scraped window minus quiet window) | "
      f"{(serve_scraped - serve_quiet) / max(1, scrapes) * 1000:.2f} ms |")
print(f"| host side, per hostscope probe (the fleet's sshd trees) | "
      f"{hosts_quiet / max(1, quiet['ticks']) * 1000:.2f} ms |")
print(f"| host side, per node_exporter scrape ({plan['node_scrapes']} scrapes, every {every} s) | "
      f"{node_cpu / max(1, plan['node_scrapes']) * 1000:.2f} ms |")
