#!/usr/bin/env python3
"""A small HTTP/1.1 server on loopback for testing hostscope's HTTP client against real sockets.

Standard library only. It binds 127.0.0.1 (or ::1) on the given port, 0 meaning a free one, and prints one
JSON line on stdout when it is ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "scheme": "http", "blackhole_port": 40124}

Endpoints (any method unless noted; query parameters in brackets):

    /echo                    200 JSON: method, path, query, headers (as [name, value] pairs), body, body_length
    /status/CODE [header=Name:Value ...] [body=TEXT]
                             answer CODE with those headers, e.g. /status/429?header=Retry-After:3
    /stream [frames=5] [interval_ms=100] [id=NAME] [gate=1] [pad=0]
                             text/event-stream, chunked: one `data: {"n": i}` frame per chunk, then
                             `data: [DONE]`; with gate=1 it sends the first frame and waits for POST /gate/NAME
    /streams/NAME            GET: what /stream?id=NAME did: {"sent", "completed", "disconnected"}
    /gate/NAME               POST: lets a gated stream go on
    /stall [seconds=30]      read the request, answer nothing until the time is up or the client leaves
    /stall-body [seconds=30] send the head and one frame, then nothing
    /drop [mode=length|chunked] [bytes=100]
                             send part of a body and close the connection (length: Content-Length promises
                             twice as much; chunked: no final chunk)
    /close                   close the connection without answering
    /garbage                 answer with bytes that are not HTTP
    /bytes [count=N] [chunked=0|1] [chunk=16384]
                             N body bytes, byte i being i % 251, for integrity checks

The blackhole port accepts no connection: its listen queue is kept full, so a client's connect attempt
hangs until its connect timeout, as towards a host that drops packets.

Options: --port N, --host 127.0.0.1|::1, --tls-cert FILE --tls-key FILE (serve https),
--exit-on-stdin-eof (stop when the parent process goes away), --verbose (log method and path to stderr,
never query strings or header values).
"""

import argparse
import base64
import ipaddress
import json
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from test_server_common import blackhole, client_gone, exit_on_signals, watch_stdin


class StreamRecord:
    """What one named /stream did, for tests that check the client really went away."""

    def __init__(self):
        self.sent = 0
        self.completed = False
        self.disconnected = False
        self.gate = threading.Event()


class State:
    def __init__(self):
        self.lock = threading.Lock()
        self.streams = {}

    def stream(self, name):
        with self.lock:
            return self.streams.setdefault(name, StreamRecord())


STATE = State()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "hostscope-test-server"
    sys_version = ""

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("%s %s\n" % (self.command, urllib.parse.urlsplit(self.path).path))

    def do_GET(self):
        self.route()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_GET

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def route(self):
        parts = urllib.parse.urlsplit(self.path)
        self.query = urllib.parse.parse_qs(parts.query, keep_blank_values=True)
        path = parts.path
        body = self.read_body()
        try:
            if path == "/echo":
                self.echo(parts, body)
            elif path.startswith("/status/"):
                self.status(path[len("/status/"):])
            elif path == "/stream":
                self.stream()
            elif path.startswith("/streams/"):
                self.stream_record(path[len("/streams/"):])
            elif path.startswith("/gate/"):
                STATE.stream(path[len("/gate/"):]).gate.set()
                self.send_json(200, {"opened": True})
            elif path == "/stall":
                self.stall()
            elif path == "/stall-body":
                self.stall_body()
            elif path == "/drop":
                self.drop()
            elif path == "/close":
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
            elif path == "/garbage":
                self.wfile.write(b"THIS IS NOT HTTP\r\n\r\n")
                self.close_connection = True
            elif path == "/bytes":
                self.send_pattern()
            else:
                self.send_json(404, {"error": "no such endpoint: %s" % path})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def param(self, name, default):
        values = self.query.get(name)
        return values[0] if values else default

    def send_json(self, code, obj, extra_headers=()):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def echo(self, parts, body):
        self.send_json(200, {
            "method": self.command,
            "path": parts.path,
            "query": parts.query,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body": body.decode("utf-8", errors="replace"),
            "body_base64": base64.b64encode(body).decode(),
            "body_length": len(body),
        })

    def status(self, code_text):
        code = int(code_text)
        text = self.param("body", "")
        data = text.encode()
        self.send_response(code)
        for header in self.query.get("header", []):
            name, _, value = header.partition(":")
            self.send_header(name.strip(), value.strip())
        if code not in (204, 304) and not (100 <= code < 200):
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if data and self.command != "HEAD" and code not in (204, 304):
            self.wfile.write(data)

    def start_chunked(self, content_type="text/event-stream"):
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def stream(self):
        frames = int(self.param("frames", "5"))
        interval = int(self.param("interval_ms", "100")) / 1000.0
        gated = self.param("gate", "0") == "1"
        pad = "x" * int(self.param("pad", "0"))
        name = self.param("id", "")
        record = STATE.stream(name) if name else StreamRecord()
        self.start_chunked()
        try:
            for n in range(frames):
                frame = {"n": n}
                if pad:
                    frame["pad"] = pad
                self.chunk(b"data: " + json.dumps(frame).encode() + b"\n\n")
                with STATE.lock:
                    record.sent += 1
                if n == 0 and gated:
                    while not record.gate.wait(0.05):
                        if client_gone(self.connection):
                            raise ConnectionResetError()
                elif n < frames - 1:
                    time.sleep(interval)
            self.chunk(b"data: [DONE]\n\n")
            self.end_chunked()
            record.completed = True
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            record.disconnected = True
            self.close_connection = True

    def stream_record(self, name):
        record = STATE.stream(name)
        with STATE.lock:
            self.send_json(200, {"sent": record.sent, "completed": record.completed,
                                 "disconnected": record.disconnected})

    def wait_or_leave(self, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if client_gone(self.connection):
                return False
            time.sleep(0.05)
        return True

    def stall(self):
        if self.wait_or_leave(float(self.param("seconds", "30"))):
            self.send_json(200, {"late": True})
        else:
            self.close_connection = True

    def stall_body(self):
        self.start_chunked()
        self.chunk(b'data: {"n": 0}\n\n')
        if self.wait_or_leave(float(self.param("seconds", "30"))):
            self.end_chunked()
        else:
            self.close_connection = True

    def drop(self):
        mode = self.param("mode", "length")
        count = int(self.param("bytes", "100"))
        data = b"d" * count
        if mode == "chunked":
            self.start_chunked("application/octet-stream")
            self.chunk(data)
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(count * 2))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def send_pattern(self):
        count = int(self.param("count", "1024"))
        chunked = self.param("chunked", "0") == "1"
        size = int(self.param("chunk", "16384"))
        pattern = bytes(i % 251 for i in range(251 * 64))
        if chunked:
            self.start_chunked("application/octet-stream")
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(count))
            self.end_headers()
            if self.command == "HEAD":
                return
        offset = 0
        while offset < count:
            n = min(size, count - offset)
            start = offset % 251
            data = (pattern[start:] * ((n // len(pattern)) + 2))[:n]
            if chunked:
                self.chunk(data)
            else:
                self.wfile.write(data)
            offset += n
        if chunked:
            self.end_chunked()
        self.wfile.flush()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, tls_context, verbose, family):
        self.address_family = family
        self.tls_context = tls_context
        self.verbose = verbose
        super().__init__(address, Handler)

    def finish_request(self, request, client_address):
        # The TLS handshake happens here, on the request's own thread, so a slow client cannot block accept().
        if self.tls_context is not None:
            request = self.tls_context.wrap_socket(request, server_side=True)
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        # A client that rejects our certificate or hangs up is part of the tests, not a server failure.
        if self.verbose:
            super().handle_error(request, client_address)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one (default)")
    parser.add_argument("--tls-cert", help="PEM certificate: serve https")
    parser.add_argument("--tls-key", help="PEM private key for --tls-cert")
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    parser.add_argument("--verbose", action="store_true", help="log method and path of each request to stderr")
    args = parser.parse_args(argv)
    exit_on_signals()

    if not ipaddress.ip_address(args.host).is_loopback:
        parser.error("--host must be a loopback address; this server is for tests on this machine only")
    family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
    context = None
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
    server = Server((args.host, args.port), context, args.verbose, family)
    _listener, _fillers, hole = blackhole(args.host, family)
    if args.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"event": "listening", "host": args.host, "port": server.server_address[1],
                      "scheme": "https" if context else "http", "blackhole_port": hole}), flush=True)
    server.serve_forever(poll_interval=0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
