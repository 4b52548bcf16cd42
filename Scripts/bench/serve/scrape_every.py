#!/usr/bin/env python3
"""Scrapes URL at fixed slots EVERY seconds apart for SECONDS seconds, as Prometheus would, and
writes how many scrapes answered and their times as JSON.

    scrape_every.py URL EVERY SECONDS OUT.json
"""
import json
import sys
import time
import urllib.request

url, every, seconds, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
start = time.time()
durations, failures = [], 0
slot = start
while slot < start + seconds:
    time.sleep(max(0.0, slot - time.time()))
    began = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=every) as response:
            response.read()
        durations.append(time.monotonic() - began)
    except OSError:
        failures += 1
    slot += every
with open(out, "w") as f:
    json.dump({"scrapes": len(durations), "failures": failures,
               "median_ms": sorted(durations)[len(durations) // 2] * 1000 if durations else None}, f)
