#!/usr/bin/env python3
"""The MCP layer's cost, measured by a Python client over stdio against `hostscope mcp` (see README.md).

    bench_mcp.py --binary .build/release/hostscope --host web1 [--ssh-config FILE] [--iterations 50]

- start-up: process start to the `initialize` answer;
- tools/list: one request's round trip on a warm session;
- the same core call made directly (`hostscope mcp HOST --time-direct-snapshots N`: `HostTools.snapshot()` on a
  warm session, no MCP), each call's time around it less its `duration_ms`: the core's own steps outside the
  collector's clock, the baseline the MCP figures are compared with in the same run;
- host_snapshot on a warm session, call by call, measured three ways from one run:
  - client side: the round trip less the snapshot's own `duration_ms` (the collector's time for the same call,
    measured by the core around its work): an upper bound on what MCP adds, with the client's JSON work, both
    pipe transfers and the core's steps outside the collector's clock in it;
  - server side: the request's SERVER span (from the moment the transport handed the request over, before it was
    parsed, to the moment the answer was handed back to the transport), read from the spans the run stored, less
    the same `duration_ms`: hostscope's own time outside the collection;
  - what lies outside the server: the round trip less the span.
  The client side is given twice: to the answer's arrival (its last byte read) and with the client's own
  `json.loads` of it; the MCP layer's share is each less the direct call's figure (difference of medians).
  Also, as before: the difference of the medians of the round trip and of the `ssh exec` work below the span.
"""
import argparse
import http.client
import json
import os
import select
import sqlite3
import statistics
import subprocess
import tempfile
import time
import urllib.parse


class Server:
    def __init__(self, arguments):
        self.process = subprocess.Popen(arguments, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL)
        self.buffer = b""
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        wanted = self.next_id
        message = {"jsonrpc": "2.0", "id": wanted, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()
        while True:
            while b"\n" not in self.buffer:
                select.select([self.process.stdout], [], [], 60)
                chunk = os.read(self.process.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise RuntimeError("the server closed its output")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            self.arrived = time.perf_counter()
            self.answer_bytes = len(line)
            answer = json.loads(line)
            if answer.get("id") == wanted:
                return answer

    def initialize(self):
        answer = self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "bench", "version": "1"}})
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()
        return answer

    def close(self):
        self.process.stdin.close()
        self.process.wait(30)


class HTTPServer:
    """serve's /mcp over one kept-alive HTTP/1.1 connection, answers as JSON."""

    def __init__(self, url, token):
        parts = urllib.parse.urlsplit(url)
        self.path = parts.path
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            self.headers["Authorization"] = f"Bearer {token}"
        self.next_id = 0

    def post(self, message):
        self.connection.request("POST", self.path, body=json.dumps(message).encode(), headers=self.headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status not in (200, 202):
            raise RuntimeError(f"{response.status}: {body[:300]!r}")
        return response, body

    def request(self, method, params):
        self.next_id += 1
        return json.loads(self.post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})[1])

    def initialize(self):
        response, _ = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "bench", "version": "1"}}})
        self.headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
        self.headers["MCP-Protocol-Version"] = "2025-11-25"
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})


def timed(function):
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


def summary(values):
    values = sorted(values)
    if not values:
        return "no values"
    return f"{statistics.median(values):8.3f} ms  p90 {values[int(len(values) * 0.9) - 1]:8.3f} ms"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--host", required=True)
    parser.add_argument("--ssh-config")
    parser.add_argument("--direct-binary", help="the hostscope that times the direct core call (default: --binary), "
                        "so an older --binary without --time-direct-snapshots can be measured against it")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--url", help="also measure serve's /mcp at this URL (serve watching --host)")
    parser.add_argument("--token-file", help="serve's token file, for --url")
    options = parser.parse_args()
    database = tempfile.mktemp(suffix=".sqlite")
    arguments = [options.binary, "mcp", options.host, "--db", database, "--calls-per-minute", "100000"]
    if options.ssh_config:
        arguments += ["--ssh-config", options.ssh_config]

    startups = []
    for _ in range(min(20, options.iterations)):
        started = time.perf_counter()
        server = Server(arguments)
        server.initialize()
        startups.append((time.perf_counter() - started) * 1000)
        server.close()

    # The same core call made directly, without MCP: the time around each warm call less its duration_ms.
    timing = [options.direct_binary or options.binary] + arguments[1:]
    timing += ["--time-direct-snapshots", str(options.iterations)]
    lines = subprocess.run(timing, capture_output=True, check=True, timeout=600).stdout.decode().splitlines()
    core_direct = [call["elapsed_ms"] - call["duration_ms"] for call in map(json.loads, lines)]

    server = Server(arguments)
    server.initialize()
    lists = [timed(lambda: server.request("tools/list", {})) for _ in range(options.iterations)]
    call = {"name": "host_snapshot", "arguments": {"host": options.host}}
    server.request("tools/call", call)  # warm: the SSH session opens here
    snapshots = {}
    # The collector's own time for each call (the snapshot's duration_ms: the probe run over the open
    # session, its parsing and the process details), by request id.
    collector = {}
    sizes = []
    arrivals = {}
    for _ in range(options.iterations):
        started = time.perf_counter()
        answer = server.request("tools/call", call)
        elapsed = (time.perf_counter() - started) * 1000
        snapshots[answer["id"]] = elapsed
        arrivals[answer["id"]] = (server.arrived - started) * 1000
        sizes.append(server.answer_bytes)
        own = ((answer.get("result") or {}).get("structuredContent") or {}).get("snapshot", {}).get("duration_ms")
        if own is not None:
            collector[answer["id"]] = own
    server.close()

    # From the spans the run stored: each warm call's SERVER span, and the ssh exec work below it.
    connection = sqlite3.connect(database)
    spans = dict(connection.execute(
        "SELECT CAST(json_extract(json, '$.attributes.\"jsonrpc.request.id\"') AS INTEGER), "
        "end_unix_nano - start_unix_nano FROM span WHERE name = 'tools/call host_snapshot'").fetchall())
    rows = connection.execute(
        "SELECT p.span_id, SUM(c.end_unix_nano - c.start_unix_nano) FROM span p JOIN span c "
        "ON c.parent_span_id = p.span_id WHERE p.name = 'tools/call host_snapshot' "
        "GROUP BY p.span_id ORDER BY p.start_unix_nano").fetchall()
    core = [nanoseconds / 1e6 for _, nanoseconds in rows[1:]]
    os.unlink(database)
    calls = [key for key in snapshots if key in collector and key in spans]
    server_side = [spans[key] / 1e6 for key in calls]

    print(f"start-up to initialize answer   {summary(startups)}")
    print(f"tools/list                      {summary(lists)}")
    print(f"host_snapshot through MCP       {summary(snapshots.values())}")
    if core:
        print(f"host_snapshot core work         {summary(core)}")
        print(f"MCP layer (median difference)   "
              f"{statistics.median(snapshots.values()) - statistics.median(core):8.3f} ms")
    if calls:
        print(f"host_snapshot collector's own   {summary(collector[key] for key in calls)}")
        print(f"host_snapshot SERVER span       {summary(server_side)}")
        client = [snapshots[key] - collector[key] for key in calls]
        arrival = [arrivals[key] - collector[key] for key in calls]
        print(f"direct core call: elapsed - duration_ms {summary(core_direct)}")
        print(f"client side, to the answer's arrival    {summary(arrival)}")
        print(f"client side: round trip - duration_ms   {summary(client)}")
        print(f"  the client's json.loads of the answer {summary(snapshots[key] - arrivals[key] for key in calls)}")
        print(f"MCP's share: client side less direct    "
              f"{statistics.median(client) - statistics.median(core_direct):8.3f} ms "
              f"(to the arrival {statistics.median(arrival) - statistics.median(core_direct):.3f} ms)")
        print(f"server side: span - duration_ms         {summary(spans[key] / 1e6 - collector[key] for key in calls)}")
        print(f"outside the server: round trip - span   {summary(snapshots[key] - spans[key] / 1e6 for key in calls)}")
        print(f"({len(calls)} calls; answers of {min(sizes)}-{max(sizes)} bytes, the text copy included)")
    if options.url:
        token = open(options.token_file).readline().strip() if options.token_file else None
        remote = HTTPServer(options.url, token)
        remote.initialize()
        pings = [timed(lambda: remote.request("ping", {})) for _ in range(options.iterations)]
        lists = [timed(lambda: remote.request("tools/list", {})) for _ in range(options.iterations)]
        watched = [timed(lambda: remote.request("tools/call", call)) for _ in range(options.iterations)]
        print(f"HTTP ping                       {summary(pings)}")
        print(f"HTTP tools/list                 {summary(lists)}")
        print(f"HTTP host_snapshot (watch)      {summary(watched)}")


if __name__ == "__main__":
    main()
