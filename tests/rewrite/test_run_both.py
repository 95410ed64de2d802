"""The emitted modules run standalone and behave exactly as the originals.

Each golden input is imported three ways under distinct module names:
- eager:    the source with `carve.compile` / `torch.compile` made the identity (the reference),
- original: the source as written (carve's decorator path),
- emitted:  the file `carve rewrite` writes, run as a plain module.
Return values, printed output, mutated arguments and raised exceptions must agree,
over repeated calls that hit and miss the compiled-graph cache.
"""

from __future__ import annotations

import itertools
import shutil

import pytest
import torch

import carve
from carve.rewriters.rewrite import rewrite_source

from conftest import GOLDEN, load_module

_names = itertools.count()


def _identity_compile(fn=None, **_options):
    return fn if fn is not None else (lambda f: f)


def load_three(stem: str, tmp_path, monkeypatch):
    source = GOLDEN / f"{stem}.py"
    original_path = tmp_path / f"{stem}_original.py"
    shutil.copy(source, original_path)
    emitted_path = tmp_path / f"{stem}_emitted.py"
    emitted_path.write_text(rewrite_source(source.read_text(), str(source)).text)
    suffix = next(_names)
    with monkeypatch.context() as patch:
        patch.setattr(carve, "compile", _identity_compile)
        patch.setattr(torch, "compile", _identity_compile)
        eager = load_module(original_path, f"carve_rewrite_eager_{stem}_{suffix}")
    original = load_module(original_path, f"carve_rewrite_original_{stem}_{suffix}")
    emitted = load_module(emitted_path, f"carve_rewrite_emitted_{stem}_{suffix}")
    assert "@carve.compile" not in emitted_path.read_text().replace("compile as carve_compile", "")
    return eager, original, emitted


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.allclose(a, b, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def observe(function, args, capsys):
    """What one call does: its result or exception, what it printed, and its arguments afterwards."""
    args = [a.clone() if isinstance(a, torch.Tensor) else (list(a) if isinstance(a, list) else a) for a in args]
    try:
        outcome = ("returned", function(*args))
    except Exception as error:  # the exception is part of the behaviour compared
        outcome = ("raised", type(error), str(error))
    return outcome, capsys.readouterr().out, args


def assert_same_behaviour(get_function, modules, calls, capsys):
    eager, original, emitted = modules
    capsys.readouterr()
    for args in calls:
        expected = observe(get_function(eager), args, capsys)
        for name, module in (("original", original), ("emitted", emitted)):
            seen = observe(get_function(module), args, capsys)
            assert _same(seen[0], expected[0]), f"{name}: result {seen[0]!r} != eager {expected[0]!r}"
            assert seen[1] == expected[1], f"{name}: printed {seen[1]!r} != eager {expected[1]!r}"
            assert _same(seen[2], expected[2]), f"{name}: arguments after the call differ from eager"


def t(*values):
    return torch.tensor(values, dtype=torch.float32)


CASES = {
    "loop_break": ("accumulate_until", [(t(1, 2), 5.0), (t(1, 2), 5.0), (t(0.1, 0.1), 100.0), (t(-1, 3), 7.0)]),
    "try_except_finally": ("safe_divide", [(t(1, 2), t(2, 4), []), (t(1, 2), t(0, 4), []), (t(3, 3), t(1, 1), ["x"])]),
    "with_block": ("traced_sections", [(t(0.5, 1.5), []), (t(0.5, 1.5), []), (torch.ones(2, 3), ["old"])]),
    "print_io": ("normalize", [(t(1, 2, 3),), (t(1, 2, 3),), (t(-4, 0, 9, 1),)]),
    "item_conversion": ("stats", [(t(1, 2, 3),), (t(1, 2, 3),), (t(-5, 5),)]),
    "data_dependent_if": ("clamp_or_shift", [(t(1, 2),), (t(-1, -2),), (t(1, 2),), (t(0.1, -3),)]),
    "early_return": ("first_large_row", [
        (torch.arange(6.0).reshape(3, 2), 4.0), (torch.arange(6.0).reshape(3, 2), 100.0),
        (t(1, 2), 1.0), (torch.arange(6.0).reshape(3, 2), 0.5),
    ]),
    "nested_loops_continue": ("masked_pair_sums", [
        (t(1, -1), t(2, -3, 1), []), (t(1, -1), t(2, -3, 1), []), (torch.ones(3), t(-1, 1), [(9, 9)]),
    ]),
}


@pytest.mark.parametrize("stem", sorted(CASES))
def test_emitted_module_behaves_as_the_original(stem, tmp_path, monkeypatch, capsys):
    function_name, calls = CASES[stem]
    modules = load_three(stem, tmp_path, monkeypatch)
    assert_same_behaviour(lambda m: getattr(m, function_name), modules, calls, capsys)


def test_emitted_graph_regions_are_compiled_and_cached(tmp_path, monkeypatch):
    """The emitted code goes through carve.RegionSet: its graph regions run as compiled graphs."""
    _, _, emitted = load_three("print_io", tmp_path, monkeypatch)
    regions = emitted.normalize.__carve_regions__
    assert len(regions.regions) >= 2
    emitted.normalize(t(1, 2, 3))
    emitted.normalize(t(4, 5, 6))
    assert all(type(r).__name__ == "GraphRegion" for r in regions.regions)


def test_methods_nested_functions_and_other_spellings(tmp_path, monkeypatch, capsys):
    eager, original, emitted = load_three("methods_and_spellings", tmp_path, monkeypatch)
    modules = (eager, original, emitted)
    scalers = [m.Scaler() for m in modules]
    capsys.readouterr()
    for x in (t(1, 2), t(1, 2), t(-3, 0.5)):
        expected = observe(scalers[0], [x], capsys)
        for scaler in scalers[1:]:
            seen = observe(scaler, [x], capsys)
            assert _same(seen[0], expected[0]) and seen[1] == expected[1]
    assert [s.calls for s in scalers] == [3, 3, 3]

    affines = [m.make_affine(t(2, -2)) for m in modules]
    for x in (t(1, 1), t(-1, 5)):
        expected = observe(affines[0], [x], capsys)
        for affine in affines[1:]:
            seen = observe(affine, [x], capsys)
            assert _same(seen[0], expected[0]) and seen[1] == expected[1]

    for x in (t(1, 2), t(0.5, 0.25)):
        expected = observe(eager.double_then_log, [x], capsys)
        seen = observe(emitted.double_then_log, [x], capsys)
        assert _same(seen[0], expected[0]) and seen[1] == expected[1]


def test_emitted_file_runs_in_a_fresh_interpreter(tmp_path):
    """Standalone: only carve installed, no test helpers; run as a script."""
    import subprocess
    import sys

    source = GOLDEN / "loop_break.py"
    emitted = tmp_path / "emitted.py"
    emitted.write_text(
        rewrite_source(source.read_text(), str(source)).text
        + "\nprint(accumulate_until(torch.tensor([1.0, 2.0]), 5.0))\n"
    )
    original = tmp_path / "original.py"
    original.write_text(source.read_text() + "\nprint(accumulate_until(torch.tensor([1.0, 2.0]), 5.0))\n")
    run = lambda p: subprocess.run([sys.executable, str(p)], capture_output=True, text=True, check=True).stdout
    assert run(emitted) == run(original) == "(tensor([ 6., 12.]), 2)\n"


RECURSIVE_CLOSURE = '''
import torch
import carve


def outer():
    @carve.compile(backend="eager")
    def walk(x, n):
        if n == 0:
            return x
        y = x + 1
        print("walk", n)
        return walk(y, n - 1)  # the CLI cannot see that walk breaks: a region calls it
    return walk
'''


def test_a_region_traced_by_dynamo_inlines_the_regions_it_calls(tmp_path, monkeypatch, capsys):
    # The emitted region `return walk(y, n - 1)` is captured by Dynamo, whose trace reaches the
    # regions of the inner `walk` call: it must inline their code, not carve's cache and guards
    # (it used to raise InternalTorchDynamoError inside carve's generated guard function).
    source = tmp_path / "recursive_closure.py"
    source.write_text(RECURSIVE_CLOSURE)
    emitted_path = tmp_path / "recursive_closure_emitted.py"
    emitted_path.write_text(rewrite_source(RECURSIVE_CLOSURE, str(source)).text)
    with monkeypatch.context() as patch:
        patch.setattr(carve, "compile", _identity_compile)
        eager = load_module(source, f"carve_rewrite_eager_recursive_{next(_names)}")
    emitted = load_module(emitted_path, f"carve_rewrite_emitted_recursive_{next(_names)}")
    walk_eager, walk_emitted = eager.outer(), emitted.outer()
    capsys.readouterr()
    for n in (2, 2, 3, 0):
        expected = observe(walk_eager, [torch.ones(2), n], capsys)
        seen = observe(walk_emitted, [torch.ones(2), n], capsys)
        assert _same(seen[0], expected[0]), (seen[0], expected[0])
        assert seen[1] == expected[1]


EXPLICIT_CLASS_CELL = '''
import torch
import carve


class Base:
    factor = 2.0

    def describe(self):
        return "base"


class Child(Base):
    factor = 3.0

    @carve.compile(backend="eager")
    def run(self, x):
        y = x * 2
        print("child", type(self).__name__, self.__class__.__name__, super().describe())
        return y + __class__.factor  # the class cell, which module-level code does not have
'''


def test_an_explicit_class_cell_means_the_class_in_the_emitted_module(tmp_path, monkeypatch, capsys):
    source = tmp_path / "explicit_class_cell.py"
    source.write_text(EXPLICIT_CLASS_CELL)
    emitted_text = rewrite_source(EXPLICIT_CLASS_CELL, str(source)).text
    assert "self.__class__.__name__" in emitted_text  # an attribute named __class__ is left alone
    emitted_path = tmp_path / "explicit_class_cell_emitted.py"
    emitted_path.write_text(emitted_text)
    with monkeypatch.context() as patch:
        patch.setattr(carve, "compile", _identity_compile)
        eager = load_module(source, f"carve_rewrite_eager_class_cell_{next(_names)}")
    emitted = load_module(emitted_path, f"carve_rewrite_emitted_class_cell_{next(_names)}")
    capsys.readouterr()
    for x in (torch.ones(2), torch.arange(3.0)):
        expected = observe(eager.Child().run, [x], capsys)
        seen = observe(emitted.Child().run, [x], capsys)
        assert seen[0][0] == expected[0][0] == "returned", seen[0]
        assert _same(seen[0], expected[0]) and seen[1] == expected[1]
