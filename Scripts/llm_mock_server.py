#!/usr/bin/env python3
"""A mock LLM server on loopback that replays recorded-format SSE streams of four providers.

Standard library only. It binds 127.0.0.1 (or ::1) on the given port, 0 meaning a free one, and prints one
JSON line on stdout when it is ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "scheme": "http", "blackhole_port": 40124}

Base URLs, following each provider's SDK convention (the client appends the rest):

    OpenAI       http://127.0.0.1:PORT/v1          POST /v1/chat/completions
    OpenRouter   http://127.0.0.1:PORT/api/v1      POST /api/v1/chat/completions
    Anthropic    http://127.0.0.1:PORT             POST /v1/messages
    gateway      http://127.0.0.1:PORT/gateway     POST /gateway/v1/chat/completions
                                                   GET  /gateway/v1/chat/completions/SESSION/status
                                                   DELETE /gateway/v1/chat/completions/SESSION

The scenario comes from the `X-Mock-Scenario` header, else from a last question starting with `mock:SCENARIO`
(stages then count the tool results since that question), else from a model named `mock-SCENARIO`; any other
model name is answered 404 "model not found" in the provider's error format. A scenario NAME replays
Fixtures/llm/PROVIDER/NAME.sse (dashes become underscores; OpenRouter falls back to the OpenAI files), or,
for multi-step tool loops, NAME_1.sse, NAME_2.sse, ... chosen by how many tool results the request carries.
In fixtures, {{model}}, {{stage}} and {{session_id}} are replaced per request.

Scenarios beyond the fixture files:

    error-401 error-403 error-429 error-500 error-503
                 that status with the provider's error body (429 and 503 carry Retry-After: 7); the 401
                 message echoes the key it was given and the value of every X-Custom-* header, as careless
                 servers do, so clients can prove they scrub them
    disconnect   replay disconnect.sse, then drop the connection without ending the chunked body
    rate-limited-once
                 the first such request since the start (or /reset) is answered 429 with Retry-After: 1,
                 the following ones replay text.sse: a rate limit that lifts
    slow         replay slow.sse one frame every 100 ms (X-Mock-Interval-Ms changes it)
    stall-head   read the request and answer nothing until the client leaves
    stall-body   send the first three frames of text.sse, then nothing until the client leaves
    bench        X-Mock-Frames (10000) OpenAI text chunks of X-Mock-Content-Bytes (1000) characters each,
                 one HTTP chunk per frame, written as fast as the socket takes them

Pacing: one HTTP chunk per SSE frame; `X-Mock-Chunk-Bytes: N` cuts the body into N-byte chunks instead
(splitting CRLF pairs and UTF-8 characters), `X-Mock-Interval-Ms: MS` waits between chunks.

Checks, as the real APIs make them: the OpenAI-style endpoints want `Authorization: Bearer KEY` (the gateway
accepts none), Anthropic wants `x-api-key`, `anthropic-version` and `max_tokens`; every request must ask for
a stream; every tool call in the conversation must be answered by a tool result (else 400 naming the ids).

    GET  /requests   every request: method, path, provider, scenario, stage, headers with secret values
                     replaced by REDACTED, which auth header was present, traceparent, the JSON body, the
                     status answered and, for streams, frames sent / completed / whether the client left
    POST /reset      forget requests and gateway sessions

Options: --port N, --host 127.0.0.1|::1, --fixtures DIR (default: Fixtures/llm beside Scripts/),
--exit-on-stdin-eof (stop when the parent process goes away), --verbose (log method and path to stderr).
"""

import argparse
import ipaddress
import json
import os
import socket
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from test_server_common import blackhole, client_gone, exit_on_signals, watch_stdin

SECRET_FRAGMENTS = ("auth", "token", "secret", "password", "api-key", "apikey", "api_key", "cookie", "session",
                    "credential", "signature")


class GatewaySession:
    def __init__(self, session_id):
        self.session_id = session_id
        self.status = "running"
        self.input_tokens = 0
        self.output_tokens = 0
        self.total_cost = 0.0
        self.tool_calls = 0
        self.requests = 0
        self.stopped = threading.Event()

    def summary(self):
        return {"session_id": self.session_id, "status": self.status, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "total_cost": round(self.total_cost, 8),
                "tool_calls": self.tool_calls, "requests": self.requests}


class State:
    def __init__(self, fixtures):
        self.fixtures = fixtures
        self.lock = threading.Lock()
        self.requests = []
        self.sessions = {}
        self.session_counter = 0
        self.limited = False

    def record(self, entry):
        with self.lock:
            entry["index"] = len(self.requests)
            self.requests.append(entry)
        return entry

    def new_session(self):
        with self.lock:
            self.session_counter += 1
            session = GatewaySession("sess_%04d" % self.session_counter)
            self.sessions[session.session_id] = session
            return session

    def session(self, session_id):
        with self.lock:
            return self.sessions.get(session_id)

    def reset(self):
        with self.lock:
            self.requests = []
            self.sessions = {}
            self.limited = False


def split_frames(data):
    """Cuts an SSE body after each blank line (LF LF, CRLF CRLF or CR CR), keeping every byte."""
    frames, start, i = [], 0, 0
    while i < len(data):
        for sep in (b"\r\n\r\n", b"\n\n", b"\r\r"):
            if data.startswith(sep, i):
                frames.append(data[start:i + len(sep)])
                i += len(sep)
                start = i
                break
        else:
            i += 1
    if start < len(data):
        frames.append(data[start:])
    return frames


def count_tool_results(provider, body):
    messages = body.get("messages") or []
    if provider == "anthropic":
        return sum(1 for m in messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                   for block in m["content"] if isinstance(block, dict) and block.get("type") == "tool_result")
    return sum(1 for m in messages if m.get("role") == "tool")


def message_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text") or "" for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def message_scenario(provider, body):
    """(NAME, tool results since the question) when the last question starts with `mock:NAME`, else None."""
    messages = body.get("messages") or []
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") != "user":
            continue
        text = message_text(message.get("content")).lstrip()
        if provider == "anthropic" and not text:
            continue  # a user message of tool results
        if not text.startswith("mock:"):
            return None
        name = text[5:].split(None, 1)[0] if len(text) > 5 else ""
        return (name, count_tool_results(provider, {"messages": messages[index + 1:]})) if name else None
    return None


def missing_tool_results(provider, body):
    """The tool call ids that no tool result answers, checked the way each API checks them."""
    messages = body.get("messages") or []
    missing = []
    if provider == "anthropic":
        for i, message in enumerate(messages):
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, list):
                continue
            ids = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
            following = messages[i + 1] if i + 1 < len(messages) else {}
            answered = {b.get("tool_use_id") for b in following.get("content") or []
                        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("content") not in (None, "")}
            missing += [(i, tid) for tid in ids if tid not in answered]
        return missing
    for i, message in enumerate(messages):
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        answered = set()
        for later in messages[i + 1:]:
            if later.get("role") != "tool":
                break
            if later.get("content") not in (None, ""):
                answered.add(later.get("tool_call_id"))
        missing += [(i, call.get("id")) for call in message["tool_calls"] if call.get("id") not in answered]
    return missing


def error_body(provider, status, kind, message):
    if provider == "anthropic":
        return {"type": "error", "error": {"type": kind, "message": message}}
    if provider == "gateway":
        return {"error": {"code": kind, "message": message, "status": status}}
    return {"error": {"message": message, "type": kind, "param": None, "code": kind}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostscope-llm-mock"
    sys_version = ""

    def setup(self):
        super().setup()
        # Streaming servers send each frame at once; with Nagle's algorithm the first frame after the head
        # would wait for the client's delayed ACK (40 ms on Linux) and time-to-first-token figures would
        # measure that instead of the client.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("%s %s\n" % (self.command, urllib.parse.urlsplit(self.path).path))

    def do_GET(self):
        self.route()

    do_POST = do_DELETE = do_PUT = do_GET

    @property
    def state(self):
        return self.server.state

    def route(self):
        path = urllib.parse.urlsplit(self.path).path
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        try:
            if path == "/requests" and self.command == "GET":
                with self.state.lock:
                    self.send_json(200, {"requests": self.state.requests})
            elif path == "/reset" and self.command == "POST":
                self.state.reset()
                self.send_json(200, {"reset": True})
            elif path == "/v1/chat/completions" and self.command == "POST":
                self.chat("openai", path, raw)
            elif path == "/api/v1/chat/completions" and self.command == "POST":
                self.chat("openrouter", path, raw)
            elif path == "/v1/messages" and self.command == "POST":
                self.chat("anthropic", path, raw)
            elif path == "/gateway/v1/chat/completions" and self.command == "POST":
                self.chat("gateway", path, raw)
            elif path.startswith("/gateway/v1/chat/completions/"):
                self.gateway_control(path, raw)
            else:
                self.send_json(404, {"error": {"message": "no such endpoint: %s %s" % (self.command, path)}})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    # Recording

    def recorded_headers(self):
        headers, auth = [], {}
        for name, value in self.headers.items():
            lower = name.lower()
            if lower == "authorization":
                auth["authorization"] = value.split(" ", 1)[0] if " " in value else "present"
            elif lower == "x-api-key":
                auth["x-api-key"] = "present" if value else "empty"
            secret = any(fragment in lower for fragment in SECRET_FRAGMENTS)
            headers.append([name, "REDACTED" if secret else value])
        return headers, auth

    def new_record(self, provider, path, raw):
        headers, auth = self.recorded_headers()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        return {"method": self.command, "path": path, "provider": provider, "headers": headers, "auth": auth,
                "traceparent": self.headers.get("traceparent"), "body": body,
                "body_text": None if body is not None else raw.decode("utf-8", "replace")[:2000],
                "scenario": None, "stage": None, "status": None,
                "stream": {"frames_sent": 0, "completed": False, "disconnected": False}}

    # Chat endpoints

    def chat(self, provider, path, raw):
        record = self.state.record(self.new_record(provider, path, raw))
        body = record["body"]
        if not isinstance(body, dict):
            return self.fail(record, provider, 400, "invalid_request_error", "the request body is not a JSON object")
        model = body.get("model") or ""
        asked = message_scenario(provider, body)
        scenario = (self.headers.get("X-Mock-Scenario") or (asked and asked[0])
                    or (model[5:] if model.startswith("mock-") else None))
        record["scenario"] = scenario
        if provider == "anthropic":
            if not self.headers.get("x-api-key"):
                return self.fail(record, provider, 401, "authentication_error", "x-api-key header is required")
            if not self.headers.get("anthropic-version"):
                return self.fail(record, provider, 400, "invalid_request_error",
                                 "anthropic-version: header is required")
            if not isinstance(body.get("max_tokens"), int):
                return self.fail(record, provider, 400, "invalid_request_error", "max_tokens: Field required")
        elif provider != "gateway":
            authorization = self.headers.get("Authorization") or ""
            if not authorization.startswith("Bearer ") or not authorization[7:].strip():
                return self.fail(record, provider, 401, "invalid_api_key",
                                 "You didn't provide an API key. You need to provide your API key in an "
                                 "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
        if body.get("stream") is not True:
            return self.fail(record, provider, 400, "invalid_request_error", "this mock serves streams only")
        missing = missing_tool_results(provider, body)
        if missing:
            ids = ", ".join(tid or "?" for _, tid in missing)
            if provider == "anthropic":
                message = ("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: "
                           "%s. Each `tool_use` block must have a corresponding `tool_result` block in the next "
                           "message." % (missing[0][0], ids))
            else:
                message = ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                           "each 'tool_call_id'. The following tool_call_ids did not have response messages: %s" % ids)
            return self.fail(record, provider, 400, "invalid_request_error", message)
        if scenario is None:
            return self.fail(record, provider, 404, "not_found_error" if provider == "anthropic" else "model_not_found",
                             "The model `%s` does not exist or you do not have access to it." % model)
        # A scenario the last question names counts the tool results of that turn only: earlier turns of the
        # conversation had scenarios of their own.
        stage = asked[1] if asked and not self.headers.get("X-Mock-Scenario") else count_tool_results(provider, body)
        record["stage"] = stage

        if scenario == "rate-limited-once":
            with self.state.lock:
                first = not self.state.limited
                self.state.limited = True
            if first:
                return self.fail(record, provider, 429,
                                 "rate_limit_error" if provider == "anthropic" else "rate_limit_exceeded",
                                 "Rate limit reached for requests per minute. Please try again in 1s.",
                                 [("Retry-After", "1")])
            scenario = "text"
        if scenario.startswith("error-"):
            return self.injected_error(record, provider, scenario[len("error-"):])
        if scenario == "stall-head":
            return self.stall_head(record)

        session = None
        if provider == "gateway":
            session = self.state.session(body.get("session_id") or "") or self.state.new_session()
            with self.state.lock:
                session.requests += 1
                session.status = "running"
                session.stopped.clear()
        values = {"model": model, "stage": str(stage), "session_id": session.session_id if session else ""}

        if scenario == "bench":
            return self.bench(record, model)
        if scenario == "stall-body":
            data = self.fixture(provider, "text", stage, values)
            if data is None:
                return self.fail(record, provider, 404, "model_not_found", "no text fixture for %s" % provider)
            return self.stream(record, split_frames(data)[:3], stall=True)

        data = self.fixture(provider, scenario, stage, values)
        if data is None:
            return self.fail(record, provider, 404, "model_not_found",
                             "The model `%s` does not exist or you do not have access to it "
                             "(the mock has no scenario %r for %s)." % (model, scenario, provider))
        chunk_bytes = int(self.headers.get("X-Mock-Chunk-Bytes") or 0)
        if chunk_bytes > 0:
            pieces = [data[i:i + chunk_bytes] for i in range(0, len(data), chunk_bytes)]
        else:
            pieces = split_frames(data)
        default_interval = 100 if scenario == "slow" else 0
        interval = int(self.headers.get("X-Mock-Interval-Ms") or default_interval) / 1000.0
        self.stream(record, pieces, interval=interval, drop=scenario == "disconnect", session=session)

    def fixture(self, provider, scenario, stage, values):
        name = scenario.replace("-", "_")
        folders = [provider] + (["openai"] if provider == "openrouter" else [])
        for folder in folders:
            base = os.path.join(self.state.fixtures, folder)
            plain = os.path.join(base, name + ".sse")
            if os.path.isfile(plain):
                path = plain
            else:
                staged = sorted((f for f in os.listdir(base) if f.startswith(name + "_") and f.endswith(".sse")
                                 and f[len(name) + 1:-4].isdigit()), key=lambda f: int(f[len(name) + 1:-4]))
                if not staged:
                    continue
                path = os.path.join(base, staged[min(stage, len(staged) - 1)])
            with open(path, "rb") as handle:
                data = handle.read()
            for key, value in values.items():
                data = data.replace(b"{{" + key.encode() + b"}}", value.encode())
            return data
        return None

    def fail(self, record, provider, status, kind, message, extra_headers=()):
        record["status"] = status
        self.send_json(status, error_body(provider, status, kind, message), extra_headers)

    def injected_error(self, record, provider, code):
        status = int(code) if code.isdigit() else 500
        if status == 401:
            key = self.headers.get("x-api-key") or (self.headers.get("Authorization") or "")[7:]
            kind = "authentication_error" if provider == "anthropic" else "invalid_api_key"
            echoed = "".join(" (%s: %s)" % (name, value) for name, value in self.headers.items()
                             if name.lower().startswith("x-custom-"))
            return self.fail(record, provider, 401, kind,
                             "Incorrect API key provided: %s%s. You can find your API key in your account settings."
                             % (key, echoed))
        if status == 403:
            return self.fail(record, provider, 403, "permission_error",
                             "Your API key does not have permission to use the specified resource.")
        if status == 429:
            return self.fail(record, provider, 429, "rate_limit_error" if provider == "anthropic" else "rate_limit_exceeded",
                             "Rate limit reached for requests per minute. Please try again in 7s.",
                             [("Retry-After", "7")])
        if status == 503:
            return self.fail(record, provider, 503, "overloaded_error", "The service is temporarily overloaded.",
                             [("Retry-After", "7")])
        return self.fail(record, provider, status, "api_error" if provider == "anthropic" else "server_error",
                         "The server had an error while processing your request. Sorry about that!")

    def stall_head(self, record):
        deadline = time.monotonic() + float(self.headers.get("X-Mock-Stall-S") or 30)
        while time.monotonic() < deadline:
            if client_gone(self.connection):
                record["stream"]["disconnected"] = True
                self.close_connection = True
                return
            time.sleep(0.05)
        self.fail(record, "openai", 504, "timeout", "stalled")

    # Streaming

    def start_stream(self, record):
        record["status"] = 200
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def write_chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def stream(self, record, pieces, interval=0.0, drop=False, stall=False, session=None):
        self.start_stream(record)
        progress = record["stream"]
        try:
            for index, piece in enumerate(pieces):
                if session is not None and session.stopped.is_set():
                    self.write_chunk(b'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
                                     b'"finish_reason":"stopped"}],"session_id":"' + session.session_id.encode()
                                     + b'"}\n\ndata: [DONE]\n\n')
                    break
                if interval > 0 and index > 0:
                    if not self.wait(interval):
                        raise ConnectionResetError()
                self.write_chunk(piece)
                with self.state.lock:
                    progress["frames_sent"] += 1
                if session is not None:
                    self.account(session, piece)
            if stall:
                while not client_gone(self.connection):
                    time.sleep(0.05)
                raise ConnectionResetError()
            if drop:
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            progress["completed"] = True
            if session is not None:
                with self.state.lock:
                    session.status = "stopped" if session.stopped.is_set() else "completed"
        except (BrokenPipeError, ConnectionResetError, OSError):
            progress["disconnected"] = True
            self.close_connection = True
            if session is not None:
                with self.state.lock:
                    if session.status == "running":
                        session.status = "disconnected"

    def wait(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if client_gone(self.connection):
                return False
            time.sleep(min(0.01, max(0.0, deadline - time.monotonic())))
        return True

    def account(self, session, piece):
        for line in piece.decode("utf-8", "replace").splitlines():
            if not line.startswith("data:"):
                continue
            try:
                frame = json.loads(line[5:].strip())
            except ValueError:
                continue
            if not isinstance(frame, dict):
                continue
            with self.state.lock:
                if frame.get("object") == "usage":
                    session.input_tokens += int(frame.get("input_tokens") or 0)
                    session.output_tokens += int(frame.get("output_tokens") or 0)
                    session.total_cost += float(frame.get("total_cost") or 0)
                elif frame.get("object") == "tool_use":
                    session.tool_calls += 1

    def bench(self, record, model):
        frames = int(self.headers.get("X-Mock-Frames") or 10000)
        size = int(self.headers.get("X-Mock-Content-Bytes") or 1000)
        content = ("abcdefghij" * (size // 10 + 1))[:size]
        template = json.dumps({"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1741570900,
                               "model": model, "choices": [{"index": 0, "delta": {"content": content},
                                                            "logprobs": None, "finish_reason": None}]},
                              separators=(",", ":")).encode()
        frame = b"data: " + template + b"\n\n"
        chunk = b"%x\r\n%s\r\n" % (len(frame), frame)
        tail = (b'data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},'
                b'"finish_reason":"stop"}]}\n\ndata: {"id":"chatcmpl-bench","object":"chat.completion.chunk",'
                b'"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":%d,"total_tokens":%d}}\n\n'
                b'data: [DONE]\n\n' % (frames, frames + 10))
        self.start_stream(record)
        try:
            batch = 64
            for start in range(0, frames, batch):
                self.wfile.write(chunk * min(batch, frames - start))
            self.write_chunk(tail)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            record["stream"]["frames_sent"] = frames + 1
            record["stream"]["completed"] = True
        except (BrokenPipeError, ConnectionResetError, OSError):
            record["stream"]["disconnected"] = True
            self.close_connection = True

    # Gateway session endpoints

    def gateway_control(self, path, raw):
        rest = path[len("/gateway/v1/chat/completions/"):]
        record = self.state.record(self.new_record("gateway", path, raw))
        if rest.endswith("/status") and self.command == "GET":
            session = self.state.session(rest[:-len("/status")])
            if session is None:
                return self.fail(record, "gateway", 404, "session_not_found", "no session %s" % rest[:-7])
            record["status"] = 200
            with self.state.lock:
                return self.send_json(200, session.summary())
        if "/" not in rest and self.command == "DELETE":
            session = self.state.session(rest)
            if session is None:
                return self.fail(record, "gateway", 404, "session_not_found", "no session %s" % rest)
            with self.state.lock:
                session.stopped.set()
                session.status = "stopped"
            record["status"] = 200
            return self.send_json(200, {"session_id": rest, "status": "stopped"})
        self.fail(record, "gateway", 405, "method_not_allowed", "%s %s is not supported" % (self.command, path))

    def send_json(self, code, obj, extra_headers=()):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, state, verbose, family):
        self.address_family = family
        self.state = state
        self.verbose = verbose
        super().__init__(address, Handler)

    def handle_error(self, request, client_address):
        # A client that hangs up mid-stream is part of the tests, not a server failure.
        if self.verbose:
            super().handle_error(request, client_address)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--fixtures", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                           "Fixtures", "llm"), help="folder of recorded streams")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    parser.add_argument("--verbose", action="store_true", help="log method and path of each request to stderr")
    args = parser.parse_args(argv)
    exit_on_signals()
    if not ipaddress.ip_address(args.host).is_loopback:
        parser.error("--host must be a loopback address; this server is for tests on this machine only")
    if not os.path.isdir(args.fixtures):
        parser.error("no fixtures folder at %s" % args.fixtures)
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    server = Server((args.host, args.port), State(os.path.abspath(args.fixtures)), args.verbose, family)
    _listener, _fillers, hole = blackhole(args.host, family)
    if args.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"event": "listening", "host": args.host, "port": server.server_address[1], "scheme": "http",
                      "blackhole_port": hole}), flush=True)
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
