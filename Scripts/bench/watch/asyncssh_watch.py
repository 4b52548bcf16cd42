#!/usr/bin/env python3
"""The Python comparison for the watch benchmark: an asyncssh loop doing what `hostscope watch`
does — one persistent connection per host, the same probe every interval on every host at
fixed-rate ticks, the output parsed into snapshot fields (CPU from /proc/stat deltas between
ticks, memory, load, disks, network, processes) and written as NDJSON. As hostscope's ticks do,
the probe reads only the kernel's counters, and the command lines and owners of the ten busiest
processes come from a second small command, once per process (pid and start time).

    asyncssh_watch.py HOSTS.txt KEY KNOWN_HOSTS USER EVERY_S FOR_S OUT.ndjson
"""
import asyncio
import json
import sys
import time

import asyncssh

from probe_common import PROBE, details_command, parse, parse_details

hosts_file, key, known_hosts, user, every, duration, out = sys.argv[1:8]
every = float(every)
duration = float(duration)
# Slots are written as wall-clock times, as hostscope's records carry theirs.
wall_offset = time.time() - time.monotonic()


async def with_details(connection, snapshot, processes, known):
    """Fills the command and user of the ten busiest processes, asking only for unknown ones."""
    for pid in [pid for pid, entry in known.items() if processes.get(pid, (0, None))[1] != entry[0]]:
        del known[pid]
    pids = snapshot.get("top_pids", [])
    missing = [pid for pid in pids if pid not in known]
    if missing:
        result = await connection.run(details_command(missing))
        for pid, detail in parse_details(result.stdout).items():
            if pid in processes:
                known[pid] = (processes[pid][1], detail)
    snapshot["processes"] = [{"pid": pid, "command": known[pid][1][0] if pid in known else None,
                              "user": known[pid][1][1] if pid in known else None} for pid in pids]


async def watch(name, port, start, out_file):
    previous = None
    known = {}
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
            await asyncio.wait_for(with_details(connection, snapshot, previous["processes"], known),
                                   timeout=every * 0.8)
            snapshot.update(host=name, collected_at=stamp)
        except Exception as error:  # noqa: BLE001 - every tick yields a record
            snapshot = {"host": name, "collected_at": stamp, "error": str(error)}
        snapshot["duration_ms"] = (time.monotonic() - began) * 1000
        snapshot["slot"] = due + wall_offset
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
