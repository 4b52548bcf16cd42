#!/usr/bin/env python3
"""Prints the watch benchmark's tables from the files run.sh left in its work directory.

Lateness is how long after its slot a tick's record was complete (collected_at + duration −
slot). The cold start is each host's first record (it includes the connect); the steady state is
every tick whose slot comes after the moment every host had its first record complete.
"""
import datetime
import json
import os
import sys

work = sys.argv[1]
plan = json.load(open(f"{work}/plan.json"))
count, seconds, every = plan["count"], plan["seconds"], plan["every"]


def load(name):
    return json.load(open(f"{work}/{name}.json"))


def stamp(value):
    if isinstance(value, (int, float)):
        return float(value)
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def quantile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def ticks(path):
    records = [json.loads(line) for line in open(path)]
    by_host = {}
    for record in records:
        by_host.setdefault(record["host"], []).append(record)
    done = lambda r: stamp(r["collected_at"]) + r.get("duration_ms", 0) / 1000
    firsts = [min(rs, key=lambda r: stamp(r["slot"])) for rs in by_host.values()]
    warm_from = max(done(r) for r in firsts)
    cold_late = [done(r) - stamp(r["slot"]) for r in firsts]
    steady = [r for r in records if stamp(r["slot"]) > warm_from]
    late = [done(r) - stamp(r["slot"]) for r in steady]
    durations = [r.get("duration_ms", 0) for r in steady if "error" not in r]
    return {
        "records": len(records), "hosts": len(by_host), "errors": sum("error" in r for r in records),
        "steady": len(steady), "steady_errors": sum("error" in r for r in steady),
        "on_time": sum(1 for x in late if x < every) / len(late) if late else float("nan"),
        "late_median": quantile(late, 0.5), "late_p99": quantile(late, 0.99), "late_max": max(late or [0]),
        "duration_median": quantile(durations, 0.5), "duration_p99": quantile(durations, 0.99),
        "cold_median": quantile(cold_late, 0.5), "cold_max": max(cold_late), "warm_after": warm_from,
    }


cold = load("cold")
cold_records = [json.loads(line) for line in open(f"{work}/cold.ndjson")]
print(f"cold snapshot of {count} hosts (connect + auth + 250 ms sample): {cold['wall_s']:.2f} s wall, "
      f"{sum('error' in r for r in cold_records)} errors, client CPU {cold['user_s'] + cold['sys_s']:.2f} s, "
      f"peak RSS {cold['max_rss_mb']:.0f} MB")
if os.path.exists(f"{work}/cold50.json"):
    print("\none snapshot of 50 hosts at once")
    print("| client | wall (s) | errors | client CPU (s) | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    for name, label in [("cold50", "hostscope snapshot"), ("cold50-ssh2", "ssh2-python, a thread per host")]:
        usage = load(name)
        records = [json.loads(line) for line in open(f"{work}/{name}.ndjson")]
        print(f"| {label} | {usage['wall_s']:.2f} | {sum('error' in r for r in records)} | "
              f"{usage['user_s'] + usage['sys_s']:.2f} | {usage['max_rss_mb']:.0f} MB |")

print(f"\nwatch {count} hosts every {every} s for {seconds:.0f} s")
print("| client | records | errors | steady ticks (errors) | on time | lateness median / p99 / max (s) | "
      "tick duration median / p99 (ms) | cold start: first records late, median / max (s) | "
      "CPU of one core | CPU per record (ms) | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name, label in [("hostscope", "hostscope watch"), ("python", "Python asyncssh loop"),
                    ("ssh2", "ssh2-python threads")]:
    if not os.path.exists(f"{work}/{name}.json"):
        continue
    usage = load(name)
    t = ticks(f"{work}/{name}.ndjson")
    cpu_s = usage["user_s"] + usage["sys_s"]
    print(f"| {label} | {t['records']} | {t['errors']} | {t['steady']} ({t['steady_errors']}) | "
          f"{t['on_time'] * 100:.1f} % | {t['late_median']:.3f} / {t['late_p99']:.3f} / {t['late_max']:.3f} | "
          f"{t['duration_median']:.1f} / {t['duration_p99']:.1f} | {t['cold_median']:.2f} / {t['cold_max']:.2f} | "
          f"{cpu_s / usage['wall_s'] * 100:.1f} % | {cpu_s * 1000 / max(1, t['records']):.2f} | "
          f"{usage['max_rss_mb']:.0f} MB |")
