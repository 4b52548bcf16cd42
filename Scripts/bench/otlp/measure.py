#!/usr/bin/env python3
"""OTLP push benchmark driver (see run.sh): `hostscope trace push` of one set of stored spans to one local
receiver in each wire format, several runs each, interleaved; prints a Markdown table.

    measure.py HOSTSCOPE_BINARY SPANS RUNS

The receiver is PyPI's rotel collector on loopback, dropping what it receives (its blackhole exporter) once it
has decoded it, so the figures are the client's. Each run pushes a fresh copy of the database; bytes on the
wire are the request bodies as sent, summed from the push's own HTTP spans (`http.request.body.size`).
"""

import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
FORMATS = [("json", "none"), ("json", "gzip"), ("protobuf", "none"), ("protobuf", "gzip")]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_port(port, deadline=30):
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit("nothing listens on 127.0.0.1:%d" % port)


def run(args, env, check=True):
    result = subprocess.run(args, env=env, capture_output=True, text=True)
    if check and result.returncode != 0:
        sys.exit("%s failed (%d): %s" % (" ".join(args), result.returncode, result.stderr))
    return result


def template_database(binary, work, env):
    """Real spans: snapshots and watch ticks of this machine, and a chat turn with tools on it."""
    database = os.path.join(work, "template.sqlite")
    env = dict(env, HOSTSCOPE_DB=database, OPENAI_API_KEY="sk-bench-not-a-real-key")
    run([binary, "watch", "local", "--every", "200ms", "--count", "5", "--format", "ndjson"], env)
    mock = subprocess.Popen([sys.executable, "-u", os.path.join(ROOT, "Scripts", "llm_mock_server.py"),
                             "--exit-on-stdin-eof"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        port = json.loads(mock.stdout.readline())["port"]
        run([binary, "chat", "--host", "local", "--provider", "openai", "--base-url",
             "http://127.0.0.1:%d/v1" % port, "--model", "mock-tool-loop", "--message", "Why is the disk full?",
             "--jsonl"], env)
    finally:
        mock.stdin.close()  # the server exits when its standard input closes
        mock.wait(timeout=10)
    return database


def main():
    binary, count, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    work = tempfile.mkdtemp(prefix="hostscope-bench-otlp-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["XDG_DATA_HOME"] = work
    rotel = None
    try:
        template = template_database(binary, work, env)
        spans_db = os.path.join(work, "spans.sqlite")
        run([sys.executable, os.path.join(HERE, "make_spans.py"), template, spans_db, str(count)], env)

        import rotel as rotel_package
        agent = os.path.join(os.path.dirname(rotel_package.__file__), "rotel-agent")
        port, grpc = free_port(), free_port()
        rotel = subprocess.Popen(
            [agent, "start", "--otlp-http-endpoint", "127.0.0.1:%d" % port, "--otlp-grpc-endpoint",
             "127.0.0.1:%d" % grpc, "--exporter", "blackhole", "--pid-file", os.path.join(work, "rotel.pid"),
             "--log-file", os.path.join(work, "rotel.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_port(port)

        results = {f: {"seconds": [], "cpu": [], "bytes": [], "requests": []} for f in FORMATS}
        for attempt in range(runs):
            for encoding, compression in FORMATS:
                copy = os.path.join(work, "run.sqlite")
                for suffix in ("", "-wal", "-shm"):
                    if os.path.exists(spans_db + suffix):
                        shutil.copyfile(spans_db + suffix, copy + suffix)
                    elif os.path.exists(copy + suffix):
                        os.remove(copy + suffix)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                push = run([binary, "trace", "push", "--endpoint", "http://127.0.0.1:%d" % port, "--db", copy,
                            "--encoding", encoding, "--compression", compression], env)
                elapsed = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if "pushed %d span(s)" % count not in push.stdout:
                    sys.exit("unexpected push output: %s %s" % (push.stdout, push.stderr))
                exported = run([binary, "trace", "export", "--format", "spans", "--db", copy], env).stdout
                sizes = [json.loads(line)["attributes"].get("http.request.body.size", 0)
                         for line in exported.splitlines()
                         if json.loads(line)["attributes"].get("hostscope.telemetry.export") is True]
                result = results[(encoding, compression)]
                result["seconds"].append(elapsed)
                result["cpu"].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
                result["bytes"].append(sum(sizes))
                result["requests"].append(len(sizes))

        baseline = results[("json", "none")]
        base_rate = count / statistics.median(baseline["seconds"])
        base_bytes = statistics.median(baseline["bytes"])
        print("| wire format | spans/s (median of %d) | push CPU (s) | requests | bytes on the wire | bytes/span "
              "| speed vs JSON | bytes vs JSON |" % runs)
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for encoding, compression in FORMATS:
            result = results[(encoding, compression)]
            rate = count / statistics.median(result["seconds"])
            size = statistics.median(result["bytes"])
            label = "%s%s" % ("protobuf" if encoding == "protobuf" else "OTLP/JSON",
                              " + gzip" if compression == "gzip" else "")
            print("| %s | %s | %.2f | %d | %s | %.0f | %.2f× | %.3f |" % (
                label, "{:,.0f}".format(rate), statistics.median(result["cpu"]),
                statistics.median(result["requests"]), "{:,.0f}".format(size), size / count, rate / base_rate,
                size / base_bytes))
        print()
        print("%d spans (%s), each run a fresh copy of the database, formats interleaved; every run pushed them "
              "all to rotel %s on 127.0.0.1." % (count, "watch ticks and a chat turn with tools, cloned",
                                                 getattr(rotel_package, "__version__", "")))
    finally:
        if rotel is not None:
            rotel.terminate()
            rotel.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
