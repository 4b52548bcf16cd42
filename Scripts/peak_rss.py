#!/usr/bin/env python3
"""Runs a command and prints its peak resident memory on stderr, as the last line:

    python3 Scripts/peak_rss.py hostscope snapshot web1
    ...
    peak_rss_kib=48212

The figure is the kernel's for the command's process (the largest of it and its children that
were waited for); the exit status is the command's.
"""

import resource
import subprocess
import sys


def main():
    status = subprocess.run(sys.argv[1:]).returncode
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"peak_rss_kib={peak}", file=sys.stderr, flush=True)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main())
