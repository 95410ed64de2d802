"""`carve lint --fix` never changes a result: a fix that may is unsafe (ruff's model), applied
only with `--unsafe-fixes`, and shown with its reason."""

from __future__ import annotations

import json
import subprocess
import sys

import torch

from tests.lint.conftest import ROOT, run_cli

# The if/else -> torch.where fix would give shape [3] where the original gives [1].
SHAPES_DIFFER = """
import torch

@torch.compile
def f(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = torch.zeros(1)
    return y
"""


def _run_f(text: str, x: torch.Tensor) -> torch.Tensor:
    namespace: dict = {}
    exec(compile(text.replace("@torch.compile", ""), "<fixed>", "exec"), namespace)
    return namespace["f"](x)


def test_fix_leaves_an_unsafe_fix_alone_and_says_why(write):
    path = write("shapes.py", SHAPES_DIFFER)
    original = path.read_text()
    result = run_cli(path, "--fix")
    assert result.returncode == 1  # the finding is still there
    assert path.read_text() == original
    assert "CRV005 [" in result.stdout and "CRV005 [*]" not in result.stdout
    assert "unsafe fix: select with torch.where instead of branching (torch.where computes both branches" in result.stdout
    assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in result.stdout
    diff = run_cli(path, "--diff")
    assert diff.returncode == 0 and diff.stdout == ""


def test_unsafe_fixes_apply_the_fix_which_can_change_the_shape(write):
    path = write("shapes.py", SHAPES_DIFFER)
    original = path.read_text()
    result = run_cli(path, "--fix", "--unsafe-fixes")
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = path.read_text()
    assert "y = torch.where(x.sum() > 0, x * 2, torch.zeros(1))" in fixed
    x = -torch.ones(3)
    assert _run_f(original, x).shape == (1,) and _run_f(fixed, x).shape == (3,)  # why it is unsafe


def test_json_output_carries_the_applicability_and_reason(write):
    path = write("shapes.py", SHAPES_DIFFER)
    (finding,) = json.loads(run_cli(path, "--output-format", "json").stdout)
    assert finding["fix"]["applicability"] == "unsafe"
    assert "broadcasts and promotes" in finding["fix"]["reason"]


def test_unsafe_fixes_from_the_configuration_and_overridden_on_the_command_line(write):
    path = write("pkg/shapes.py", SHAPES_DIFFER)
    write("pkg/pyproject.toml", "[tool.carve.lint]\nunsafe-fixes = true\n")
    assert run_cli(path, "--diff").returncode == 1
    assert run_cli(path, "--diff", "--no-unsafe-fixes").returncode == 0


def test_pre_commit_fix_hook_applies_only_safe_fixes(write):
    hooks = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entry = next(line.split(":", 1)[1].strip() for line in hooks.splitlines()
                 if line.strip().startswith("entry:") and "--fix" in line)
    assert "--no-unsafe-fixes" in entry.split()
    path = write("shapes.py", SHAPES_DIFFER)
    write("pyproject.toml", "[tool.carve.lint]\nunsafe-fixes = true\n")  # the hook wins over this
    original = path.read_text()
    program, *arguments = entry.split()
    assert program == "carve"
    subprocess.run([sys.executable, "-m", "carve", *arguments, str(path)], capture_output=True, cwd=path.parent)
    assert path.read_text() == original
