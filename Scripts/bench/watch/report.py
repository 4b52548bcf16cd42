#!/usr/bin/env python3
"""Prints the watch benchmark's table from the files run.sh left in its work directory."""
import datetime
import json
import sys

work, count, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])


def load(name):
    return json.load(open(f"{work}/{name}.json"))


def stamp(value):
    if isinstance(value, (int, float)):
        return float(value)
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def ticks(path):
    records = [json.loads(line) for line in open(path)]
    by_host = {}
    for record in records:
        by_host.setdefault(record["host"], []).append(record)
    expected = int(seconds // 5) + 1
    complete = sum(1 for rs in by_host.values() if len(rs) >= expected - 1)
    errors = sum(1 for r in records if "error" in r)
    start = min(stamp(r["collected_at"]) for r in records)
    # Lateness of each tick against its slot (start + k × 5 s), and whether it finished in it.
    late = []
    for rs in by_host.values():
        for k, r in enumerate(sorted(rs, key=lambda r: stamp(r["collected_at"]))):
            late.append(stamp(r["collected_at"]) - (start + 5 * k) + r.get("duration_ms", 0) / 1000)
    late.sort()
    return len(records), len(by_host), complete, errors, late[len(late) // 2], late[-1]


cold = load("cold")
cold_records = [json.loads(line) for line in open(f"{work}/cold.ndjson")]
print(f"cold snapshot of {count} hosts (connect + auth + 250 ms sample): {cold['wall_s']:.2f} s wall, "
      f"{sum('error' in r for r in cold_records)} errors, client CPU {cold['user_s'] + cold['sys_s']:.2f} s\n")
print(f"watch {count} hosts every 5 s for {seconds:.0f} s")
print("| agent | records | hosts | errors | tick done, median / max (s after its slot) | CPU of one core | peak RSS |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, label in [("hostscope", "hostscope watch"), ("python", "Python asyncssh loop")]:
    usage = load(name)
    total, hosts, complete, errors, median, worst = ticks(f"{work}/{name}.ndjson")
    cpu = (usage["user_s"] + usage["sys_s"]) / usage["wall_s"] * 100
    print(f"| {label} | {total} | {hosts} | {errors} | {median:.3f} / {worst:.3f} | {cpu:.1f} % | "
          f"{usage['max_rss_mb']:.0f} MB |")
