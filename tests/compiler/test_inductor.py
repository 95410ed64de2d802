"""The default backend, end to end: Inductor's C++ kernels behind carve's regions (slow first compile)."""

from __future__ import annotations

import copy

import pytest
import torch

import carve
from carve.api import compiled_function_of
from carve.runtime import cost_check

pytestmark = pytest.mark.inductor

# A region's first calls run its Python to price its compile (runtime/cost_check.py); the compiled
# calls come after them.
PRICING = cost_check.PYTHON_FIRST_CALLS


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        for step in range(3):
            x = torch.tanh(self.linear(x)) + x
            print("step", step)
        return x.sum()


def test_module_with_loop_and_print_gradients_on_inductor(capsys):
    torch.manual_seed(0)
    net = Block()
    reference = copy.deepcopy(net)
    compiled = carve.compile(net)  # backend="inductor" by default
    x = torch.randn(4, 16)
    for _ in range(PRICING + 2):
        out = compiled(x)
        printed = capsys.readouterr().out
        expected = reference(x)
        assert printed == capsys.readouterr().out
        assert torch.allclose(out, expected, rtol=1e-4, atol=1e-4)
        out.backward()
        expected.backward()
        assert torch.allclose(net.linear.weight.grad, reference.linear.weight.grad, rtol=1e-4, atol=1e-4)
        net.zero_grad()
        reference.zero_grad()
    assert all(region.graphs for region in compiled_function_of(compiled).regions)  # Inductor ran them, not their Python


def test_try_block_with_item_on_inductor():
    def f(x):
        try:
            y = (x.sin() * 2).exp()
            peak = y.max().item()
            z = y / peak
        except ZeroDivisionError:
            z = x
        return z.cos()

    compiled = carve.compile(f)
    x = torch.randn(64)
    for _ in range(PRICING + 2):
        assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
    assert all(region.graphs for region in compiled.regions)  # Inductor ran them, not their Python
