#!/usr/bin/env python3
"""A webhook receiver on loopback for Alertmanager's webhook payload (version 4), for testing alert routing.

It binds 127.0.0.1 on the given port (0: a free one) and prints one JSON line on stdout when ready:

    {"event": "listening", "host": "127.0.0.1", "port": 40123}

Endpoints:

    POST /hook          a webhook payload; answered 200 and kept (the next `fail` count answered 500 instead)
    GET  /received      JSON: {"payloads": [...every payload kept, in order...],
                               "authorizations": [...the Authorization header of each, "" when absent...]}
    POST /control/fail  JSON {"count": 2}: answer the next `count` hooks with 500

Options: --port N, --exit-on-stdin-eof (exit when standard input closes, so a test that dies leaves no server).
"""
import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_server_common import exit_on_signals, watch_stdin  # noqa: E402

LOCK = threading.Lock()
PAYLOADS = []
AUTHORIZATIONS = []
FAILURES = {"count": 0}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self):
        if self.path == "/received":
            with LOCK:
                self.answer(200, {"payloads": list(PAYLOADS), "authorizations": list(AUTHORIZATIONS)})
        else:
            self.answer(404, {"error": "no such path"})

    def do_POST(self):
        data = self.body()
        if self.path == "/control/fail":
            with LOCK:
                FAILURES["count"] = json.loads(data or b"{}").get("count", 1)
            self.answer(200, {})
        elif self.path == "/hook":
            with LOCK:
                if FAILURES["count"] > 0:
                    FAILURES["count"] -= 1
                    self.answer(500, {"error": "failing on purpose"})
                    return
                PAYLOADS.append(json.loads(data))
                AUTHORIZATIONS.append(self.headers.get("Authorization", ""))
            self.answer(200, {})
        else:
            self.answer(404, {"error": "no such path"})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args()
    exit_on_signals()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.exit_on_stdin_eof:
        threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"event": "listening", "host": "127.0.0.1", "port": server.server_address[1]}), flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
