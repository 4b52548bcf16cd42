#!/usr/bin/env python3
"""Builds the seed corpus of each libFuzzer harness in Fuzz/ from Fixtures/.

    python3 Scripts/fuzz/build_corpora.py --out .build-fuzz/seeds [HARNESS ...]

Each harness gets a folder of seed files under --out (emptied first), written in the layout its
Swift harness reads: a selector byte before a tool's output, a NUL-ended field before a stream, and
so on (Fuzz/Sources/HostscopeFuzz/ says which). Seeds come from the captures listed in
Fixtures/manifest.tsv, the captures under every locale (Fixtures/locales/), the regression inputs, the probe recordings, the LLM streams, the JSON
goldens, and, for inputs nothing captured holds (ssh_config, known_hosts, patterns), the hand-made
seeds in Fixtures/fuzz/; the inputs that once crashed a harness (Fixtures/fuzz/crashes/HARNESS/) are
added to its seeds, so every run replays them. The output folder is git-ignored; run.sh rebuilds it before each run.
"""

import argparse
import random
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "Fixtures"
# Kept in the order of the harnesses' selector tables (HostStatsHarnesses.swift).
KERNEL_FILES = ["proc-stat", "proc-meminfo", "proc-net-dev", "proc-diskstats", "proc-loadavg", "proc-uptime",
                "proc-pid-stat", "os-release"]
TOOLS = ["mpstat", "free", "ps", "iostat", "top", "uptime", "vm_stat", "sysctl", "sw_vers", "netstat", "ip"]
MAX_SEED = 65536


def manifest():
    """(path, tool) of every capture in the manifests, regressions included."""
    entries = []
    for listing, base in [(FIXTURES / "manifest.tsv", FIXTURES),
                          (FIXTURES / "regressions" / "manifest.tsv", FIXTURES / "regressions")]:
        if not listing.exists():
            continue
        for line in listing.read_text().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) >= 2 and (base / fields[0]).is_file():
                entries.append((base / fields[0], fields[1]))
    return entries


def locale_captures():
    """(path, tool) of the captures under every locale (Fixtures/locales/LOCALE/TOOL-FLAGS.txt)."""
    return [(path, path.name.split("-")[0].split(".")[0])
            for path in sorted((FIXTURES / "locales").glob("*/*.txt"))]


def seeds(harness):
    """Yields (name, bytes) for one harness."""
    captures = manifest() + locale_captures()
    if harness == "kernel-files":
        for path, tool in captures:
            if tool in KERNEL_FILES:
                yield path.name, bytes([KERNEL_FILES.index(tool)]) + path.read_bytes()
    elif harness == "tools":
        for path, tool in captures:
            if tool in TOOLS:
                yield f"{path.parent.name}-{path.name}", bytes([TOOLS.index(tool)]) + path.read_bytes()
    elif harness == "df":
        for path, tool in captures:
            if tool == "df":
                yield f"{path.parent.name}-{path.name}", path.read_bytes()
    elif harness == "probe":
        for path in sorted((FIXTURES / "probes").glob("*/*.txt")):
            folder = path.parent.name
            if path.name == "detect.txt":
                selector = 0
            elif path.name.endswith("-details.txt"):
                selector = 5
            elif folder.startswith("macos"):
                selector = 4
            else:
                selector = 2 if path.name == "snapshot.txt" else 3
            yield path.name, bytes([selector]) + path.read_bytes()
            if selector in (2, 3):
                yield "tools-" + path.name, bytes([1]) + path.read_bytes()
    elif harness in ("ssh-config", "known-hosts", "glob", "line-pattern", "serve-request"):
        for path in sorted((FIXTURES / "fuzz" / harness).iterdir()):
            yield path.name, path.read_bytes()
    elif harness == "sse":
        for path in sorted((FIXTURES / "llm").glob("*/*.sse")):
            yield path.name, b"\x05\x11\x02\x00" + path.read_bytes()
    elif harness == "openai-stream":
        for kind, folder in enumerate(["openai", "openrouter", "gateway"]):
            for path in sorted((FIXTURES / "llm" / folder).glob("*.sse")):
                yield path.name, bytes([kind]) + b"\x07\x00" + path.read_bytes()
    elif harness == "anthropic-stream":
        for path in sorted((FIXTURES / "llm" / "anthropic").glob("*.sse")):
            yield path.name, b"\x07\x00" + path.read_bytes()
    elif harness == "json":
        for path in sorted(FIXTURES.rglob("*.json"))[:400]:
            yield path.name, path.read_bytes()
    elif harness == "otlp":
        # Spans are built from raw bytes; seed with a valid traceparent, a timestamp and random spans.
        generator = random.Random(21)
        headers = [b"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", b"2026-11-21T19:22:00.123456789Z",
                   b"2026-11-21T19:22:00+05:30", b""]
        for index, header in enumerate(headers):
            body = bytes(generator.randrange(256) for _ in range(600 * (index + 1)))
            yield f"spans-{index}", header + b"\x00" + body
    else:
        raise SystemExit(f"no seeds known for harness {harness}")
    # Inputs that once crashed a harness (each has a regression test): every run replays them first.
    crashes = FIXTURES / "fuzz" / "crashes" / harness
    if crashes.is_dir():
        for path in sorted(crashes.iterdir()):
            yield "crash-" + path.name, path.read_bytes()


def main():
    arguments = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    arguments.add_argument("--out", required=True, type=Path)
    arguments.add_argument("harnesses", nargs="+")
    options = arguments.parse_args()
    for harness in options.harnesses:
        folder = options.out / harness
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        count = 0
        for index, (name, data) in enumerate(seeds(harness)):
            (folder / f"{index:04d}-{name}").write_bytes(data[:MAX_SEED])
            count += 1
        if count == 0:
            raise SystemExit(f"harness {harness} got no seeds")


if __name__ == "__main__":
    main()
