#!/usr/bin/env python3
"""Drives `hostscope serve`'s /mcp (MCP over Streamable HTTP) with the official Python MCP SDK (PyPI `mcp`) and
with raw HTTP requests, and checks what comes back. Run by Tests/CLITests/MCPHTTPTests.swift, one scenario per
test; exits 0 when every check of the scenario holds, else prints what failed on stderr and exits 1.

    mcp_http_check.py --url http://127.0.0.1:PORT/mcp --token-file FILE --host web1 --root DIR \
        --scenario tour|guards|subscribe|disconnect|disconnect-json|alerts [--serve-pid PID --sshd-port PORT]
"""
import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import time
import urllib.parse

import anyio
import jsonschema
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mcp_client_check import check, check_firing_alert, failures, list_alerts, text_of

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "raw", "version": "1"}}}


async def session_for(options, body, on_message=None):
    headers = {"Authorization": f"Bearer {options.token}"}
    async with create_mcp_http_client(headers=headers) as client:
        async with streamable_http_client(options.url, http_client=client) as (read, write):
            async with ClientSession(read, write, message_handler=on_message) as session:
                await session.initialize()
                return await body(session)


def tool_calls(options):
    host, root = options.host, options.root
    return {
        "list_hosts": {},
        "host_history": {"host": host, "minutes": 60, "max_points": 10},
        "host_snapshot": {"host": host},
        "top_processes": {"host": host, "limit": 5},
        "disk_usage": {"host": host},
        "list_dir": {"host": host, "path": root},
        "read_file": {"host": host, "path": root + "/notes.txt"},
        "grep": {"host": host, "pattern": "needle", "path": root},
        "tail_log": {"host": host, "path": root + "/notes.txt", "lines": 2},
        "find_files": {"host": host, "path": root, "name": "*.txt"},
        "find_spans": {"limit": 5},
        "list_alerts": {},
    }


async def tour(session, options):
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(len(tools) == 13, f"{len(tools)} tools: {sorted(tools)}")
    progress = []

    async def on_progress(value, total, message):
        progress.append(message)

    for name, arguments in tool_calls(options).items():
        result = await session.call_tool(name, arguments, progress_callback=on_progress if name == "grep" else None)
        check(not result.is_error, f"{name} failed: {text_of(result)[:300]}")
        if result.is_error:
            continue
        try:
            jsonschema.validate(result.structured_content, tools[name].output_schema)
        except jsonschema.ValidationError as error:
            check(False, f"{name} result does not fit its output schema: {error.message}")
        check(json.loads(text_of(result)) == result.structured_content, f"{name}: text is not the structured JSON")
        if name == "host_snapshot":
            content = result.structured_content
            check(content["snapshot"].get("host") == options.host, f"snapshot of another host: {content}")
            # Read from serve's watch (no probe run for the call, so no exit status of one).
            check(content.get("exit_code") is None, f"host_snapshot probed the host anew: {str(content)[:200]}")
        if name == "grep":
            check("needle" in result.structured_content["output"], "grep did not find the needle")
    check(progress and progress[0] == "grep started", f"progress of grep: {progress}")
    outside = await session.call_tool("host_snapshot", {"host": "elsewhere.example"})
    check(outside.is_error and "not a host this server may reach" in text_of(outside), f"outside: {text_of(outside)}")
    read = await session.read_resource(f"hostscope://hosts/{options.host}/snapshot")
    check(json.loads(read.contents[0].text).get("host") == options.host, "snapshot resource of another host")
    prompts = [prompt.name for prompt in (await session.list_prompts()).prompts]
    check(len(prompts) == 3, f"prompts {prompts}")


async def subscribe(session, options):
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", "") == "notifications/resources/updated":
            updates.append(str(root.params.uri))

    session._message_handler = on_message
    uri = f"hostscope://hosts/{options.host}/snapshot"
    await session.subscribe_resource(uri)
    # serve ticks every second; two updates must come within 15 s.
    with anyio.move_on_after(15):
        while len(updates) < 2:
            await anyio.sleep(0.1)
    check(len(updates) >= 2 and set(updates) == {uri}, f"resource updates: {updates}")
    await session.unsubscribe_resource(uri)
    await anyio.sleep(0.5)
    seen = len(updates)
    await anyio.sleep(3)
    check(len(updates) == seen, f"updates after unsubscribing: {updates[seen:]}")
    try:
        await session.subscribe_resource("hostscope://hosts/elsewhere.example/snapshot")
        check(False, "a subscription to a host outside the set was accepted")
    except Exception as error:
        check("not a host this server may reach" in str(error), f"subscription outside: {error}")


async def alerts(session, options):
    """serve evaluates the test's rule: list_alerts shows its alert firing once `for` has passed."""
    with anyio.move_on_after(20):
        while (await list_alerts(session, {"state": "firing"})).get("firing", 0) < 1:
            await anyio.sleep(0.5)
    await check_firing_alert(session, options, "serve")


class Raw:
    """Plain HTTP requests to /mcp."""

    def __init__(self, options):
        self.url = urllib.parse.urlsplit(options.url)
        self.options = options

    def request(self, method, body=None, headers=None, token=True, path=None):
        connection = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=30)
        sent = {"Accept": "application/json, text/event-stream"}
        if body is not None:
            sent["Content-Type"] = "application/json"
        if token:
            sent["Authorization"] = f"Bearer {self.options.token}"
        sent.update(headers or {})
        data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
        connection.request(method, path or self.url.path, body=data, headers=sent)
        response = connection.getresponse()
        text = response.read().decode(errors="replace")
        connection.close()
        return response.status, response.headers, text

    def initialize(self):
        status, headers, text = self.request("POST", INITIALIZE)
        check(status == 200, f"initialize: {status} {text[:300]}")
        session = headers.get("Mcp-Session-Id")
        self.request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                     headers={"Mcp-Session-Id": session})
        return session, json.loads(text)


def guards(options):
    raw = Raw(options)
    status, _, text = raw.request("GET", path="/", headers={"Accept": "application/json"})
    check(status == 200 and "/mcp" in json.loads(text)["endpoints"], f"GET / endpoint index: {status} {text[:300]}")
    status, _, text = raw.request("POST", INITIALIZE, token=False)
    check(status == 401 and "bearer token" in text, f"no token: {status} {text[:200]}")
    status, _, text = raw.request("POST", INITIALIZE, headers={"Origin": "http://evil.example"})
    check(status == 403 and "evil.example" in text, f"foreign origin: {status} {text[:200]}")
    status, _, text = raw.request("POST", INITIALIZE, headers={"Origin": "null"})
    check(status == 403, f"null origin: {status} {text[:200]}")
    own = f"http://127.0.0.1:{raw.url.port}"
    status, headers, text = raw.request("POST", INITIALIZE, headers={"Origin": own})
    check(status == 200 and headers.get("Mcp-Session-Id"), f"own origin: {status} {text[:200]}")
    session, init = raw.initialize()
    check(init["result"]["protocolVersion"] == "2025-06-18", f"older client's version: {init}")
    check(re.fullmatch(r"[0-9a-f]{32}", session or "") is not None, f"session id {session!r}")
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, _, text = raw.request("POST", ping)
    check(status == 400 and "Mcp-Session-Id" in text, f"no session: {status} {text[:200]}")
    status, _, text = raw.request("POST", ping, headers={"Mcp-Session-Id": "0" * 32})
    check(status == 404 and "no MCP session" in text, f"unknown session: {status} {text[:200]}")
    status, _, text = raw.request("POST", ping, headers={"Mcp-Session-Id": session})
    check(status == 200 and json.loads(text).get("id") == 1, f"ping: {status} {text[:200]}")
    status, _, text = raw.request("POST", b"{not json", headers={"Mcp-Session-Id": session})
    check(status == 400 and json.loads(text)["error"]["code"] == -32700, f"malformed: {status} {text[:200]}")
    status, _, text = raw.request("POST", [ping, ping], headers={"Mcp-Session-Id": session})
    check(status == 400 and "batch" in text, f"batch: {status} {text[:200]}")
    status, _, text = raw.request("POST", {"jsonrpc": "2.0", "id": 2, "method": "hosts/reboot"},
                                  headers={"Mcp-Session-Id": session})
    check(status == 200 and json.loads(text)["error"]["code"] == -32601, f"unknown method: {status} {text[:200]}")
    big = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
           "params": {"name": "grep", "arguments": {"host": options.host, "pattern": "x" * (2 << 20)}}}
    status, _, text = raw.request("POST", big, headers={"Mcp-Session-Id": session})
    check(status == 413, f"oversized body: {status} {text[:200]}")
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "list_hosts", "arguments": {"limit": "all"}}}
    status, _, text = raw.request("POST", call, headers={"Mcp-Session-Id": session, "Accept": "application/json"})
    check(status == 200 and json.loads(text)["result"]["isError"] is True, f"wrong argument type: {text[:200]}")
    status, _, text = raw.request("PUT", ping, headers={"Mcp-Session-Id": session})
    check(status == 405, f"PUT: {status} {text[:200]}")
    # Bodies stay refused everywhere else.
    status, _, text = raw.request("GET", b"{}", path="/api/v1/hosts")
    check(status == 413 and "body_not_accepted" in text, f"body on another route: {status} {text[:200]}")
    status, _, text = raw.request("POST", b"{}", path="/api/v1/hosts")
    check(status == 405, f"POST on another route: {status} {text[:200]}")
    status, _, text = raw.request("DELETE", headers={"Mcp-Session-Id": session})
    check(status == 200, f"DELETE: {status} {text[:200]}")
    status, _, text = raw.request("POST", ping, headers={"Mcp-Session-Id": session})
    check(status == 404, f"after DELETE: {status} {text[:200]}")


def sftp_servers(options):
    """The host's SFTP server processes serving serve's SSH connections to the harness sshd (root only: it reads
    /proc of the test user's processes)."""
    out = subprocess.run(["ss", "-tnpH", "state", "established", "dst", f"127.0.0.1:{options.sshd_port}"],
                         capture_output=True, text=True).stdout
    ports = [line.split()[2].rsplit(":", 1)[1] for line in out.splitlines() if f"pid={options.serve_pid}," in line]
    servers = []
    for port in ports:
        out = subprocess.run(["ss", "-tnpH", "state", "established", "src", f"127.0.0.1:{options.sshd_port}",
                              "dst", f"127.0.0.1:{port}"], capture_output=True, text=True).stdout
        for pid in re.findall(r"pid=(\d+)", out):
            for child in subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split():
                with open(f"/proc/{child}/cmdline", "rb") as file:
                    if b"internal-sftp" in file.read():
                        servers.append(int(child))
    return sorted(set(servers))


def open_under(pid, prefix):
    """The files below `prefix` that process `pid` holds open."""
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(prefix):
            held.append(target)
    return held


def reads(pid):
    with open(f"/proc/{pid}/io") as file:
        return int(re.search(r"syscr: (\d+)", file.read()).group(1))


def disconnect(options, streamed=True):
    """A long grep over HTTP whose client goes away: the host's SFTP server stops working for it at once and holds
    none of its files open (the session's one SFTP channel stays, for the next call). `streamed`: the client takes
    an event stream; else it takes JSON only."""
    raw = Raw(options)
    session, _ = raw.initialize()
    url = raw.url
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    call = {"jsonrpc": "2.0", "id": 10, "method": "tools/call",
            "params": {"name": "grep", "_meta": {"progressToken": "grep-1"},
                       "arguments": {"host": options.host, "pattern": "zq-never-found-qz", "path": "/usr",
                                     "fixed_string": True}}}
    accept = "application/json, text/event-stream" if streamed else "application/json"
    headers = {"Accept": accept, "Content-Type": "application/json", "Authorization": f"Bearer {options.token}",
               "Mcp-Session-Id": session}
    connection.request("POST", url.path, body=json.dumps(call).encode(), headers=headers)
    response = connection.getresponse()
    kind = "text/event-stream" if streamed else "application/json"
    check(response.status == 200 and response.headers.get("Content-Type", "").startswith(kind),
          f"tool call answer: {response.status} {response.headers}")
    progress = None if streamed else {"params": {"progressToken": "grep-1"}}
    deadline = time.monotonic() + 20
    while progress is None and time.monotonic() < deadline:
        line = response.fp.readline().decode(errors="replace")
        if line.startswith("data: ") and "notifications/progress" in line:
            progress = json.loads(line[6:])
            break
        if not line:
            break
    check(progress is not None and progress["params"]["progressToken"] == "grep-1", f"progress: {progress}")
    # Let the grep walk for a moment: the host's SFTP server is busy reading /usr.
    time.sleep(1.5)
    servers = sftp_servers(options)
    check(len(servers) == 1, f"SFTP servers of serve's connections: {servers}")
    if len(servers) != 1:
        return
    server = servers[0]
    before = reads(server)
    time.sleep(0.5)
    check(reads(server) > before, "the grep was not reading on the host")
    connection.sock.close()
    connection.close()
    # Within 3 s of the client going away (the stream is written to every second), the work has stopped: the
    # SFTP server makes no more reads and holds no file of /usr open.
    time.sleep(3)
    settled = reads(server)
    time.sleep(1)
    check(reads(server) == settled, f"the host's SFTP server still works: {reads(server) - settled} reads in 1 s")
    held = open_under(server, "/usr/")
    check(not held, f"files the cancelled grep left open on the host: {held}")
    check(sftp_servers(options) == [server], "the session's SFTP channel was not kept for the next call")
    status, _, text = raw.request("POST", {"jsonrpc": "2.0", "id": 11, "method": "ping"},
                                  headers={"Mcp-Session-Id": session})
    check(status == 200, f"ping after the disconnect: {status} {text[:200]}")
    if not streamed:
        # A quick call answered as JSON still reads as one JSON-RPC answer.
        quick = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        body = {"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "list_hosts", "arguments": {}}}
        quick.request("POST", url.path, body=json.dumps(body).encode(), headers=headers)
        answer = quick.getresponse()
        text = answer.read().decode()
        check(answer.status == 200 and json.loads(text)["result"]["structuredContent"]["hosts"][0]["name"]
              == options.host, f"list_hosts as JSON: {answer.status} {text[:300]}")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--url", "--token-file", "--host", "--root", "--scenario"):
        parser.add_argument(name, required=True)
    parser.add_argument("--serve-pid", type=int)
    parser.add_argument("--sshd-port", type=int)
    options = parser.parse_args()
    with open(options.token_file) as file:
        options.token = file.readline().strip()
    scenarios = {
        "tour": lambda: anyio.run(session_for, options, lambda s: tour(s, options)),
        "subscribe": lambda: anyio.run(session_for, options, lambda s: subscribe(s, options)),
        "guards": lambda: guards(options),
        "disconnect": lambda: disconnect(options),
        "disconnect-json": lambda: disconnect(options, streamed=False),
        "alerts": lambda: anyio.run(session_for, options, lambda s: alerts(s, options)),
    }
    if options.scenario not in scenarios:
        parser.error(f"unknown scenario {options.scenario}; one of {', '.join(scenarios)}")
    scenarios[options.scenario]()
    sys.exit(1 if failures else print(f"{options.scenario}: ok"))

if __name__ == "__main__":
    main()
