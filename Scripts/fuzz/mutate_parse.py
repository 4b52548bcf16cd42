#!/usr/bin/env python3
"""Feeds mutated copies of the captured tool outputs in Fixtures/ to `hostscope parse TOOL -`
and reports every run that crashed (ended by a signal: a Swift runtime trap is SIGILL or
SIGTRAP) or hung.

Each input is a fixture from Fixtures/manifest.tsv changed by one to three mutations: bytes
flipped (to control characters, NUL, 0xFF, ...), the text cut, a range or line repeated, lines
shuffled, lines spliced in from another capture, and numbers replaced by hostile figures (huge
values, 2^64, negative, `nan`, `inf`, exponents, suffixed sizes such as `99999999999P`). A
tenth of the inputs go to another tool's parser than the fixture's own.

    python3 Scripts/fuzz/mutate_parse.py --count 20000
    python3 Scripts/fuzz/mutate_parse.py --count 20000 --seed 7 --jobs 2 --out /tmp/hostscope-fuzz

Runs are deterministic for a given --seed. Crashing and hanging inputs are written to --out
(one file per input, named after the tool, with what crashed in a .txt beside it); the summary groups them by the runtime's message and the first frame in
Sources/ (from a second run with Swift's backtracer on). The exit status is 0 when nothing
crashed or hung, 1 otherwise.

--extra DIR adds the files under DIR (e.g. /work/shared/fixtures) that sit at a manifest path
but differ from the project's copy; such files should be copied into Fixtures/ so that what
the fuzzer found can be reproduced from the project alone.
"""

import argparse
import concurrent.futures
import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]

# Figures a host could print where a count or size is expected.
HOSTILE_NUMBERS = [
    b"99999999999999999999999",
    b"18446744073709551616",
    b"18446744073709551615",
    b"9223372036854775808",
    b"9223372036854775807",
    b"4294967296",
    b"340282366920938463463374607431768211456",
    b"-1",
    b"-99999999999999999999",
    b"nan",
    b"NaN",
    b"-nan",
    b"inf",
    b"-inf",
    b"Infinity",
    b"1e308",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"0x1p70",
    b"1.8e19",
    b"99999999999999999999.5",
    b"99999999999P",
    b"99999999999E",
    b"1e30G",
    b"16E",
    b"nanK",
    b"infM",
    b"0",
    b"",
]

NUMBER = re.compile(rb"-?\d+(?:[.,]\d+)?")
BYTE_VALUES = [0x00, 0x07, 0x09, 0x0A, 0x0D, 0x1B, 0x20, 0x25, 0x2C, 0x2D, 0x2E, 0x3A, 0x7F, 0x9B, 0xC2, 0xFF]


def load_seeds(fixtures: Path, extra: list[Path]) -> list[tuple[str, str, bytes]]:
    """(relative path, tool, bytes) of every manifest entry, plus differing copies under `extra`."""
    seeds = []
    known = {}
    for line in (fixtures / "manifest.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        relative, tool = line.split("\t")[:2]
        if tool.startswith("tool"):
            continue
        data = (fixtures / relative).read_bytes()
        seeds.append((relative, tool, data))
        known[relative] = hashlib.sha256(data).hexdigest()
    for directory in extra:
        if not directory.is_dir():
            continue
        for relative, tool in [(s[0], s[1]) for s in list(seeds)]:
            path = directory / relative
            if path.is_file():
                data = path.read_bytes()
                if hashlib.sha256(data).hexdigest() != known[relative]:
                    print(f"note: {path} differs from Fixtures/{relative}; copy it into Fixtures/", file=sys.stderr)
                    seeds.append((str(path), tool, data))
    return seeds


def replace_numbers(data: bytes, rng: random.Random) -> bytes:
    matches = list(NUMBER.finditer(data))
    if not matches:
        return data
    chosen = rng.sample(matches, k=min(len(matches), rng.choice([1, 1, 2, 3, 8, len(matches)])))
    out = bytearray(data)
    for match in sorted(chosen, key=lambda m: m.start(), reverse=True):
        out[match.start() : match.end()] = rng.choice(HOSTILE_NUMBERS)
    return bytes(out)


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        position = rng.randrange(len(out))
        out[position] = rng.choice(BYTE_VALUES) if rng.random() < 0.7 else rng.randrange(256)
    return bytes(out)


def cut(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 2:
        return data
    if rng.random() < 0.5:
        return data[: rng.randrange(len(data))]
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randint(1, 200))
    return data[:start] + data[end:]


def repeat(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    if rng.random() < 0.5 and len(lines) > 1:
        index = rng.randrange(len(lines))
        return b"\n".join(lines[:index] + [lines[index]] * rng.choice([2, 3, 50, 500]) + lines[index:])
    if not data:
        return data
    start = rng.randrange(len(data))
    end = min(len(data), start + rng.randint(1, 64))
    return data[:end] + data[start:end] * rng.choice([2, 10, 100]) + data[end:]


def shuffle_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    rng.shuffle(lines)
    return b"\n".join(lines)


def splice(data: bytes, rng: random.Random, others: list[bytes]) -> bytes:
    other = rng.choice(others).split(b"\n")
    lines = data.split(b"\n")
    piece = other[rng.randrange(len(other)) :][: rng.randint(1, 10)]
    index = rng.randrange(len(lines) + 1)
    return b"\n".join(lines[:index] + piece + lines[index:])


def suffix_numbers(data: bytes, rng: random.Random) -> bytes:
    matches = list(NUMBER.finditer(data))
    if not matches:
        return data
    match = rng.choice(matches)
    suffix = rng.choice([b"E", b"P", b"T", b"G", b"Gi", b"K", b"%", b"e308", b"e-5", b".5", b",5"])
    return data[: match.end()] + suffix + data[match.end() :]


def mutate(data: bytes, rng: random.Random, others: list[bytes]) -> bytes:
    mutations = [replace_numbers] * 4 + [flip_bytes] * 2 + [cut, repeat, shuffle_lines, suffix_numbers]
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutation = rng.choice(mutations + [None])
        data = splice(data, rng, others) if mutation is None else mutation(data, rng)
    return data


def signal_name(status: int) -> str:
    try:
        return signal.Signals(-status).name
    except ValueError:
        return f"signal {-status}"


def crash_site(binary: str, tool: str, data: bytes, timeout: float) -> str:
    """The runtime's message and the first frame in hostscope's sources, from a second run with
    Swift's backtracer on (it takes about a second, so only crashing inputs get it)."""
    try:
        result = subprocess.run(
            [binary, "parse", tool, "-"], input=data, capture_output=True, timeout=timeout * 3,
            env={**os.environ, "SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"},
        )
    except subprocess.TimeoutExpired:
        return "(no backtrace)"
    text = result.stderr.decode("utf-8", "replace")
    failure = re.search(r"(Fatal error: [^\n]*|Swift runtime failure: [^*\n]*)", text)
    frame = re.search(r" in hostscope at \S*/(Sources/[^\s]+)", text.split("crashed:", 1)[-1])
    return " at ".join(part for part in [
        failure.group(1).strip() if failure else "(no runtime message)",
        frame.group(1) if frame else None] if part)


def run_one(binary: str, tool: str, data: bytes, timeout: float) -> tuple[str, str]:
    """("ok" | "crash" | "hang", detail)."""
    try:
        result = subprocess.run(
            [binary, "parse", tool, "-"], input=data, capture_output=True, timeout=timeout,
            env={**os.environ, "SWIFT_BACKTRACE": "enable=no"},
        )
    except subprocess.TimeoutExpired:
        return "hang", f"no exit within {timeout} s"
    if result.returncode < 0:
        return "crash", f"{signal_name(result.returncode)}: {crash_site(binary, tool, data, timeout)}"
    if result.returncode not in (0, 6):
        return "crash", f"exit status {result.returncode}: {result.stderr[:200]!r}"
    return "ok", ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=20000, help="inputs to run (default 20000)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel runs")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds before a run counts as hung")
    parser.add_argument("--binary", default=str(REPOSITORY / ".build" / "debug" / "hostscope"))
    parser.add_argument("--fixtures", default=str(REPOSITORY / "Fixtures"))
    parser.add_argument("--extra", action="append", default=[], help="another fixtures directory")
    parser.add_argument("--out", default="/tmp/hostscope-fuzz", help="where crashing inputs are written")
    arguments = parser.parse_args()

    if not os.access(arguments.binary, os.X_OK):
        print(f"no hostscope binary at {arguments.binary}: run `swift build` first", file=sys.stderr)
        return 2
    seeds = load_seeds(Path(arguments.fixtures), [Path(p) for p in arguments.extra])
    tools = sorted({tool for _, tool, _ in seeds})
    others = [data for _, _, data in seeds]
    rng = random.Random(arguments.seed)
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)

    def inputs():
        for number in range(arguments.count):
            relative, tool, data = rng.choice(seeds)
            if rng.random() < 0.1:
                tool = rng.choice(tools)
            yield number, relative, tool, mutate(data, rng, others)

    started = time.monotonic()
    counts = {"ok": 0, "crash": 0, "hang": 0}
    signatures: dict[str, list[str]] = {}
    per_tool: dict[str, int] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=arguments.jobs) as pool:
        pending = {}
        source = inputs()
        exhausted = False
        while pending or not exhausted:
            while not exhausted and len(pending) < arguments.jobs * 4:
                try:
                    number, relative, tool, data = next(source)
                except StopIteration:
                    exhausted = True
                    break
                future = pool.submit(run_one, arguments.binary, tool, data, arguments.timeout)
                pending[future] = (number, relative, tool, data)
            done, _ = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                number, relative, tool, data = pending.pop(future)
                outcome, detail = future.result()
                counts[outcome] += 1
                per_tool[tool] = per_tool.get(tool, 0) + 1
                if outcome != "ok":
                    name = f"{outcome}-{number:06d}-{tool}"
                    (out / (name + ".input")).write_bytes(data)
                    (out / (name + ".txt")).write_text(f"tool: {tool}\nseed file: {relative}\n{detail}\n")
                    signatures.setdefault(f"{outcome}: {tool}: {detail}", []).append(name)
                total = sum(counts.values())
                if total % 1000 == 0:
                    print(
                        f"{total} inputs, {counts['crash']} crashes, {counts['hang']} hangs "
                        f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)

    print(f"{sum(counts.values())} inputs over {len(tools)} tools in {time.monotonic() - started:.0f} s "
          f"(seed {arguments.seed}): {counts['crash']} crashed, {counts['hang']} hung")
    print("inputs per tool: " + ", ".join(f"{tool} {count}" for tool, count in sorted(per_tool.items())))
    for signature, names in sorted(signatures.items(), key=lambda item: -len(item[1])):
        print(f"  {len(names):5d}  {signature}  (e.g. {out / names[0]}.input)")
    return 1 if counts["crash"] or counts["hang"] else 0


if __name__ == "__main__":
    sys.exit(main())
