"""Every module of carve.rewriters imports on its own, first, in a fresh interpreter: no import
cycle depends on which module a user (or another pass) imports first. Importing
`carve.rewriters.hoist` first used to fail (tensors -> checks -> context -> tensors)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REWRITERS = Path(__file__).resolve().parents[2] / "rewriters"


def modules() -> list[str]:
    names = []
    for path in sorted(REWRITERS.rglob("*.py")):
        parts = path.relative_to(REWRITERS).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(("carve", "rewriters", *parts)))
    return names


def test_each_rewriters_module_imports_first_without_a_cycle():
    script = (
        "import importlib, subprocess, sys\n"
        "failed = []\n"
        "for name in sys.argv[1:]:\n"
        "    done = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
        "    if done.returncode:\n"
        "        failed.append(f'{name}: {done.stderr.strip().splitlines()[-1]}')\n"
        "print('\\n'.join(failed))\n"
    )
    names = modules()
    assert len(names) > 30
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""
