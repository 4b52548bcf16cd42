#!/usr/bin/env python3
"""OTLP push benchmark driver (see run.sh): `hostscope trace push` of one set of stored spans to one local
receiver in each wire format, and by the build before protobuf, several runs each, interleaved; prints Markdown
tables.

    measure.py HOSTSCOPE_BINARY SPANS RUNS [BASE_BINARY]      BASE_ARGS: extra options of the base build's push
    HOSTSCOPE_BENCH_CALLGRIND=1 measure.py ...     also counts each push's instructions once under callgrind

The receiver is PyPI's rotel collector on loopback, dropping what it receives (its blackhole exporter) once it
has decoded it, so the figures are the client's. Each run pushes a fresh copy of the database. BASE_BINARY is a
build from before protobuf (the JSON push as it was); it pushes the same spans from a file of the schema it
knows (make_spans.py --schema-4), since it refuses a file of a newer schema. Bytes on the wire are the request
bodies as sent, summed from the push's own HTTP spans (`http.request.body.size`), which the base build does not
record. CPU is the push process's user + system time; instructions (callgrind's Ir, every thread) do not depend
on what else the machine is doing.
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


def fresh_copy(source, copy):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(source + suffix):
            shutil.copyfile(source + suffix, copy + suffix)
        elif os.path.exists(copy + suffix):
            os.remove(copy + suffix)


def callgrind(binary, args, env, work):
    """Instructions of one run under callgrind (every thread), with the sigsuspend shim valgrind 3.19 needs."""
    shim = os.path.join(work, "sigsuspend_copy.so")
    if not os.path.exists(shim):
        run(["cc", "-shared", "-fPIC", "-O2", "-o", shim, os.path.join(HERE, "sigsuspend_copy.c"), "-ldl"], env)
    # valgrind 3.19 cannot read the DWARF 5 of Swift's debug info: a copy without it keeps the symbols.
    stripped = os.path.join(work, os.path.basename(binary) + "-%x-nodebug" % (hash(binary) & 0xFFFF))
    if not os.path.exists(stripped):
        run(["strip", "--strip-debug", "-o", stripped, binary], env)
    out = os.path.join(work, "callgrind.out")
    result = run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, stripped] + args,
                 dict(env, LD_PRELOAD=shim), check=False)
    if result.returncode != 0:
        sys.exit("callgrind run failed (%d): %s" % (result.returncode, result.stderr[-2000:]))
    for line in result.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1].strip())
    sys.exit("no instruction count in callgrind's output: %s" % result.stderr[-2000:])


def main():
    binary, count, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    base = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
    work = tempfile.mkdtemp(prefix="hostscope-bench-otlp-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["XDG_DATA_HOME"] = work
    rotel = None
    try:
        template = template_database(binary, work, env)
        spans_db = os.path.join(work, "spans.sqlite")
        schema4_db = os.path.join(work, "spans-schema4.sqlite")
        run([sys.executable, os.path.join(HERE, "make_spans.py"), template, spans_db, str(count), "--schema-4",
             schema4_db], env)

        import rotel as rotel_package
        agent = os.path.join(os.path.dirname(rotel_package.__file__), "rotel-agent")
        port, grpc = free_port(), free_port()
        rotel = subprocess.Popen(
            [agent, "start", "--otlp-http-endpoint", "127.0.0.1:%d" % port, "--otlp-grpc-endpoint",
             "127.0.0.1:%d" % grpc, "--exporter", "blackhole", "--pid-file", os.path.join(work, "rotel.pid"),
             "--log-file", os.path.join(work, "rotel.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_port(port)

        # (key, label, binary, extra arguments, database)
        variants = []
        if base:
            # BASE_ARGS: options the base build needs to push JSON (none for a build from before protobuf).
            variants.append(("base", "OTLP/JSON by the base build", base, os.environ.get("BASE_ARGS", "").split(),
                             schema4_db))
        variants += [
            ("json", "OTLP/JSON (`--encoding json --compression none`)", binary,
             ["--encoding", "json", "--compression", "none"], spans_db),
            ("json+gzip", "OTLP/JSON + gzip", binary, ["--encoding", "json", "--compression", "gzip"], spans_db),
            ("protobuf", "protobuf", binary, ["--encoding", "protobuf", "--compression", "none"], spans_db),
            ("protobuf+gzip", "protobuf + gzip (the default)", binary, [], spans_db),
        ]
        copy = os.path.join(work, "run.sqlite")
        endpoint = "http://127.0.0.1:%d" % port
        results = {v[0]: {"seconds": [], "cpu": [], "bytes": [], "requests": []} for v in variants}
        for attempt in range(runs):
            # Turns rotate each round, so that no variant always follows the same one.
            shift = attempt % len(variants)
            for key, _, program, extra, database in variants[shift:] + variants[:shift]:
                fresh_copy(database, copy)
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                push = run([program, "trace", "push", "--endpoint", endpoint, "--db", copy] + extra, env)
                elapsed = time.perf_counter() - started
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if "pushed %d span(s)" % count not in push.stdout:
                    sys.exit("unexpected push output: %s %s" % (push.stdout, push.stderr))
                exported = run([binary, "trace", "export", "--format", "spans", "--db", copy], env).stdout
                sizes = [json.loads(line)["attributes"].get("http.request.body.size")
                         for line in exported.splitlines()
                         if json.loads(line)["attributes"].get("hostscope.telemetry.export") is True]
                result = results[key]
                result["seconds"].append(elapsed)
                result["cpu"].append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
                result["bytes"].append(None if None in sizes else sum(sizes))
                result["requests"].append(len(sizes))

        instructions = {}
        if os.environ.get("HOSTSCOPE_BENCH_CALLGRIND"):
            for key, _, program, extra, database in variants:
                fresh_copy(database, copy)
                instructions[key] = callgrind(
                    program, ["trace", "push", "--endpoint", endpoint, "--db", copy] + extra, env, work)

        reference = "base" if base else "json"
        base_rate = count / statistics.median(results[reference]["seconds"])
        base_cpu = statistics.median(results[reference]["cpu"])
        json_bytes = statistics.median(results["json"]["bytes"])
        print("| push | spans/s (median of %d) | wall (s), each run | CPU (s), median | %s"
              "requests | bytes on the wire | bytes/span | speed vs %s | CPU vs %s | bytes vs JSON |"
              % (runs, "instructions (callgrind) | " if instructions else "",
                 "base" if base else "JSON", "base" if base else "JSON"))
        print("|---|---:|---|---:|%s---:|---:|---:|---:|---:|---:|" % ("---:|" if instructions else ""))
        for key, label, _, _, _ in variants:
            result = results[key]
            rate = count / statistics.median(result["seconds"])
            cpu = statistics.median(result["cpu"])
            sizes = [b for b in result["bytes"] if b is not None]
            size = statistics.median(sizes) if sizes else None
            print("| %s | %s | %s | %.3f | %s%d | %s | %s | %.2f× | %.2f× | %s |" % (
                label, "{:,.0f}".format(rate), " ".join("%.3f" % s for s in result["seconds"]), cpu,
                "{:,} | ".format(instructions[key]) if instructions else "",
                statistics.median(result["requests"]), "{:,.0f}".format(size) if size is not None else "n/a",
                "%.0f" % (size / count) if size is not None else "n/a", rate / base_rate, base_cpu / cpu,
                "%.3f" % (size / json_bytes) if size is not None else "n/a"))
        print()
        print("%d spans (%s), each run a fresh copy of the database, the pushes taking turns in a rotating order; "
              "every run pushed them all to rotel %s on 127.0.0.1. \"CPU vs\" is how many times less CPU the push "
              "took." % (count, "watch ticks and a chat turn with tools, cloned",
                         getattr(rotel_package, "__version__", "")))
    finally:
        if rotel is not None:
            rotel.terminate()
            rotel.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
