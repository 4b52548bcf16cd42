#!/usr/bin/env python3
"""Drives `hostscope mcp` with the official Python MCP SDK (PyPI `mcp`) and with raw JSON-RPC lines, and checks
what comes back. Run by Tests/CLITests/MCPStdioTests.swift, one scenario per test; exits 0 when every check of
the scenario holds, else prints what failed on stderr and exits 1.

    mcp_client_check.py --binary .build/debug/hostscope --ssh-config CFG --host web1 --root DIR --db FILE \
        --scenario tour|errors|down|bounds|capture|rate-limit|raw|cancel|alerts [--trace-id HEX32 --parent-span-id HEX16]
"""
import argparse
import json
import os
import select
import subprocess
import sys
import time

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL: " + message, file=sys.stderr)


def server_args(options, extra=(), root=None):
    return ["mcp", options.host, "--ssh-config", options.ssh_config, "--root", root or options.root, "--db",
            options.db, *extra]


def text_of(result):
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def session_for(options, extra, body):
    parameters = StdioServerParameters(command=options.binary, args=server_args(options, extra),
                                       env=dict(os.environ))
    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write) as session:
            return await body(session)


# Valid arguments for every tool, against the harness host and the test's root directory.
def tool_calls(options):
    host = options.host
    return {
        "list_hosts": {},
        "host_history": {"host": host, "minutes": 60, "max_points": 10},
        "host_snapshot": {"host": host},
        "top_processes": {"host": host, "limit": 5, "sort_by": "memory"},
        "disk_usage": {"host": host},
        "list_dir": {"host": host},
        "read_file": {"host": host, "path": "notes.txt"},
        "grep": {"host": host, "pattern": "needle"},
        "tail_log": {"host": host, "path": "notes.txt", "lines": 2},
        "find_files": {"host": host, "name": "*.txt"},
        "find_spans": {"limit": 5},
        "list_alerts": {},
        "get_trace": None,  # needs an id: called after find_spans
    }


async def tour(session, options):
    init = session.initialize_result or await session.initialize()
    check(init.server_info.name == "hostscope", f"server name {init.server_info.name}")
    check(init.protocol_version == "2025-11-25", f"protocol version {init.protocol_version}")
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    check(len(tools) == 13, f"{len(tools)} tools: {sorted(tools)}")
    for tool in tools.values():
        annotations = tool.annotations
        check(annotations is not None and annotations.read_only_hint is True and annotations.destructive_hint is False
              and annotations.idempotent_hint is True and annotations.open_world_hint is not None,
              f"{tool.name} annotations {annotations}")
        check(tool.input_schema.get("additionalProperties") is False, f"{tool.name} input schema is not closed")
        check(tool.output_schema is not None, f"{tool.name} has no output schema")
        check(bool(tool.title), f"{tool.name} has no title")
    calls = tool_calls(options)
    traced_meta = None
    if options.trace_id:
        traced_meta = {"traceparent": f"00-{options.trace_id}-{options.parent_span_id}-01"}
    results = {}
    for name, arguments in calls.items():
        if arguments is None:
            continue
        meta = traced_meta if name == "host_snapshot" else None
        result = await session.call_tool(name, arguments, meta=meta)
        results[name] = result
        check(not result.is_error, f"{name} failed: {text_of(result)[:300]}")
        if result.is_error:
            continue
        check(result.structured_content is not None, f"{name} has no structured content")
        try:
            jsonschema.validate(result.structured_content, tools[name].output_schema)
        except jsonschema.ValidationError as error:
            check(False, f"{name} result does not fit its output schema: {error.message}")
        check(json.loads(text_of(result)) == result.structured_content, f"{name}: text is not the structured JSON")
    spans = (results.get("find_spans") and results["find_spans"].structured_content or {}).get("spans", [])
    # The earlier calls of this session are stored within half a second; ask again until they are.
    for _ in range(40):
        if spans:
            break
        await anyio.sleep(0.25)
        spans = (await session.call_tool("find_spans", {"limit": 5})).structured_content.get("spans", [])
    check(bool(spans), "find_spans found no span of this session's calls")
    if spans:
        result = await session.call_tool("get_trace", {"id": spans[0]["trace_id"]})
        check(not result.is_error, f"get_trace failed: {text_of(result)[:300]}")
        if not result.is_error:
            jsonschema.validate(result.structured_content, tools["get_trace"].output_schema)
            check(result.structured_content["span_count"] >= 1, "get_trace returned no span")
    snapshot = results.get("host_snapshot")
    if snapshot and not snapshot.is_error:
        check(snapshot.structured_content["snapshot"].get("host") == options.host, "snapshot of another host")
    grep = results.get("grep")
    if grep and not grep.is_error:
        check("needle" in grep.structured_content["output"], "grep did not find the needle")

    resources = (await session.list_resources()).resources
    uris = [str(resource.uri) for resource in resources]
    check("hostscope://hosts" in uris, f"resources {uris}")
    check(f"hostscope://hosts/{options.host}/snapshot" in uris, f"resources {uris}")
    templates = (await session.list_resource_templates()).resource_templates
    check([t.uri_template for t in templates] == ["hostscope://hosts/{host}/snapshot"], f"templates {templates}")
    read = await session.read_resource(f"hostscope://hosts/{options.host}/snapshot")
    check(json.loads(read.contents[0].text).get("host") == options.host, "snapshot resource of another host")
    hosts = json.loads((await session.read_resource("hostscope://hosts")).contents[0].text)
    check([h["name"] for h in hosts["hosts"]] == [options.host], f"host list {hosts}")

    prompts = [prompt.name for prompt in (await session.list_prompts()).prompts]
    check(prompts == ["host_health_summary", "disk_space_investigation", "slow_host"], f"prompts {prompts}")
    for name in prompts:
        prompt = await session.get_prompt(name, {"host": options.host})
        check(options.host in prompt.messages[0].content.text, f"prompt {name} does not name the host")


async def errors(session, options):
    await session.initialize()
    outside = await session.call_tool("host_snapshot", {"host": "elsewhere.example"})
    check(outside.is_error and "not a host this server may reach" in text_of(outside), f"outside: {text_of(outside)}")
    escape = await session.call_tool("read_file", {"host": options.host, "path": "/etc/passwd"})
    check(escape.is_error and "root" in text_of(escape) and "root:x:" not in text_of(escape),
          f"path outside root: {text_of(escape)}")
    dotdot = await session.call_tool("list_dir", {"host": options.host, "path": "../.."})
    check(dotdot.is_error, f"../.. outside root: {text_of(dotdot)}")
    wrong = await session.call_tool("top_processes", {"host": options.host, "limit": "ten"})
    check(wrong.is_error and "input schema" in text_of(wrong), f"wrong type: {text_of(wrong)}")
    extra = await session.call_tool("host_snapshot", {"host": options.host, "command": "rm -rf /"})
    check(extra.is_error and "input schema" in text_of(extra), f"unknown argument: {text_of(extra)}")
    try:
        await session.read_resource("hostscope://hosts/elsewhere.example/snapshot")
        check(False, "a resource of a host outside the set was read")
    except Exception as error:
        check("not a host this server may reach" in str(error), f"resource outside: {error}")
    missing = await session.call_tool("read_file", {"host": options.host})
    check(missing.is_error, f"missing argument: {text_of(missing)}")
    try:
        await session.call_tool("run_command", {"host": options.host})
        check(False, "an unknown tool was not a protocol error")
    except Exception as error:  # mcp.shared.exceptions.McpError
        check("no tool named run_command" in str(error), f"unknown tool: {error}")


async def down(session, options):
    await session.initialize()
    result = await session.call_tool("host_snapshot", {"host": options.down_host})
    check(result.is_error and options.down_host in text_of(result), f"host down: {text_of(result)}")


async def bounds(session, options):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    result = await session.call_tool("read_file", {"host": options.host, "path": "big.txt", "max_bytes": 65536})
    check(not result.is_error, f"read_file: {text_of(result)[:300]}")
    content = result.structured_content or {}
    jsonschema.validate(content, tools["read_file"].output_schema)
    check(content.get("truncated") is True, f"not truncated: {str(content)[:300]}")
    check(content.get("note", "").startswith("truncated: ask for less with a smaller max_bytes"), f"note: {content}")
    check(len(text_of(result).encode()) <= 4096, f"{len(text_of(result).encode())} bytes returned")
    await session.call_tool("list_hosts", {})
    await anyio.sleep(1)  # the spans of the calls reach the database every half second
    spans = await session.call_tool("find_spans", {"limit": 1})
    jsonschema.validate(spans.structured_content, tools["find_spans"].output_schema)
    check(spans.structured_content["has_more"] is True and spans.structured_content["truncated"] is True,
          f"find_spans limit 1: {spans.structured_content}")


async def capture(session, options):
    await session.initialize()
    meta = {"traceparent": f"00-{options.trace_id}-{options.parent_span_id}-01"}
    result = await session.call_tool("list_hosts", {"limit": 5}, meta=meta)
    check(not result.is_error, f"list_hosts: {text_of(result)}")


async def list_alerts(session, arguments):
    """Calls list_alerts and checks its result against the tool's output schema; returns the structured result."""
    tool = next(tool for tool in (await session.list_tools()).tools if tool.name == "list_alerts")
    result = await session.call_tool("list_alerts", arguments)
    check(not result.is_error, f"list_alerts {arguments}: {text_of(result)[:300]}")
    content = result.structured_content or {}
    try:
        jsonschema.validate(content, tool.output_schema)
    except jsonschema.ValidationError as error:
        check(False, f"list_alerts {arguments} does not fit its output schema: {error.message}")
    check(json.loads(text_of(result)) == content, "list_alerts: text is not the structured JSON")
    return content


async def check_firing_alert(session, options, source):
    """The MemoryInUse alert the test's rule raised fires on the host, with its labels and summary; the filters by
    state and host and the limit hold."""
    every = await list_alerts(session, {})
    alerts = every.get("alerts", [])
    check(every.get("source") == source, f"source {every.get('source')}, expected {source}")
    check(len(alerts) == 1 and every.get("firing") == 1 and every.get("pending") == 0, f"alerts: {every}")
    if not alerts:
        return
    alert = alerts[0]
    check(alert["name"] == "MemoryInUse" and alert["state"] == "firing" and alert["host"] == options.host,
          f"alert: {alert}")
    check(alert["labels"].get("alertname") == "MemoryInUse" and alert["labels"].get("team") == "ops",
          f"labels: {alert['labels']}")
    check(alert["annotations"].get("summary", "").startswith("memory at "), f"annotations: {alert['annotations']}")
    check(alert["fired_at"] is not None and alert["active_at"] <= alert["fired_at"], f"times: {alert}")
    check(isinstance(alert["value"], (int, float)) and 0 <= alert["value"] <= 100, f"value: {alert['value']}")
    pending = await list_alerts(session, {"state": "pending"})
    check(pending.get("alerts") == [] and pending.get("firing") == 0, f"state pending: {pending}")
    elsewhere = await list_alerts(session, {"host": "elsewhere.example"})
    check(elsewhere.get("alerts") == [], f"host elsewhere: {elsewhere}")
    mine = await list_alerts(session, {"host": options.host, "state": "firing", "limit": 1})
    check(len(mine.get("alerts", [])) == 1 and mine.get("truncated") is False, f"host and state: {mine}")
    wrong = await session.call_tool("list_alerts", {"state": "resolved"})
    check(wrong.is_error and "input schema" in text_of(wrong), f"state resolved: {text_of(wrong)}")


async def alerts(session, options):
    await session.initialize()
    await check_firing_alert(session, options, "database")


async def rate_limit(session, options):
    await session.initialize()
    answers = [await session.call_tool("list_hosts", {}) for _ in range(4)]
    check([a.is_error for a in answers] == [False, False, False, True], f"rate limit: {[text_of(a) for a in answers]}")
    check("wait" in text_of(answers[-1]) and "3 tool calls" in text_of(answers[-1]), text_of(answers[-1]))


class Raw:
    """`hostscope mcp` driven with raw JSON-RPC lines."""

    def __init__(self, options, root=None):
        self.process = subprocess.Popen([options.binary, *server_args(options, root=root)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""

    def send(self, message):
        data = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def read(self, timeout=30):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self.process.stdout], [], [], left)
            if ready:
                chunk = os.read(self.process.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def answer(self, wanted_id, timeout=30):
        """The answer to `wanted_id`, skipping notifications; None if none came."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.read(deadline - time.monotonic())
            if message is None:
                return None
            if message.get("id") == wanted_id and "method" not in message:
                return message
        return None

    def initialize(self):
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "raw", "version": "1"}}})
        answer = self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def close(self, timeout=10):
        self.process.stdin.close()
        try:
            status = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = None
        rest = self.buffer + self.process.stdout.read()
        return status, rest, self.process.stderr.read().decode(errors="replace")


def raw(options):
    raw = Raw(options)
    early = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "list_hosts", "arguments": {}}}
    raw.send(early)
    answer = raw.answer(1)
    check(answer is not None and "error" in answer, f"tool before initialize: {answer}")
    init = raw.initialize()
    check(init and init["result"]["protocolVersion"] == "2025-06-18", f"older client's version: {init}")
    raw.send(b"{not json")
    answer = raw.read()
    check(answer is not None and answer.get("error", {}).get("code") == -32700 and answer.get("id") is None,
          f"malformed JSON: {answer}")
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "hosts/reboot", "params": {}})
    answer = raw.answer(2)
    check(answer is not None and answer.get("error", {}).get("code") == -32601, f"unknown method: {answer}")
    raw.send([{"jsonrpc": "2.0", "id": 3, "method": "ping"}, {"jsonrpc": "2.0", "id": 4, "method": "ping"}])
    answer = raw.read()
    check(answer is not None and answer.get("error", {}).get("code") == -32600
          and "batch" in answer["error"]["message"], f"batch: {answer}")
    big = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
           "params": {"name": "grep", "arguments": {"host": options.host, "pattern": "x" * (2 * 1024 * 1024)}}}
    raw.send(big)
    answer = raw.read()
    check(answer is not None and answer.get("error", {}).get("code") == -32600
          and "longer than" in answer["error"]["message"], f"oversized request: {str(answer)[:300]}")
    raw.send({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
              "params": {"name": "list_hosts", "arguments": {"limit": "all"}}})
    answer = raw.answer(6)
    check(answer is not None and answer["result"]["isError"] is True, f"wrong argument type: {answer}")
    raw.send({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    check(raw.answer(7) is not None, "no answer to a ping after the bad inputs")
    status, rest, stderr = raw.close()
    check(status == 0, f"exit status {status} after stdin closed; stderr: {stderr[-500:]}")
    for line in rest.splitlines():
        if line.strip():
            try:
                json.loads(line)
            except ValueError:
                check(False, f"stdout carried a line that is not JSON-RPC: {line[:200]!r}")


def cancel(options):
    raw = Raw(options, root="/")
    raw.initialize()
    raw.send({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
              "params": {"name": "grep", "_meta": {"progressToken": "grep-1"},
                         "arguments": {"host": options.host, "pattern": "zq-never-found-qz", "path": "/usr",
                                       "fixed_string": True}}})
    progress = raw.read(timeout=30)
    check(progress is not None and progress.get("method") == "notifications/progress"
          and progress["params"]["progressToken"] == "grep-1", f"progress: {progress}")
    started = time.monotonic()
    raw.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10, "reason": "test"}})
    raw.send({"jsonrpc": "2.0", "id": 11, "method": "ping"})
    # Everything that comes from here on: the ping's answer, and for 3 s more no answer to the cancelled request
    # and no more progress once it stopped (one progress may have been on its way).
    seen = []
    pinged = None
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        message = raw.read(timeout=deadline - time.monotonic())
        if message is None:
            break
        seen.append(message)
        if message.get("id") == 11 and pinged is None:
            pinged = time.monotonic()
            deadline = pinged + 3
    check(pinged is not None, "no answer to a ping after cancelling")
    check(not any(m.get("id") == 10 for m in seen), f"the cancelled request was answered: {seen}")
    progress_after = [m for m in seen[1:] if m.get("method") == "notifications/progress"]
    check(not progress_after, f"progress went on after the cancellation: {progress_after}")
    status, _, stderr = raw.close()
    check(status == 0, f"exit status {status}; stderr: {stderr[-500:]}")
    check(time.monotonic() - started < 15, "cancelling took too long")


def main():
    parser = argparse.ArgumentParser()
    for name in ("--binary", "--ssh-config", "--host", "--root", "--db", "--scenario"):
        parser.add_argument(name, required=True)
    parser.add_argument("--trace-id")
    parser.add_argument("--parent-span-id")
    parser.add_argument("--down-host", default="down1")
    options = parser.parse_args()
    if options.scenario == "tour":
        anyio.run(session_for, options, [], lambda s: tour(s, options))
    elif options.scenario == "errors":
        anyio.run(session_for, options, [], lambda s: errors(s, options))
    elif options.scenario == "down":
        anyio.run(session_for, options, [options.down_host], lambda s: down(s, options))
    elif options.scenario == "bounds":
        anyio.run(session_for, options, ["--max-result-bytes", "4096"], lambda s: bounds(s, options))
    elif options.scenario == "capture":
        anyio.run(session_for, options, ["--capture-message-content"], lambda s: capture(s, options))
    elif options.scenario == "rate-limit":
        anyio.run(session_for, options, ["--calls-per-minute", "3"], lambda s: rate_limit(s, options))
    elif options.scenario == "raw":
        raw(options)
    elif options.scenario == "cancel":
        cancel(options)
    elif options.scenario == "alerts":
        anyio.run(session_for, options, [], lambda s: alerts(s, options))
    else:
        parser.error(f"unknown scenario {options.scenario}")
    if failures:
        sys.exit(1)
    print(f"{options.scenario}: ok")


if __name__ == "__main__":
    main()
