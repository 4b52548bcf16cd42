#!/usr/bin/env python3
"""Copies the crashing and hanging inputs that mutate_parse.py wrote into Fixtures/regressions/
and lists each in Fixtures/regressions/manifest.tsv (file, tool, what it did before the fix), so
that ParserRegressionTests parses every one of them from then on.

    python3 Scripts/fuzz/add_regressions.py /tmp/hostscope-fuzz [more output folders]
    HOSTSCOPE_RECORD_GOLDENS=1 swift test --filter ParserRegressionTests   # then check the goldens

Inputs already listed (same bytes) are skipped. Standard library only.
"""

import hashlib
import sys
from pathlib import Path

REGRESSIONS = Path(__file__).resolve().parents[2] / "Fixtures" / "regressions"
HEADER = (
    "# file (relative to Fixtures/regressions/)\ttool (as `hostscope parse TOOL`)\t"
    "what it did before the fix (found by Scripts/fuzz/mutate_parse.py)\n"
)


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    REGRESSIONS.mkdir(parents=True, exist_ok=True)
    manifest = REGRESSIONS / "manifest.tsv"
    lines = manifest.read_text().splitlines(keepends=True) if manifest.exists() else [HEADER]
    known = {hashlib.sha256(path.read_bytes()).hexdigest() for path in REGRESSIONS.glob("*.input")}
    number = len(list(REGRESSIONS.glob("*.input")))
    added = 0
    for folder in map(Path, sys.argv[1:]):
        for source in sorted(folder.glob("*.input")):
            data = source.read_bytes()
            digest = hashlib.sha256(data).hexdigest()
            if digest in known:
                continue
            details = source.with_suffix(".txt").read_text().splitlines() if source.with_suffix(".txt").exists() else []
            tool = next((line[6:] for line in details if line.startswith("tool: ")), source.stem.split("-")[-1])
            what = details[-1] if details else "crashed"
            if source.name.startswith("hang-"):
                what = "hung: " + what
            number += 1
            name = f"fuzz-{number:03d}-{tool}.input"
            (REGRESSIONS / name).write_bytes(data)
            lines.append(f"{name}\t{tool}\t{what.replace(chr(9), ' ')}\n")
            known.add(digest)
            added += 1
    manifest.write_text("".join(lines))
    print(f"added {added} input(s) to {REGRESSIONS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
