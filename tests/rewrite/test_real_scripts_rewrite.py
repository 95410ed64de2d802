"""`carve rewrite` on every script of the real-scripts suite (tests/real_scripts/scripts/): the output
imports, runs standalone and gives eager's results.

For each case of tests/real_scripts/harness.py, the functions the harness hands to `carve.compile`
(the ones holding the graph breaks, as carve's README advises) are decorated with `@carve.compile` in
a copy of the script, in a fresh package beside copies of the other scripts, and the copy is
rewritten by the command a user would type, `carve rewrite SCRIPT --stdout`. The output replaces the
copy, so its relative imports (`from .nanogpt_model import GPT`) resolve as the original's do, and is
imported there; nothing wraps it in a compiler: the rewritten functions run carve's regions
themselves. The harness's call then runs on it and on the
eager script, and `harness.assert_same` compares printed output, returned values and every
parameter and buffer after each call.

The regions are compiled with the `aot_eager` backend, as tests/real_scripts does (the output says
`carve.RegionSet("train")`, Inductor by default: `carve.RegionSet` is given `aot_eager` as its
default while the output is imported).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import shutil
import subprocess
import sys
import types
from pathlib import Path

import libcst as cst
import libcst.matchers as m
import pytest
import torch

import carve
from carve.runtime import log as carve_log
from tests.real_scripts.test_real_scripts import TOLERANCES
from tests.real_scripts.harness import (
    CASES,
    SCRIPTS,
    ScriptCase,
    ScriptRun,
    TickingClock,
    assert_same,
    run_calls,
    seed_everything,
    unload,
)

ROOT = Path(__file__).resolve().parents[2]
CALLS = 2
_packages = itertools.count()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    carve_log.reset()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
    torch._dynamo.reset()


class _Decorate(cst.CSTTransformer):
    """`@carve.compile` on the module-level functions `names`, and `import carve` first."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = set(names)
        self.decorated: set[str] = set()
        self.classes: list[str] = []

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.classes.append(node.name.value)
        return True  # its methods (`Trainer.run`)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self.classes.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # module-level functions and methods only

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        name = ".".join([*self.classes, updated.name.value])
        if name not in self.names:
            return updated
        self.decorated.add(name)
        decorator = cst.Decorator(cst.parse_expression("carve.compile"))
        return updated.with_changes(decorators=[decorator, *updated.decorators])

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        body = list(updated.body)
        first = 0  # after the docstring and the `from __future__` imports
        while first < len(body) and m.matches(body[first], m.SimpleStatementLine(body=[m.Expr(m.SimpleString())])
                                                | m.SimpleStatementLine(body=[m.ImportFrom(module=m.Name("__future__"))])):
            first += 1
        return updated.with_changes(body=[*body[:first], cst.parse_statement("import carve\n"), *body[first:]])


def package_with_decorated_script(case: ScriptCase, root: Path) -> tuple[str, Path]:
    """A fresh package of copies of the scripts, `case`'s with its outer functions decorated."""
    package = f"carved_real_scripts_{next(_packages)}"
    directory = root / package
    shutil.copytree(SCRIPTS, directory, ignore=shutil.ignore_patterns("__pycache__"))
    file, names = (case.defined_in[0], (case.defined_in[1],)) if case.defined_in else (case.script, case.outer)
    script = directory / f"{file}.py"
    decorate = _Decorate(names)
    script.write_text(cst.parse_module(script.read_text(encoding="utf-8")).visit(decorate).code, encoding="utf-8")
    assert decorate.decorated == set(names)
    return package, script


def rewrite(script: Path) -> str:
    result = subprocess.run([sys.executable, "-m", "carve", "rewrite", str(script), "--stdout"],
                            capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


class _AotEagerRegionSet(carve.RegionSet):
    def __init__(self, name: str, **options) -> None:
        options.setdefault("backend", "aot_eager")
        super().__init__(name, **options)


def load_rewritten(case: ScriptCase, package: str, root: Path, monkeypatch) -> ScriptRun:
    """The rewritten script as module `<package>.<script>`, set up as harness.load sets up the
    eager script (seeds, setup, ticking clock)."""
    directory = root / package
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setattr(carve, "RegionSet", _AotEagerRegionSet)
    seed_everything()
    name = f"{package}.{case.script}"
    spec = importlib.util.spec_from_file_location(name, directory / f"{case.script}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = package
    sys.modules[name] = module
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        spec.loader.exec_module(module)
        case.setup(module)
    if isinstance(getattr(module, "time", None), types.ModuleType):
        module.time = TickingClock()
    return ScriptRun(case, "carve", module, None, printed.getvalue())


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rewritten_script_runs_standalone_and_equals_eager(name, tmp_path, monkeypatch):
    case = CASES[name]
    package, script = package_with_decorated_script(case, tmp_path)
    text = rewrite(script)
    for function in (case.defined_in[1],) if case.defined_in else case.outer:
        assert f'carve.RegionSet("{function}")' in text, f"{function} was not rewritten"
    assert "carve.compile" not in "\n".join(line.split("#")[0] for line in text.splitlines())
    script.write_text(text, encoding="utf-8")
    eager = run_calls(case, "eager", CALLS)
    rewritten = load_rewritten(case, package, tmp_path, monkeypatch)
    try:
        for _ in range(CALLS):
            rewritten.call()
        assert rewritten.import_printed == eager.import_printed
        assert_same(eager, rewritten, **TOLERANCES.get(name, {}))
    finally:
        unload(eager)
        unload(rewritten)
        for module_name in [key for key in sys.modules if key.startswith(rewritten.module.__package__ + ".")]:
            sys.modules.pop(module_name)
