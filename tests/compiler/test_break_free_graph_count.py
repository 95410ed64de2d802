"""Break-free code is never cut into more graphs than torch.compile makes.

Seeded random programs built only from constructs that trace without a graph break - op
chains, short `range` loops, loops over a list of tensors and over `dict.items()`, `if` on
a Python flag, `no_grad` / `autocast` blocks, `try` bodies that do not raise, local list
appends - each run under torch.compile and carve with counting backends over three calls
(the flag flips on the last), compared with eager on every call.
"""

from __future__ import annotations

import importlib.util
import random
import sys

import pytest
import torch

import carve
from carve.testing import CountingBackend

PROGRAMS = 24

CHAINS = [
    "x = torch.sin(x) * 0.9 + 0.1",
    "y = torch.tanh(y + x * 0.5)",
    "x = x * y",
    "y = torch.cos(y) * 0.8",
    "x = torch.relu(x) - 0.1",
]


class BreakFreeProgram:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lines = ["import torch", "", "", "def program(x, y, ts, d, flag):", "    acc = []"]

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def chain(self, depth: int) -> None:
        for _ in range(self.rng.randint(1, 3)):
            self.emit(depth, self.rng.choice(CHAINS))

    def construct(self, depth: int) -> None:
        kind = self.rng.choice(["range", "list", "items", "flag", "no_grad", "autocast", "try", "append"])
        if kind == "range":
            self.emit(depth, f"for i in range({self.rng.randint(2, 4)}):")
            self.chain(depth + 1)
        elif kind == "list":
            self.emit(depth, "for t in ts:")
            self.emit(depth + 1, "y = y + t * 0.1")
        elif kind == "items":
            self.emit(depth, "for key, value in d.items():")
            self.emit(depth + 1, "x = x + value.sin() * 0.1")
        elif kind == "flag":
            self.emit(depth, "if flag:")
            self.chain(depth + 1)
            self.emit(depth, "else:")
            self.chain(depth + 1)
        elif kind in ("no_grad", "autocast"):
            manager = "torch.no_grad()" if kind == "no_grad" else 'torch.autocast("cpu", dtype=torch.bfloat16)'
            self.emit(depth, f"with {manager}:")
            self.chain(depth + 1)
            self.emit(depth + 1, "x = x.float()")
        elif kind == "try":
            self.emit(depth, "try:")
            self.chain(depth + 1)
            # A handler that reads a name the body binds would see which statements ran before
            # the raise: carve then keeps one region per statement (README, "Known limits").
            self.emit(depth, "except ValueError:")
            self.emit(depth + 1, "x = torch.zeros(8)")
        else:
            self.emit(depth, "acc.append(x.sum())")

    def source(self) -> str:
        for _ in range(self.rng.randint(3, 6)):
            self.chain(1)
            self.construct(1)
        self.emit(1, "return x + y, acc")
        return "\n".join(self.lines) + "\n"


def load(seed: int, tmp_path):
    path = tmp_path / f"break_free_{seed}.py"
    path.write_text(BreakFreeProgram(seed).source())
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module.program


def inputs(flag: bool):
    torch.manual_seed(0)
    x, y = torch.randn(8), torch.randn(8)
    return x, y, [torch.randn(8) for _ in range(3)], {"a": torch.randn(8), "b": torch.randn(8)}, flag


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_break_free_program_makes_no_more_graphs_than_torch_compile(seed, tmp_path):
    program = load(seed, tmp_path)
    counts = {}
    for name, make in (("torch", torch.compile), ("carve", carve.compile)):
        torch._dynamo.reset()
        backend = CountingBackend()
        compiled = make(program, backend=backend)
        for flag in (True, True, False):
            expected, got = program(*inputs(flag)), compiled(*inputs(flag))
            torch.testing.assert_close(got[0], expected[0])
            torch.testing.assert_close(got[1], expected[1])
        counts[name] = backend.graphs
    assert 1 <= counts["carve"] <= counts["torch"], (counts, BreakFreeProgram(seed).source())
