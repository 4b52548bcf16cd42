#!/usr/bin/env python3
"""Checks that every module under Sources/ imports only what docs/architecture.md allows it, and, where the
shared tools are beside the checkout, that Package.swift declares exactly what each target imports.

  Scripts/check_imports.py [--no-manifest] [REPO]

Prints one line per forbidden import (file:line: what and what to do) and exits 1 when there is one."""
import os
import re
import subprocess
import sys

SYSTEM = {"Foundation", "FoundationEssentials", "Glibc", "Musl", "Darwin", "Dispatch", "Synchronization", "Swift",
          "_Concurrency"}
IMPORT = re.compile(
    r'^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+'
    r'(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)')


def allowed_imports(doc):
    text = open(doc, encoding="utf-8").read()
    match = re.search(r"<!-- imports:begin -->(.*?)<!-- imports:end -->", text, re.S)
    if not match:
        sys.exit(f"{doc}: no table between <!-- imports:begin --> and <!-- imports:end -->")
    table = {}
    for line in match.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        module = cells[0].strip("`")
        table[module] = {name.strip().strip("`") for name in cells[2].split(",") if name.strip()}
    return table


def main():
    arguments = [argument for argument in sys.argv[1:] if argument != "--no-manifest"]
    check_manifest = "--no-manifest" not in sys.argv[1:]
    repo = os.path.abspath(arguments[0] if arguments else os.path.join(os.path.dirname(__file__), ".."))
    doc = os.path.join(repo, "docs", "architecture.md")
    table = allowed_imports(doc)
    problems = []
    sources = os.path.join(repo, "Sources")
    for module in sorted(os.listdir(sources)):
        folder = os.path.join(sources, module)
        files = [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names
                 if name.endswith(".swift")]
        if not files:
            continue  # a C module
        if module not in table:
            problems.append(f"Sources/{module}: the module has no row in docs/architecture.md's import table; "
                            "add one with its layer and what it may import")
            continue
        for path in sorted(files):
            for number, line in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
                found = IMPORT.match(line)
                if not found:
                    continue
                imported = found.group(1)
                if imported in SYSTEM or imported == module or imported in table[module]:
                    continue
                allowed = ", ".join(sorted(table[module])) or "no project module"
                problems.append(
                    f"{os.path.relpath(path, repo)}:{number}: {module} imports {imported}, which "
                    f"docs/architecture.md does not allow it ({module} may import {allowed}); call the core or a "
                    "module it may import instead, or change the table if the layering changes")
    for problem in problems:
        print(problem)
    print(f"imports: {len(problems)} forbidden import(s) in {len(table)} modules")

    status = 1 if problems else 0
    shared = os.path.join(os.path.dirname(repo), "shared", "tools", "manifest_check.py")
    if not check_manifest:
        pass
    elif os.path.exists(shared):
        result = subprocess.run([sys.executable, shared, repo])
        status = status or result.returncode
    else:
        print(f"manifest: skipped, {shared} is not beside this checkout")
    return status


if __name__ == "__main__":
    sys.exit(main())
