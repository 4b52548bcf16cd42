#!/usr/bin/env python3
"""Prints the CPU seconds (user + system, children reaped included) of process trees, as JSON.

    proc_cpu.py tree PID...     every process descending from the PIDs, the PIDs included
    proc_cpu.py one PID...      the PIDs alone

Read from /proc/PID/stat (utime, stime, cutime, cstime in clock ticks). A process that ended
between two reads is missing from the second: the serve benchmark's trees (sshd listeners and
their long-lived sessions) keep their processes for the whole window, and what their short-lived
children (the probe's commands) used is in their parents' cutime and cstime once reaped.
"""
import json
import os
import sys

HZ = os.sysconf("SC_CLK_TCK")


def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    # After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
    return int(fields[1]), sum(int(x) for x in fields[11:15])


def main():
    mode, roots = sys.argv[1], {int(p) for p in sys.argv[2:]}
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            entry = stat(int(name))
            if entry:
                table[int(name)] = entry
    if mode == "one":
        chosen = roots & table.keys()
    else:
        children = {}
        for pid, (ppid, _) in table.items():
            children.setdefault(ppid, []).append(pid)
        chosen, stack = set(), [p for p in roots if p in table]
        while stack:
            pid = stack.pop()
            if pid not in chosen:
                chosen.add(pid)
                stack.extend(children.get(pid, []))
    print(json.dumps({"cpu_s": sum(table[p][1] for p in chosen) / HZ, "processes": len(chosen)}))


main()
