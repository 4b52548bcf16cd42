#!/usr/bin/env python3
"""Runs a command and prints its wall time, CPU time and peak resident memory as JSON.

    measure.py OUT.json -- COMMAND [ARGS...]

The figures come from wait4(2): user and system CPU of the process and its children, and the
largest resident set of any of them (ru_maxrss).
"""
import json
import os
import sys
import time

out = sys.argv[1]
command = sys.argv[sys.argv.index("--") + 1:]
start = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execvp(command[0], command)
_, status, usage = os.wait4(pid, 0)
wall = time.monotonic() - start
with open(out, "w") as f:
    json.dump({"wall_s": wall, "user_s": usage.ru_utime, "sys_s": usage.ru_stime,
               "max_rss_mb": usage.ru_maxrss / 1024, "status": os.waitstatus_to_exitcode(status)}, f)
