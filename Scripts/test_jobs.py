#!/usr/bin/env python3
"""Runs the built test bundle as several serial test processes at once (Scripts/test.sh with
HOSTSCOPE_TEST_JOBS=N).

    python3 Scripts/test_jobs.py --jobs 3 [--filter REGEX] [--bundle .build/debug/hostscopePackageTests.xctest]

The tests are cut into pieces: each test module is a piece, except the command-line tests, where
each suite is one (they hold most of the suite's time). The pieces go longest first (by the
durations below, measured on the 2-core machine; a piece not listed counts 2 s) to N workers, each
running one piece at a time as `BUNDLE --testing-library swift-testing --no-parallel --filter PIECE`.
Within a process tests run one after another, as in a serial run; only pieces run side by side.
Each piece's output is printed whole when it ends; the run fails when a piece fails, and then ends
by printing again the failure lines of each failed piece (a log's tail then says what failed).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Seconds per piece with three workers on the quiet 2-core machine (2026-11-28); used only to start the
# long pieces first, so that the workers end together.
DURATIONS = {
    "AgentTracingTests": 90, "ChatTests": 65, "CurlHTTPTests": 42, "HostscopeCoreTests": 37,
    "SSHTransportTests": 35, "RemoteFilesTests": 32, "StorageTests": 31, "HostStatsTests": 25,
    "CLITests.HostileHostTests": 84, "CLITests.ServeCommandTests": 54, "CLITests.PhoenixTests": 50,
    "CLITests.ChatCommandTests": 35, "CLITests.ChatEditorTests": 32, "CLITests.TraceCommandTests": 31,
    "CLITests.FilesFollowAndTreeTests": 26, "CLITests.FilesGrepFlagsTests": 24, "CLITests.FilesCommandTests": 20,
    "CLITests.WatchCommandTests": 15, "CLITests.HostileTextTests": 14, "CLITests.ChatSecretsTests": 12,
    "CLITests.TraceSecretsTests": 10, "CLITests.SnapshotCommandTests": 9, "CLITests.TopCommandTests": 8,
    "CLITests.OTLPHeaderSourcesTests": 5, "CLITests.MCPStdioTests": 30, "CLITests.WebDashboardTests": 20,
    "CLITests.AlertmanagerTests": 36, "CLITests.ServeAlertsTests": 10, "CLITests.AlertsCommandTests": 8,
}
SPLIT_MODULES = {"CLITests"}


def pieces(test_ids):
    """The pieces, as (name, filter) pairs: one per module, one per suite of a split module."""
    names = []
    for test_id in test_ids:
        module, _, rest = test_id.partition(".")
        name = module
        if module in SPLIT_MODULES:
            name = module + "." + rest.split("/", 1)[0].split(".", 1)[0]
        if name not in names:
            names.append(name)
    return [(name, re.escape(name) + "[./]") for name in names]


def failure_lines(text, limit=80):
    """The lines of a piece's output that say what failed: each `✘` line and the lines that continue it."""
    kept = []
    continuing = False
    for line in text.splitlines():
        marker = line.lstrip()[:1]
        if "\u2718" in line:
            kept.append(line)
            continuing = True
        elif continuing and marker not in ("\u25c7", "\u2714", "\u21b3", ""):
            kept.append(line)
        else:
            continuing = False
    return kept[:limit]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=3)
    parser.add_argument("--filter", default=None, help="only the tests whose id matches this regular expression")
    parser.add_argument("--bundle", default=str(ROOT / ".build" / "debug" / "hostscopePackageTests.xctest"))
    options = parser.parse_args()

    listed = subprocess.run([options.bundle, "--testing-library", "swift-testing", "--list-tests"],
                            capture_output=True, text=True, check=True).stdout.split()
    test_ids = [line for line in listed if "/" in line]
    if options.filter:
        wanted = re.compile(options.filter)
        test_ids = [test_id for test_id in test_ids if wanted.search(test_id)]
    if not test_ids:
        print("test_jobs: no test matches", file=sys.stderr)
        return 1
    queue = sorted(pieces(test_ids), key=lambda piece: -DURATIONS.get(piece[0], 2))
    lock = threading.Lock()
    results = []
    begin = time.monotonic()

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                name, piece_filter = queue.pop(0)
            piece_filter = "^" + (f"(?=.*(?:{options.filter}))" if options.filter else "") + piece_filter
            with tempfile.TemporaryFile(mode="w+") as output:
                start = time.monotonic()
                status = subprocess.run(
                    [options.bundle, "--testing-library", "swift-testing", "--no-parallel", "--filter", piece_filter],
                    stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
                seconds = time.monotonic() - start
                output.seek(0)
                text = output.read()
            with lock:
                sys.stdout.write(text)
                print(f"test_jobs: {name} {'passed' if status == 0 else 'FAILED'} in {seconds:.1f} s", flush=True)
                results.append((name, status, seconds, text))

    threads = [threading.Thread(target=worker) for _ in range(max(1, options.jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    failed = [name for name, status, _, _ in results if status != 0]
    for name, status, _, text in results:
        if status != 0:
            print(f"test_jobs: what failed in {name}:")
            for line in failure_lines(text) or text.splitlines()[-40:]:
                print("    " + line)
    print(f"test_jobs: {len(results)} pieces of {len(test_ids)} tests on {options.jobs} workers in "
          f"{time.monotonic() - begin:.1f} s; " + (f"FAILED: {', '.join(failed)}" if failed else "all passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
