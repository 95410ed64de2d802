"""`carve lint` as users run it: exit codes, output formats, fixes, no torch import."""

import json
import sys
from pathlib import Path

import pytest

from tests.lint.conftest import ROOT, run_cli

BREAKING = """
import torch

@torch.compile
def f(x):
    print(x.sum())
    return x + 1
"""
CLEAN = """
import torch

@torch.compile
def f(x):
    return x + 1
"""
BRANCHING = """
import torch

@torch.compile
def pick(x):
    scale = x.abs()
    if x.sum() > 0:
        y = x * 2 + scale
    else:
        y = -x
    return y

@torch.compile
def choose(x):
    if x.max() > 1:
        return x / 2
    else:
        return x - 1
"""


def test_exit_codes_clean_findings_and_exit_zero(write):
    clean, breaking = write("clean.py", CLEAN), write("breaking.py", BREAKING)
    assert run_cli(clean).returncode == 0
    result = run_cli(breaking)
    assert result.returncode == 1
    assert f"{breaking}:5:5: CRV003 [I/O or logging] print() performs I/O" in result.stdout
    assert "  hint: " in result.stdout
    assert run_cli(breaking, "--exit-zero").returncode == 0


@pytest.mark.parametrize("args", [
    ["does/not/exist.py"],
    ["--select", "CRV9"],
    ["--jobs", "0"],
    ["--explain", "CRV999"],
    ["--config", "missing.toml"],
    ["--bogus"],
])
def test_usage_errors_exit_2_with_one_line_and_no_traceback(write, args):
    path = write("clean.py", CLEAN)
    result = run_cli(*args, path, cwd=path.parent)
    assert result.returncode == 2
    assert result.stderr.startswith("carve lint: error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_bad_pyproject_is_exit_2(write):
    path = write("clean.py", CLEAN)
    write("pyproject.toml", '[tool.carve.lint]\nselect = ["XYZ"]\n')
    result = run_cli(path, cwd=path.parent)
    assert result.returncode == 2 and "XYZ" in result.stderr


def test_pyproject_select_and_exclude_apply(write):
    breaking = write("pkg/breaking.py", BREAKING)
    write("pkg/generated/gen.py", BREAKING)
    write("pyproject.toml", '[tool.carve.lint]\nexclude = ["generated/"]\nselect = ["CRV004"]\n')
    assert run_cli("pkg", cwd=breaking.parents[1]).returncode == 0
    result = run_cli("pkg", "--select", "CRV003", cwd=breaking.parents[1])
    assert result.returncode == 1 and "gen.py" not in result.stdout


def test_json_output(write):
    path = write("branching.py", BRANCHING)
    findings = json.loads(run_cli(path, "--output-format", "json").stdout)
    assert {f["code"] for f in findings} == {"CRV005"}
    first = findings[0]
    assert set(first) >= {"code", "message", "filename", "line", "column", "end_line", "end_column", "title", "hint", "fix"}
    assert (first["line"], first["column"]) == (6, 8)
    assert first["fix"]["replacement"].strip().startswith("y = torch.where(")


def test_github_output(write):
    path = write("breaking.py", BREAKING)
    line = run_cli(path, "--output-format", "github").stdout.strip()
    assert line.startswith(f"::error file={path},line=5,col=5,")
    assert "title=CRV003::" in line


def test_sarif_output_structure(write):
    path = write("breaking.py", BREAKING)
    sarif = json.loads(run_cli(path, "--output-format", "sarif").stdout)
    assert sarif["version"] == "2.1.0" and "sarif-2.1.0" in sarif["$schema"]
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"CRV001", "CRV003", "CRV005", "CRV021"}
    (result,) = run["results"]
    assert result["ruleId"] == "CRV003"
    assert rules[result["ruleIndex"]]["id"] == "CRV003"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("breaking.py")
    assert location["region"]["startLine"] == 5 and location["region"]["startColumn"] == 5


def test_statistics(write):
    path = write("branching.py", BRANCHING)
    result = run_cli(path, "--statistics")
    assert result.stdout.split()[:3] == ["2", "CRV005", "control"]  # unsafe fixes: no [*]
    result = run_cli(path, "--statistics", "--unsafe-fixes")
    assert result.stdout.split()[:3] == ["2", "CRV005", "[*]"]


def test_explain_and_generated_docs_match_the_committed_reference():
    result = run_cli("--explain", "crv005")
    assert result.returncode == 0 and result.stdout.startswith("CRV005 data-dependent-branch")
    generated = run_cli("--generate-docs", "-").stdout
    assert generated == (ROOT / "docs" / "rules.md").read_text(), "regenerate: carve lint --generate-docs docs/rules.md"


def _run_both(path: Path, original: str, x):
    namespaces = []
    for text in (original, path.read_text()):
        namespace = {}
        exec(compile(text.replace("@torch.compile", ""), str(path), "exec"), namespace)
        namespaces.append(namespace)
    return namespaces


def test_fix_rewrites_if_into_torch_where_with_the_same_values(write):
    import torch

    path = write("branching.py", BRANCHING)
    original = path.read_text()
    diff = run_cli(path, "--diff", "--unsafe-fixes")
    assert diff.returncode == 1
    assert "+    y = torch.where(x.sum() > 0, x * 2 + scale, -x)" in diff.stdout
    assert path.read_text() == original  # --diff never writes
    fixed = run_cli(path, "--fix", "--unsafe-fixes")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "Fixed 2 findings in 1 file." in fixed.stdout
    text = path.read_text()
    assert "if x.sum() > 0" not in text and "return torch.where(x.max() > 1, x / 2, x - 1)" in text
    before, after = _run_both(path, original, None)
    for x in (torch.randn(5), torch.randn(5) + 3, -torch.rand(5) - 3, torch.zeros(5)):
        for name in ("pick", "choose"):
            assert torch.equal(before[name](x), after[name](x))
    assert run_cli(path).returncode == 0  # nothing left to report
    assert run_cli(path, "--diff", "--unsafe-fixes").returncode == 0


def test_fix_is_not_offered_when_branches_differ_in_shape_or_have_side_effects(write):
    path = write("unfixable.py", """
        import torch

        @torch.compile
        def f(x, log):
            if x.sum() > 0:
                y = x * 2
                log.append(1)
            else:
                y = x
            if x.mean() > 0:
                z = x
            elif x.mean() < -1:
                z = -x
            else:
                z = x * 0
            return y, z
    """)
    result = run_cli(path, "--diff", "--unsafe-fixes")
    assert result.returncode == 0 and result.stdout == ""


def test_lint_never_imports_torch_or_the_linted_code(write, tmp_path):
    marker = tmp_path / "executed"
    path = write("side_effect.py", f"open({str(marker)!r}, 'w').write('ran')\n" + BREAKING)
    probe = (
        "import sys\nfrom carve.cli import main\n"
        f"code = main(['lint', '--no-progress', '--all', {str(path)!r}])\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
        "sys.exit(code)\n"
    )
    import subprocess

    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    assert not marker.exists()


def test_torch_nn_modules_lints_without_internal_errors():
    import torch

    tree = Path(torch.__file__).parent / "nn" / "modules"
    result = run_cli("--all", "--exit-zero", "--statistics", tree)
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr and result.stderr == ""


def test_parallel_and_serial_runs_agree(write):
    for i in range(12):
        write(f"many/m{i}.py", BRANCHING if i % 2 else BREAKING)
    parallel = run_cli("--output-format", "json", write("many/__init__.py", "").parent, "--jobs", "2")
    serial = run_cli("--output-format", "json", write("many/__init__.py", "").parent, "--jobs", "1")
    assert json.loads(parallel.stdout) == json.loads(serial.stdout)
    assert len(json.loads(serial.stdout)) == 6 * 1 + 6 * 2
