"""State does not leak: between threads, into memory, from disk.

- `carve.is_compiling()` is per thread: a compile running in one thread is not seen by another.
- A tensor the program drops is freed as eagerly: carve keeps no argument, result or
  closure cell of the user's alive after the call.
- The code that runs is the code compiled: a source file edited on disk after import does
  not change what carve compiles, and unchanged source is recognised as such (a closure's
  lambda, nested annotations under `from __future__ import annotations`).
"""

from __future__ import annotations

import gc
import importlib
import inspect
import logging
import sys
import threading
import weakref

import torch

import carve
from carve.source import matches_running_code
from carve.testing import CountingBackend


def test_is_compiling_is_per_thread():
    inside = threading.Event()
    release = threading.Event()
    worker_result = []

    def holding_backend(gm, example_inputs):
        # Runs inside the worker's compile: hold it open while the main thread looks.
        inside.set()
        release.wait(10)
        return gm

    holding_backend.compiler_name = "eager"  # a capture backend: compiled on the first call (cost_check.py)

    @carve.compile(backend=holding_backend)
    def compiled_in_worker(x):
        return x * 2 if carve.is_compiling() else x  # folded to True while Dynamo traces

    worker = threading.Thread(target=lambda: worker_result.append(compiled_in_worker(torch.ones(2))))
    worker.start()
    try:
        assert inside.wait(10)
        # This thread runs eager code while the worker compiles. (torch.compiler.is_compiling()
        # reads one process-wide flag that torch 2.13 sets for the length of any compile.)
        assert carve.is_compiling() is False
    finally:
        release.set()
        worker.join(10)
    assert len(worker_result) == 1 and torch.equal(worker_result[0], torch.full((2,), 2.0))

    @carve.compile(backend="eager")
    def branch(x):
        return x + 1 if not carve.is_compiling() else x - 1

    assert torch.equal(branch(torch.zeros(2)), torch.full((2,), -1.0))  # traced: compiling


def _freed_after_del(fn, make_input) -> bool:
    x = make_input()
    out = fn(x)
    ref_in, ref_out = weakref.ref(x), weakref.ref(out)
    del x, out
    gc.collect()
    return ref_in() is None and ref_out() is None


def test_arguments_and_results_are_not_kept_alive():
    def closed(x):
        return x * 2 + 1

    def with_break(x):
        y = x * 2
        print("sum", float(y[:4].sum()))
        return y + 1

    def make():
        return torch.randn(64, 1024, 256)  # 64 MB

    for fn in (closed, with_break):
        assert _freed_after_del(fn, make)
        compiled = carve.compile(fn, backend="eager")
        for _ in range(3):  # the first call traces, the others hit the cache
            assert _freed_after_del(compiled, make), fn.__name__


def test_module_activations_are_not_kept_alive():
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU())
    compiled = carve.compile(model, backend="eager")
    for _ in range(3):
        assert _freed_after_del(compiled, lambda: torch.randn(4096, 256))


STALE_SOURCE = """
import torch

def scale(x):
    y = x * 2
    print("scaled", tuple(y.shape))
    return y + 1
"""


def test_source_edited_after_import_is_not_compiled(tmp_path, monkeypatch, capsys):
    module_file = tmp_path / "carve_stale_module.py"
    module_file.write_text(STALE_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("carve_stale_module")
    try:
        # The file changes on disk; the imported function is still the old one.
        module_file.write_text(STALE_SOURCE.replace("x * 2", "x * 100").replace("y + 1", "y - 7"))
        compiled = carve.compile(module.scale, backend="eager")
        for n in (3, 3, 5):
            x = torch.randn(n)
            expected = module.scale(x)
            eager_out = capsys.readouterr().out
            torch.testing.assert_close(compiled(x), expected)
            assert capsys.readouterr().out == eager_out
    finally:
        sys.modules.pop("carve_stale_module", None)


def _make_logging_step(model, scale):
    # The factory shape of real training code: a closure whose lambda reads the factory's
    # variable (a cell, not a global), and a nested helper annotated under this file's
    # `from __future__ import annotations` (its annotations compile to strings).
    def step(xs):
        def scaled(t: torch.Tensor) -> torch.Tensor:
            return t * scale

        outs = []
        for x in xs:
            y = scaled(model(x).relu())
            print("norm", round(y.norm().item(), 3))  # a graph break inside a loop
            outs.append(y)
        return sorted(outs, key=lambda t: t.sum().item() * scale)

    return step


def test_closure_source_is_recognised_as_the_code_that_runs(caplog, capsys):
    # The source check compiles the text where it scoped in its file; compiled on its own, the
    # lambda's `scale` was a global and the annotations values, so carve took the unchanged
    # source for an edited file, warned, and gave the function to Dynamo whole (which skips a
    # frame with a break in a loop).
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    step = _make_logging_step(model, 2.0)
    counts = CountingBackend()
    compiled = carve.compile(step, backend=counts)
    with caplog.at_level(logging.WARNING, logger="carve"):
        for n in (2, 2, 3):
            xs = [torch.randn(n, 4) for _ in range(3)]
            expected = step(xs)
            eager_out = capsys.readouterr().out
            got = compiled(xs)
            assert capsys.readouterr().out == eager_out
            for a, b in zip(got, expected):
                torch.testing.assert_close(a, b)
    assert not [r for r in caplog.records if "changed since it was imported" in r.getMessage()]
    assert counts.graphs >= 1 and counts.calls >= 9  # the loop body's graph ran on every trip


def test_edited_closure_source_is_still_refused(tmp_path, monkeypatch):
    module_file = tmp_path / "carve_stale_closure.py"
    module_file.write_text(
        "def make(scale):\n"
        "    def step(xs):\n"
        "        return sorted(xs, key=lambda t: t * scale)\n"
        "    return step\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("carve_stale_closure")
    try:
        step = module.make(2)
        assert matches_running_code(step, inspect.getsource(step).strip() + "\n")
        edited = "def step(xs):\n    return sorted(xs, key=lambda t: t * scale + 1)\n"
        assert not matches_running_code(step, edited)
    finally:
        sys.modules.pop("carve_stale_closure", None)
