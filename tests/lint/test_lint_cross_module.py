"""`carve lint` across modules: compiled targets defined in another file of the linted tree,
calls into the tree's other modules and into installed packages, all followed by path and
never imported."""

from __future__ import annotations

import json
import os
import sys

from carve.rewriters.lint import LintConfig
from carve.rewriters.lint.modules import ModuleGraph, ProjectLayout
from carve.rewriters.lint.project import lint_project

from .conftest import run_cli

MODEL = """
import torch
from torch import nn


def log_shape(x):
    print("shape", x.shape)


class GPTConfig:
    block_size = 8


class Block(nn.Module):
    def forward(self, x):
        log_shape(x)
        return x * 2


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.block = Block()

    def forward(self, idx, targets=None):
        x = self.block(idx)
        log_shape(x)
        loss = x.sum()
        if targets is not None:
            print("loss", loss.item())
        return x, loss

    @classmethod
    def from_pretrained(cls, name):
        return cls(GPTConfig())
"""
# Lines of MODEL (after the leading newline is dropped by `write`).
PRINT_IN_HELPER, CALL_IN_BLOCK, CALL_OF_BLOCK, CALL_IN_FORWARD, PRINT_ITEM = 6, 15, 25, 26, 29

TRAIN = """
import os
import torch
from model import GPTConfig, GPT

compile = True
init_from = os.environ.get("INIT", "scratch")
if init_from == "scratch":
    gptconf = GPTConfig()
    model = GPT(gptconf)
else:
    model = GPT.from_pretrained(init_from)
if compile:
    print("compiling the model... (takes a ~minute)")
    unoptimized_model = model
    model = torch.compile(model)

for step in range(10):
    logits, loss = model(torch.randn(4))
    print(f"step {step}: loss {loss.item():.4f}")
"""


def _findings(results):
    return [(os.path.basename(f.filename), f.line, f.code) for r in results for f in r.findings]


def _lint(tmp_path, names, **layout):
    files = [str(tmp_path / name) for name in names]
    if layout:
        project = ProjectLayout.build([str(tmp_path)], files, **layout)
    else:
        project = None
    results = lint_project(files, LintConfig(), project, paths=[str(tmp_path)])
    assert all(r.error is None for r in results), [r.error for r in results]
    return results


# ---- a compiled model defined in another module -------------------------------------------------

def test_nanogpt_shaped_tree_reports_the_models_breaks_at_model_py_lines(tmp_path, write):
    write("model.py", MODEL)
    write("train.py", TRAIN)
    result = run_cli(".", "--output-format", "json", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = sorted((f["filename"], f["line"], f["code"]) for f in json.loads(result.stdout))
    assert found == sorted([
        ("model.py", PRINT_IN_HELPER, "CRV003"),      # in log_shape, reached from GPT.forward
        ("model.py", CALL_IN_FORWARD, "CRV016"),      # the call in the compiled forward
        ("model.py", CALL_OF_BLOCK, "CRV016"),        # self.block(idx): Block.forward calls log_shape
        ("model.py", CALL_IN_BLOCK, "CRV016"),        # ... there, reached from GPT.forward
        ("model.py", PRINT_ITEM, "CRV003"),
        ("model.py", PRINT_ITEM, "CRV004"),
    ])
    messages = {f["line"]: f["message"] for f in json.loads(result.stdout)}
    assert "compiled in train.py" in messages[PRINT_ITEM]
    assert "called from compiled GPT.forward()" in messages[PRINT_IN_HELPER]
    # Without train.py nothing compiles GPT: nothing to report.
    assert run_cli("model.py", cwd=tmp_path).returncode == 0


def test_each_finding_is_reported_once_when_several_files_and_functions_reach_it(tmp_path, write):
    write("model.py", MODEL)
    write("train.py", TRAIN)
    write("bench.py", """
        import torch
        from model import GPT, GPTConfig

        model = GPT(GPTConfig())
        model.compile()
    """)
    write("sample.py", """
        import torch
        import model as m

        net = torch.compile(m.GPT.from_pretrained("gpt2"))
    """)
    results = _lint(tmp_path, ["bench.py", "model.py", "sample.py", "train.py"])
    found = _findings(results)
    assert len(found) == len(set(found)) == 6
    assert {name for name, _, _ in found} == {"model.py"}
    forward = next(f for r in results for f in r.findings if f.line == PRINT_ITEM and f.code == "CRV003")
    compiled_in = forward.message.split("compiled in ")[1]
    assert [os.path.basename(name) for name in compiled_in.rstrip(")").split(", ")] == ["bench.py", "sample.py", "train.py"]


def test_compiled_function_imported_by_name(tmp_path, write):
    write("ops.py", """
        import torch

        def step(x):
            y = x.sin()
            print(y)
            return y.cos()
    """)
    write("run.py", """
        import torch
        import ops
        from ops import step

        fast = torch.compile(step)
        faster = torch.compile(ops.step)
    """)
    assert _findings(_lint(tmp_path, ["ops.py", "run.py"])) == [("ops.py", 5, "CRV003")]


def test_relative_imports_and_reexports_in_a_package(tmp_path, write):
    write("pkg/__init__.py", "from .model import Net\n")
    write("pkg/helpers.py", """
        def noisy(x):
            print("noisy", x.shape)
            return x
    """)
    write("pkg/model.py", """
        import torch
        from torch import nn
        from . import helpers
        from .helpers import noisy as quiet_looking


        class Net(nn.Module):
            def forward(self, x):
                x = helpers.noisy(x)
                return quiet_looking(x) * 2
    """)
    write("pkg/train.py", """
        import torch
        from .model import Net

        model = torch.compile(Net())
    """)
    found = _findings(_lint(tmp_path, ["pkg/__init__.py", "pkg/helpers.py", "pkg/model.py", "pkg/train.py"]))
    assert sorted(found) == [("helpers.py", 2, "CRV003"), ("model.py", 9, "CRV016"), ("model.py", 10, "CRV016")]
    # The same model compiled through the package's re-export, and through `import pkg.model as m`.
    for script in ("from pkg import Net\nimport torch\nm = torch.compile(Net())\n",
                   "import torch\nimport pkg.model as m\nnet = m.Net()\nnet = torch.compile(net)\n"):
        (tmp_path / "pkg" / "train.py").unlink()
        write("script.py", script)
        found = _findings(_lint(tmp_path, ["pkg/__init__.py", "pkg/helpers.py", "pkg/model.py", "script.py"]))
        assert sorted(found) == [("helpers.py", 2, "CRV003"), ("model.py", 9, "CRV016"), ("model.py", 10, "CRV016")]
        write("pkg/train.py", "")


def test_src_layout_absolute_import_from_another_root(tmp_path, write):
    write("src/proj/__init__.py", "")
    write("src/proj/layers.py", """
        def head(x):
            return x * x.sum().item()
    """)
    write("scripts/train.py", """
        import torch
        from proj.layers import head

        @torch.compile
        def step(x):
            return head(x) + 1
    """)
    found = _findings(_lint(tmp_path, ["scripts/train.py", "src/proj/__init__.py", "src/proj/layers.py"]))
    assert sorted(found) == [("layers.py", 2, "CRV004"), ("train.py", 6, "CRV016")]


# ---- installed packages ---------------------------------------------------------------------------

FANCYLIB_OPS = """
def smooth(x):
    print("smoothing", x.shape)
    return x * 0.5


def scale(x):
    return _middle(x) + 1


def _middle(x):
    return _bottom(x)


def _bottom(x):
    return x * x.max().item()


def clean(x):
    return x + 1
"""
USER = """
import torch
import fancylib
from fancylib.ops import smooth, clean


@torch.compile
def step(x):
    y = smooth(x)
    z = fancylib.scale(y)
    return clean(z)
"""


def _fancylib(tmp_path, write):
    write("site/fancylib/__init__.py", "from .ops import smooth, scale\n")
    write("site/fancylib/ops.py", FANCYLIB_OPS)
    write("proj/user.py", USER)
    return tmp_path / "site"


def test_a_break_inside_an_installed_package_is_reported_at_the_users_call(tmp_path, write):
    site = _fancylib(tmp_path, write)
    env = dict(os.environ, PYTHONPATH=str(site))
    result = run_cli(".", "--output-format", "json", cwd=tmp_path / "proj", env=env)
    findings = json.loads(result.stdout)
    library_file = os.path.realpath(site / "fancylib" / "ops.py")
    assert [(f["filename"], f["line"], f["code"]) for f in findings] == [("user.py", 8, "CRV016")], findings
    assert f"{library_file}:2" in findings[0]["message"] and "print() performs I/O" in findings[0]["message"]
    # Nothing is reported inside the library itself, and without the library on the path nothing is known.
    assert run_cli(".", cwd=tmp_path / "proj").returncode == 0


def test_library_calls_are_followed_to_a_bounded_depth(tmp_path, write):
    site = _fancylib(tmp_path, write)
    files = [str(tmp_path / "proj" / "user.py")]
    shallow = lint_project(files, LintConfig(), ProjectLayout.build([], files, library_path=[str(site)]))
    # scale -> _middle -> _bottom: the .item() is three calls into the library, past the default depth of 2.
    assert [(f.line, f.code) for f in shallow[0].findings] == [(8, "CRV016")]
    deep = lint_project(files, LintConfig(), ProjectLayout.build([], files, library_path=[str(site)], library_depth=3))
    assert [(f.line, f.code) for f in deep[0].findings] == [(8, "CRV016"), (9, "CRV016")]
    assert "ops.py:15" in deep[0].findings[1].message


def test_torch_and_the_standard_library_are_not_followed(tmp_path, write):
    write("user.py", """
        import json
        import torch
        import torch.nn.functional as F

        @torch.compile
        def step(x):
            text = json.dumps({"a": 1})
            return F.gelu(x) + torch.relu(x)
    """)
    layout = ProjectLayout.build([str(tmp_path)], [str(tmp_path / "user.py")])
    graph = ModuleGraph.for_layout(layout)
    assert graph.definition(str(tmp_path / "user.py"), "F.gelu") is None
    assert graph.definition(str(tmp_path / "user.py"), "json.dumps") is None
    assert _findings(_lint(tmp_path, ["user.py"])) == []


# ---- nothing is imported, cycles end ---------------------------------------------------------------

def test_nothing_is_imported_or_run(tmp_path, write):
    write("site/explosive/__init__.py", "raise SystemExit('explosive was imported')\nfrom .ops import noisy\n")
    write("site/explosive/ops.py", "raise SystemExit('explosive.ops was imported')\ndef noisy(x):\n    print(x)\n    return x\n")
    write("model.py", "raise SystemExit('model was imported')\n" + MODEL.lstrip("\n"))
    write("train.py", TRAIN + "\nfrom explosive import noisy\n\n@torch.compile\ndef run(x):\n    return noisy(x)\n")
    before = set(sys.modules)
    files = [str(tmp_path / "model.py"), str(tmp_path / "train.py")]
    results = lint_project(files, LintConfig(), ProjectLayout.build([str(tmp_path)], files, library_path=[str(tmp_path / "site")]))
    assert not {"explosive", "explosive.ops", "model", "train"} & (set(sys.modules) - before)
    found = _findings(results)
    assert ("model.py", PRINT_ITEM + 1, "CRV004") in found        # one line lower: the raise came first
    assert ("train.py", 25, "CRV016") in found
    assert "explosive" in next(f.message for r in results for f in r.findings if f.code == "CRV016" and f.line == 25)


def test_import_cycles_terminate(tmp_path, write):
    write("a.py", """
        import torch
        import b
        from torch import nn

        class NetA(nn.Module):
            def forward(self, x):
                return b.ping(x)

        def pong(x):
            return b.ping(x) + x.sum().item()

        net = torch.compile(b.NetB())
    """)
    write("b.py", """
        import torch
        import a
        from a import NetA
        from torch import nn

        class NetB(nn.Module):
            def forward(self, x):
                return a.pong(x)

        def ping(x):
            return a.pong(x)

        net = torch.compile(NetA())
    """)
    found = _findings(_lint(tmp_path, ["a.py", "b.py"]))
    assert len(found) == len(set(found))
    assert ("a.py", 10, "CRV004") in found and ("a.py", 7, "CRV016") in found and ("b.py", 8, "CRV016") in found
