#!/usr/bin/env python3
"""The Python comparison for the watch benchmark: an asyncssh loop doing what `hostscope watch`
does — one persistent connection per host, the same probe every interval on every host at
fixed-rate ticks, the output parsed into snapshot fields (CPU from /proc/stat deltas between
ticks, memory, load, disks, network, processes) and written as NDJSON.

    asyncssh_watch.py HOSTS.txt KEY KNOWN_HOSTS USER EVERY_S FOR_S OUT.ndjson
"""
import asyncio
import json
import sys
import time

import asyncssh

hosts_file, key, known_hosts, user, every, duration, out = sys.argv[1:8]
every = float(every)
duration = float(duration)

PROBE = (
    "export LC_ALL=C LANG=C; cd / 2>/dev/null; echo @@sample; grep -aH '' /proc/uptime /proc/stat /proc/net/dev "
    "/proc/diskstats /proc/meminfo /proc/loadavg /proc/[0-9]*/stat /proc/[0-9]*/cmdline 2>/dev/null; "
    "echo @@owners; ls -ldn /proc/[0-9]* 2>/dev/null; echo @@df; df -kPT; echo @@dfi; df -iP; echo @@end"
)


def parse(text, previous):
    sections, name = {}, None
    for line in text.split("\n"):
        if line.startswith("@@"):
            name = line[2:]
            sections[name] = []
        elif name:
            sections[name].append(line)
    files = {}
    for line in sections.get("sample", []):
        path, _, content = line.partition(":")
        files.setdefault(path, []).append(content)
    cpu = [int(v) for v in files["/proc/stat"][0].split()[1:]]
    uptime = float(files["/proc/uptime"][0].split()[0])
    meminfo = {l.split(":")[0]: int(l.split()[1]) * 1024 for l in files["/proc/meminfo"]}
    load = [float(v) for v in files["/proc/loadavg"][0].split()[:3]]
    network = {}
    for l in files["/proc/net/dev"][2:]:
        iface, _, rest = l.partition(":")
        values = rest.split()
        network[iface.strip()] = {"rx_bytes": int(values[0]), "tx_bytes": int(values[8])}
    processes = {}
    for path, lines in files.items():
        if path.endswith("/stat") and path != "/proc/stat":
            record = " ".join(lines)
            close = record.rfind(")")
            tail = record[close + 2:].split()
            processes[int(record.split(" ", 1)[0])] = int(tail[11]) + int(tail[12])
    disks = []
    for l in sections.get("df", [])[1:]:
        parts = l.split()
        if len(parts) >= 7:
            used, available = int(parts[3]) * 1024, int(parts[4]) * 1024
            disks.append({"mount": parts[-1], "size_bytes": int(parts[2]) * 1024, "used_bytes": used,
                          "used_percent": used / (used + available) * 100 if used + available else None})
    snapshot = {"uptime_seconds": uptime, "load": load, "memory": {
        "total_bytes": meminfo["MemTotal"], "used_bytes": meminfo["MemTotal"] - meminfo["MemAvailable"]},
        "disks": disks, "network": network}
    if previous:
        deltas = [b - a for a, b in zip(previous["cpu"], cpu)]
        total = sum(deltas[:8]) or 1
        snapshot["cpu_busy_percent"] = 100 * (total - deltas[3] - deltas[4]) / total
        seconds = uptime - previous["uptime"] or 1
        busiest = sorted(((ticks - previous["processes"].get(pid, ticks)) / seconds, pid)
                         for pid, ticks in processes.items())[-10:]
        snapshot["top_pids"] = [pid for _, pid in busiest]
    return snapshot, {"cpu": cpu, "uptime": uptime, "processes": processes}


async def watch(name, port, start, out_file):
    previous = None
    connection = await asyncssh.connect("127.0.0.1", port=port, username=user, client_keys=[key],
                                        known_hosts=known_hosts, agent_path=None)
    tick = 0
    while True:
        due = start + tick * every
        if due > start + duration:
            break
        await asyncio.sleep(max(0, due - time.monotonic()))
        stamp = time.time()
        began = time.monotonic()
        try:
            result = await asyncio.wait_for(connection.run(PROBE), timeout=every * 0.8)
            snapshot, previous = parse(result.stdout, previous)
            snapshot.update(host=name, collected_at=stamp)
        except Exception as error:  # noqa: BLE001 - every tick yields a record
            snapshot = {"host": name, "collected_at": stamp, "error": str(error)}
        snapshot["duration_ms"] = (time.monotonic() - began) * 1000
        out_file.write(json.dumps(snapshot) + "\n")
        out_file.flush()
        tick += 1
    connection.close()


async def main():
    hosts = [line.split() for line in open(hosts_file) if line.strip()]
    start = time.monotonic() + 1
    with open(out, "w") as out_file:
        await asyncio.gather(*(watch(name, int(port), start, out_file) for name, _, port in hosts))


asyncio.run(main())
