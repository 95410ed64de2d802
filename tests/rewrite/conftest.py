"""Helpers shared by the `carve rewrite` tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def golden_inputs() -> list[Path]:
    return sorted(p for p in GOLDEN.glob("*.py") if not p.name.endswith(".rewritten.py"))


def rewritten_path(source: Path) -> Path:
    return source.with_name(source.stem + ".rewritten.py")


def load_module(path: Path, name: str):
    """Import a file under a fresh module name (so the original and the rewrite never share state)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


@pytest.fixture
def cli(capsys):
    """Run `carve ...` in process; returns (exit code, stdout, stderr)."""
    from carve.cli import main

    def run(*args: str):
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run
