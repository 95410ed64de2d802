"""Robustness: `carve lint --all` over every .py file of the installed torch package.

    .venv/bin/python bench/lint_torch_tree.py          # files, lines, wall time, CRV000 count, internal errors

Passes when no file makes carve crash (an internal error); files Python
cannot parse are expected to get one CRV000 finding each.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path


def torch_dir() -> Path:
    # Locate torch without importing it (importing takes seconds and is not what we measure).
    import importlib.util

    spec = importlib.util.find_spec("torch")
    return Path(spec.origin).parent


def main() -> int:
    tree = torch_dir()
    files = [p for p in tree.rglob("*.py")]
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    start = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "carve", "lint", "--all", "--no-progress", "--output-format", "json", "--exit-zero", str(tree)],
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - start
    findings = json.loads(result.stdout or "[]")
    internal_errors = [line for line in result.stderr.splitlines() if "error" in line]
    unparsable = sum(1 for f in findings if f["code"] == "CRV000")
    print(f"torch tree: {len(files)} files, {lines} lines, {wall:.1f} s wall, {len(findings)} findings, "
          f"{unparsable} unparsable files (CRV000), {len(internal_errors)} internal errors, exit {result.returncode}")
    for line in internal_errors[:20]:
        print("  " + line)
    return 0 if result.returncode == 0 and not internal_errors else 1


if __name__ == "__main__":
    sys.exit(main())
