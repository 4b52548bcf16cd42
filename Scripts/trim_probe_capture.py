#!/usr/bin/env python3
"""Trims a recorded probe capture to the processes a fixture should show.

A capture of a live machine holds every process on it. A fixture keeps pid 1, kthreadd and a
few well-known kernel threads, the probe's own shell and its children, and the pids listed in
the capture's `kept-pids` file (processes started for the capture); every other process's
`/proc/PID/stat`, `/proc/PID/cmdline` and owner lines are dropped. Pid 1 is renamed
`agent_daemo` / `/sbin/agentd --foreground --quiet`, as in Fixtures/captured/debian12-local.
In `detect.txt` the applet directory becomes `/bin` and `/etc/passwd` keeps the system
accounts (uid < 100 and nobody).

Usage: trim_probe_capture.py CAPTURE_DIR FIXTURE_DIR
"""

import os
import re
import sys

KERNEL_THREADS = re.compile(rb"^(ksoftirqd/\d+|rcu_preempt|kswapd\d+|migration/\d+)$")
PROC_LINE = re.compile(rb"^/proc/(\d+)/(stat|cmdline):")
OWNER_LINE = re.compile(rb"^[-dlrwxst]{10}\s.*\s/proc/(\d+)$")


def stat_fields(line):
    """(pid, comm, ppid) of a `/proc/PID/stat:` line."""
    record = line.split(b":", 1)[1]
    open_paren = record.index(b"(")
    close_paren = record.rindex(b")")
    rest = record[close_paren + 2 :].split(b" ")
    return int(record[:open_paren]), record[open_paren + 1 : close_paren], int(rest[1])


def trim_probe(data, kept):
    lines = data.split(b"\n")
    self_pid = None
    for index, line in enumerate(lines):
        if line.endswith(b":self") and index + 1 < len(lines):
            self_pid = int(lines[index + 1])
    keep = {1, 2, self_pid} | kept
    for line in lines:
        match = PROC_LINE.match(line)
        if match and match.group(2) == b"stat":
            pid, comm, ppid = stat_fields(line)
            if ppid == self_pid or (ppid == 2 and KERNEL_THREADS.match(comm)):
                keep.add(pid)
    result = []
    for line in lines:
        match = PROC_LINE.match(line) or OWNER_LINE.match(line)
        if match and int(match.group(1)) not in keep:
            continue
        if line.startswith(b"/proc/1/stat:"):
            record = line.split(b":", 1)[1]
            line = b"/proc/1/stat:1 (agent_daemo)" + record[record.rindex(b")") + 1 :]
        elif line.startswith(b"/proc/1/cmdline:"):
            line = b"/proc/1/cmdline:/sbin/agentd\0--foreground\0--quiet\0"
        result.append(line)
    return b"\n".join(result)


def trim_detection(data):
    data = re.sub(rb"/tmp/hostscope-busybox-\d+", b"/bin", data)
    result = []
    in_passwd = False
    for line in data.split(b"\n"):
        if line.startswith(b"@@"):
            in_passwd = line == b"@@passwd"
        elif in_passwd:
            fields = line.split(b":")
            if len(fields) < 3 or not (int(fields[2]) < 100 or int(fields[2]) == 65534):
                continue
        result.append(line)
    return b"\n".join(result)


def main():
    capture, fixture = sys.argv[1], sys.argv[2]
    with open(os.path.join(capture, "kept-pids"), "rb") as handle:
        kept = {int(pid) for pid in handle.read().split()}
    os.makedirs(fixture, exist_ok=True)
    for name in sorted(os.listdir(capture)):
        if not name.endswith(".txt"):
            continue
        with open(os.path.join(capture, name), "rb") as handle:
            data = handle.read()
        data = trim_detection(data) if name == "detect.txt" else trim_probe(data, kept)
        with open(os.path.join(fixture, name), "wb") as handle:
            handle.write(data)


if __name__ == "__main__":
    main()
