#!/usr/bin/env python3
"""Fills a copy of a hostscope database with N spans for the OTLP push benchmark.

    make_spans.py TEMPLATE.sqlite OUT.sqlite N

TEMPLATE holds real spans (from `hostscope snapshot` and `hostscope chat`); OUT gets its schema and meta and
N spans cloned from them: each copy of a trace gets fresh trace and span ids (parents and links kept inside
the copy), so the spans are what hostscope records, repeated. The spans of
earlier OTLP export requests (hostscope.telemetry.export) are left out, as trace push leaves them out.
"""

import json
import os
import shutil
import sqlite3
import sys


def main():
    template, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    shutil.copyfile(template, out)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(template + suffix):
            shutil.copyfile(template + suffix, out + suffix)
    db = sqlite3.connect(out)
    rows = [r for r in db.execute(
        "SELECT span_id, trace_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, host, "
        "service, json FROM span ORDER BY start_unix_nano")
        if json.loads(r[10]).get("attributes", {}).get("hostscope.telemetry.export") is not True]
    if not rows:
        sys.exit("no spans in %s to clone" % template)
    db.execute("DELETE FROM span")
    inserted = 0
    copy = 0
    while inserted < count:
        copy += 1
        # Earlier copies start earlier, so that every copy lies before the push's "until now".
        shift = -copy * 1_000_000_000

        def new_id(old, width):
            return "%0*x" % (width, (int(old, 16) + copy * 0x9E3779B97F4A7C15) % (16 ** width) or 1)

        batch = []
        for (span_id, trace_id, parent, name, kind, start, end, status, host, service, text) in rows:
            if inserted + len(batch) >= count:
                break
            flat = json.loads(text)
            flat["span_id"] = new_id(span_id, 16)
            flat["trace_id"] = new_id(trace_id, 32)
            if parent:
                flat["parent_span_id"] = new_id(parent, 16)
            for link in flat.get("links") or []:
                link["span_id"] = new_id(link["span_id"], 16)
                link["trace_id"] = new_id(link["trace_id"], 32)
            batch.append((flat["span_id"], flat["trace_id"], flat.get("parent_span_id"), name, kind, start + shift,
                          end + shift, status, host, service, json.dumps(flat, separators=(",", ":"))))
        db.executemany(
            "INSERT INTO span (span_id, trace_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, "
            "status_code, host, service, json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
        inserted += len(batch)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


if __name__ == "__main__":
    main()
