"""The default backend, end to end: Inductor's C++ kernels behind carve's regions (slow first compile)."""

from __future__ import annotations

import copy

import pytest
import torch

import carve

pytestmark = pytest.mark.inductor


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
    for _ in range(2):
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
    for _ in range(2):
        assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
