#!/usr/bin/env python3
"""Writes sample-spans.ndjson: four traces in the flat span format (`trace export --format spans`) with fixed
ids and times, for the goldens of `trace list` and `trace show`:

- a snapshot of web1 that worked (connect with its three phases, two commands);
- a snapshot of db-primary that failed to connect;
- a chat turn: two model calls around a tool call that searched files;
- a files command whose root span is not stored (its parent id names a span that is not there).

  python3 Fixtures/traces/make_sample_spans.py > Fixtures/traces/sample-spans.ndjson
"""
import json
from datetime import datetime, timezone

BASE = 1_795_000_000_000_000_000  # 2026-11-18T11:06:40Z in nanoseconds
RESOURCE = {"service.name": "hostscope", "service.version": "0.1.0", "host.name": "test-host"}


def stamp(ns):
    seconds, rest = divmod(ns, 1_000_000_000)
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % rest


def span(trace, span_id, parent, name, kind, start_ms, end_ms, attributes=None, error=None, events=None, at=0):
    start = BASE + at * 1_000_000_000 + int(round(start_ms * 1_000_000))
    end = BASE + at * 1_000_000_000 + int(round(end_ms * 1_000_000))
    status = {"code": "error", "message": error} if error else {"code": "ok"} if kind != "internal" else {
        "code": "unset"}
    return {
        "trace_id": trace, "span_id": span_id, "parent_span_id": parent, "name": name, "kind": kind,
        "start": stamp(start), "end": stamp(end), "duration_ms": (end - start) / 1e6, "status": status,
        "attributes": attributes or {}, "events": events or [], "links": [], "resource": RESOURCE,
    }


A = "4bf92f3577b34da6a3ce929d0e0e4736"
B = "a3ce929d0e0e47364bf92f3577b34da6"
C = "0e0e4736a3ce929d4bf92f3577b34da6"
D = "77b34da64bf92f35a3ce929d0e0e4736"
spans = [
    span(A, "3f9a2c1d8e7b6a50", None, "collect snapshot", "internal", 0, 412.3,
         {"hostscope.host": "web1", "hostscope.collector": "proc", "hostscope.collection.mode": "snapshot"}),
    span(A, "6e1d4b0a9c3f2e87", "3f9a2c1d8e7b6a50", "ssh connect web1", "client", 0.2, 180.4,
         {"server.address": "web1", "server.port": 22, "hostscope.ssh.auth.method": "publickey"}),
    span(A, "a2c4e6f8091b3d5f", "6e1d4b0a9c3f2e87", "ssh tcp connect", "client", 0.3, 2.1),
    span(A, "0f9e8d7c6b5a4938", "6e1d4b0a9c3f2e87", "ssh handshake", "client", 2.2, 120.0),
    span(A, "d41d8cd98f00b204", "6e1d4b0a9c3f2e87", "ssh auth", "client", 120.5, 179.9),
    span(A, "e99a18c428cb38d5", "3f9a2c1d8e7b6a50", "ssh exec", "client", 181.0, 400.2,
         {"process.command_args": ["sh", "-c", "probe"], "process.exit.code": 0}),
    span(A, "5f4dcc3b5aa765d6", "3f9a2c1d8e7b6a50", "ssh exec", "client", 401.0, 411.7,
         {"process.command_args": ["sh", "-c", "names"], "process.exit.code": 0}),

    span(B, "b7ad6b7169203331", None, "collect snapshot", "internal", 0, 5021.0,
         {"hostscope.host": "db-primary", "hostscope.collector": "proc", "hostscope.error.kind": "connect"},
         error="cannot connect to db-primary (10.0.0.7:22): connection refused", at=5),
    span(B, "00f067aa0ba902b7", "b7ad6b7169203331", "ssh connect db-primary", "client", 0.4, 5020.5,
         {"server.address": "db-primary", "server.port": 22},
         error="connection refused", at=5),
    span(B, "9c3f2e871d4b0a6e", "00f067aa0ba902b7", "ssh tcp connect", "client", 0.5, 5020.1,
         error="connection refused", at=5),

    span(C, "c93f1b2a7d4e5f60", None, "invoke_agent hostscope", "internal", 0, 8250.0,
         {"gen_ai.operation.name": "invoke_agent", "gen_ai.request.model": "gpt-4o"}, at=200),
    span(C, "1b2a7d4e5f60c93f", "c93f1b2a7d4e5f60", "chat gpt-4o", "client", 1.0, 2400.0,
         {"gen_ai.operation.name": "chat", "server.address": "api.openai.com"}, at=200),
    span(C, "7d4e5f60c93f1b2a", "c93f1b2a7d4e5f60", "execute_tool grep", "internal", 2401.0, 2690.5,
         {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "grep", "hostscope.host": "web1"}, at=200),
    span(C, "5f60c93f1b2a7d4e", "7d4e5f60c93f1b2a", "files.grep", "client", 2410.0, 2688.0,
         {"server.address": "web1", "file.path": "/srv/app"}, at=200),
    span(C, "3f1b2a7d4e5f60c9", "c93f1b2a7d4e5f60", "chat gpt-4o", "client", 2691.0, 8249.0,
         {"gen_ai.operation.name": "chat", "server.address": "api.openai.com"}, at=200),

    span(D, "8a7b6c5d4e3f2a1b", "d0d0cafe12345678", "files.cat", "client", 0, 0.42,
         {"server.address": "web1", "file.path": "/etc/hosts"}, at=300),
]
for item in spans:
    print(json.dumps(item, separators=(",", ":")))
