import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args, cwd=None, env=None):
    """`carve lint ARGS` in a fresh interpreter (as users run it); returns CompletedProcess."""
    return subprocess.run(
        [sys.executable, "-m", "carve", "lint", "--no-progress", *map(str, args)],
        capture_output=True, text=True, cwd=cwd, env=env,
    )


@pytest.fixture
def write(tmp_path):
    def write(name: str, text: str, raw: bytes | None = None) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    return write
