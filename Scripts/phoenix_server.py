#!/usr/bin/env python3
"""Arize Phoenix (PyPI `arize-phoenix`) on loopback, for tests that push traces to a real LLM-tracing backend.

It picks free loopback ports for Phoenix's HTTP server (OTLP/HTTP `POST /v1/traces`, the REST API under `/v1/`,
the UI) and its gRPC OTLP receiver, keeps its database in a fresh temporary working directory, and prints one
JSON line on stdout once the HTTP port answers:

    {"event": "listening", "host": "127.0.0.1", "port": 40123, "grpc_port": 40124, "working_dir": "/tmp/..."}

Phoenix takes its host and ports from PHOENIX_HOST, PHOENIX_PORT and PHOENIX_GRPC_PORT, but binds its gRPC
receiver on every interface ([::]) whatever PHOENIX_HOST says; this script rewrites that one bind to 127.0.0.1
before Phoenix starts, so nothing it runs listens beyond this machine. Telemetry, the assistant and
external resources are off, so it reaches nothing beyond this machine either. With
--exit-on-stdin-eof it exits when its standard input closes (the test process went away); its working
directory is removed on exit.

Exit status 3 (with a sentence on stderr) when Phoenix is not installed: `pip install arize-phoenix`.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import urllib.request


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def keep_grpc_on_loopback():
    """Phoenix's gRPC server calls add_insecure_port("[::]:PORT"); bind it to 127.0.0.1 instead."""
    import grpc.aio

    server_type = type(grpc.aio.server())
    original = server_type.add_insecure_port

    def loopback_only(self, address):
        port = address.rsplit(":", 1)[-1]
        return original(self, "127.0.0.1:" + port)

    server_type.add_insecure_port = loopback_only


def wait_until_ready(port, deadline, announce):
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/healthz" % port, timeout=2) as response:
                if response.status == 200:
                    announce()
                    return
        except OSError:
            pass
        time.sleep(0.2)
    sys.stderr.write("phoenix did not answer on 127.0.0.1:%d in time\n" % port)
    os._exit(4)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--exit-on-stdin-eof", action="store_true", help="exit when standard input closes")
    parser.add_argument("--ready-timeout", type=float, default=180, help="seconds to wait for Phoenix to start")
    args = parser.parse_args()

    try:
        import phoenix.server.main as phoenix_main  # noqa: F401 (imported here to fail early and clearly)
    except ImportError as exc:
        sys.stderr.write("arize-phoenix is not installed (%s): pip install arize-phoenix\n" % exc)
        return 3

    working_dir = tempfile.mkdtemp(prefix="hostscope-phoenix-")
    http_port = free_port()
    grpc_port = free_port()
    os.environ.update({
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(http_port),
        "PHOENIX_GRPC_PORT": str(grpc_port),
        "PHOENIX_WORKING_DIR": working_dir,
        "PHOENIX_TELEMETRY_ENABLED": "false",
        # Nothing that reaches beyond this machine: no assistant (its documentation server is remote), no
        # external resources, and quiet database logging.
        "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        "PHOENIX_ENABLE_MCP_SERVER": "false",
        "PHOENIX_DB_LOGGING_LEVEL": "warning",
        "PHOENIX_LOGGING_LEVEL": "warning",
    })
    for name in ("PHOENIX_SQL_DATABASE_URL", "PHOENIX_ENABLE_AUTH", "PHOENIX_COLLECTOR_ENDPOINT"):
        os.environ.pop(name, None)

    def cleanup(*_):
        shutil.rmtree(working_dir, ignore_errors=True)
        os._exit(0)

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    signal.signal(signal.SIGTERM, cleanup)
    signal.signal(signal.SIGINT, cleanup)
    if args.exit_on_stdin_eof:
        def watch_stdin():
            while sys.stdin.buffer.read(4096):
                pass
            cleanup()
        threading.Thread(target=watch_stdin, daemon=True).start()

    keep_grpc_on_loopback()

    # Phoenix prints its banner and logs on stdout; the ready line must be the only line there, so everything
    # else goes to stderr and the ready line to a duplicate of the real stdout.
    sys.stdout.flush()
    ready_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def announce():
        ready_out.write(json.dumps({"event": "listening", "host": "127.0.0.1", "port": http_port,
                                    "grpc_port": grpc_port, "working_dir": working_dir}) + "\n")
        ready_out.flush()

    threading.Thread(target=wait_until_ready, args=(http_port, time.monotonic() + args.ready_timeout, announce),
                     daemon=True).start()
    sys.argv = ["phoenix", "serve"]
    try:
        phoenix_main.main()
    finally:
        shutil.rmtree(working_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
