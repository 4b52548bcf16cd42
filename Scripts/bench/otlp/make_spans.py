#!/usr/bin/env python3
"""Fills a copy of a hostscope database with N spans for the OTLP push benchmark.

    make_spans.py TEMPLATE.sqlite OUT.sqlite N [--schema-4 OUT4.sqlite]

TEMPLATE holds real spans (from `hostscope snapshot` and `hostscope chat`); OUT gets its schema and meta and
N spans cloned from them: each copy of a trace gets fresh trace and span ids (parents and links kept inside
the copy), in the flat JSON and in the OTLP protobuf encoding stored beside it, so the spans are what
hostscope records, repeated. The spans of earlier OTLP export requests (hostscope.telemetry.export) are left
out, as trace push leaves them out.

--schema-4 also writes the same spans as a hostscope before schema 5 stored them (JSON only, no encoding
columns), the file an older build reads: what the benchmark's baseline build pushes.
"""

import json
import os
import shutil
import sqlite3
import sys


def varint(data, index):
    value, shift = 0, 0
    while True:
        byte = data[index]
        index += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index
        shift += 7


def rewrite_ids(message, new_id, fields):
    """The protobuf message with the bytes of the length-delimited id fields in `fields` (number -> hex width)
    replaced by new_id(old hex, width), and the same done inside links (Span field 13)."""
    data = bytearray(message)
    index = 0
    while index < len(data):
        key, index = varint(data, index)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, index = varint(data, index)
        elif wire == 1:
            index += 8
        elif wire == 5:
            index += 4
        elif wire == 2:
            length, index = varint(data, index)
            if number in fields and length * 2 == fields[number]:
                data[index:index + length] = bytes.fromhex(new_id(data[index:index + length].hex(), length * 2))
            elif number == 13 and 13 in fields:
                data[index:index + length] = rewrite_ids(bytes(data[index:index + length]), new_id, {1: 32, 2: 16})
            index += length
        else:
            sys.exit("unexpected wire type %d in a stored span" % wire)
    return bytes(data)


def main():
    template, out, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    schema4 = sys.argv[sys.argv.index("--schema-4") + 1] if "--schema-4" in sys.argv else None
    shutil.copyfile(template, out)
    for suffix in ("-wal", "-shm"):
        if os.path.exists(template + suffix):
            shutil.copyfile(template + suffix, out + suffix)
    db = sqlite3.connect(out)
    columns = [row[1] for row in db.execute("PRAGMA table_info(span)")]
    encoded = "otlp_span" in columns
    rows = [r for r in db.execute(
        "SELECT span_id, trace_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, status_code, host, "
        "service, json, %s FROM span ORDER BY start_unix_nano"
        % ("otlp_span, otlp_resource" if encoded else "NULL, NULL"))
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
        for (span_id, trace_id, parent, name, kind, start, end, status, host, service, text, span_pb,
             resource_pb) in rows:
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
            if span_pb is not None:
                span_pb = rewrite_ids(span_pb, new_id, {1: 32, 2: 16, 4: 16, 13: 0})
            row = (flat["span_id"], flat["trace_id"], flat.get("parent_span_id"), name, kind, start + shift,
                   end + shift, status, host, service, json.dumps(flat, separators=(",", ":")))
            batch.append(row + ((span_pb, resource_pb) if encoded else ()))
        db.executemany(
            "INSERT INTO span (span_id, trace_id, parent_span_id, name, kind, start_unix_nano, end_unix_nano, "
            "status_code, host, service, json%s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?%s)"
            % ((", otlp_span, otlp_resource", ", ?, ?") if encoded else ("", "")), batch)
        inserted += len(batch)
    db.commit()
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.execute("VACUUM")
    db.close()
    if schema4:
        shutil.copyfile(out, schema4)
        db = sqlite3.connect(schema4)
        if encoded:
            for column in ("otlp_span", "otlp_resource", "export_request"):
                db.execute("ALTER TABLE span DROP COLUMN %s" % column)
            db.execute("DELETE FROM grdb_migrations WHERE identifier = '5-span-otlp'")
        db.commit()
        db.execute("VACUUM")
        db.close()


if __name__ == "__main__":
    main()
