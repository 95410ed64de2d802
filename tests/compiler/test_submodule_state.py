"""Each submodule's own state: a cached graph always reads the parameters and buffers
of the module it is called for, never those of the block it was traced with.

The case that once returned b1(b1(b1(b0(x)))) instead of b3(b2(b1(b0(x)))): a ModuleList of
same-shaped blocks, a config flag read in the loop, the region receiving both `self` and the
block. Variants reach the blocks through `self`, an argument and a plain list; weights change
between calls; every result and gradient is compared with eager.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

import carve


class Config:
    def __init__(self, output_hidden_states: bool) -> None:
        self.output_hidden_states = output_hidden_states


class Net(nn.Module):
    def __init__(self, output_hidden_states: bool) -> None:
        super().__init__()
        self.config = Config(output_hidden_states)
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(4))

    def forward(self, x):
        hidden = () if self.config.output_hidden_states else None
        for b in self.blocks:
            if self.config.output_hidden_states:
                hidden = hidden + (x,)
            x = b(x)
        return x, hidden


def through_argument(blocks, x, verbose):
    for block in blocks:
        x = torch.tanh(block(x))
        if verbose:
            print("norm", round(float(x.norm()), 3))
    return x


def through_list(blocks, x):
    outputs = []
    for i in range(len(blocks)):
        x = blocks[i](x) + x
        outputs.append(x.sum())
    return x, outputs


def _assert_same(got, expected):
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(got, expected)
    elif expected is None:
        assert got is None
    else:
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            _assert_same(g, e)


@pytest.mark.parametrize("flag", [False, True])
@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_blocks_through_self_each_use_their_own_weights(flag, backend):
    torch.manual_seed(0)
    model = Net(flag)
    reference = copy.deepcopy(model)
    compiled = carve.compile(model, backend=backend)
    for call in range(4):
        x = torch.randn(2, 4, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_(True)
        got, expected = compiled(x), reference(x_ref)
        _assert_same(got, expected)
        got[0].sum().backward()
        expected[0].sum().backward()
        torch.testing.assert_close(x.grad, x_ref.grad)
        for p, q in zip(model.parameters(), reference.parameters()):
            torch.testing.assert_close(p.grad, q.grad)
        with torch.no_grad():  # an optimizer-like update between calls, on both
            for p, q in zip(model.parameters(), reference.parameters()):
                p.sub_(0.1 * p.grad)
                q.sub_(0.1 * q.grad)
        model.zero_grad()
        reference.zero_grad()
        if call == 1:
            model.config.output_hidden_states = reference.config.output_hidden_states = not flag


def test_blocks_through_an_argument_and_a_list(capsys):
    torch.manual_seed(0)
    blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
    compiled_argument = carve.compile(through_argument, backend="eager")
    compiled_list = carve.compile(through_list, backend="eager")
    for verbose in (False, True, False):
        x = torch.randn(2, 4)
        expected = through_argument(blocks, x, verbose)
        eager_out = capsys.readouterr().out
        torch.testing.assert_close(compiled_argument(blocks, x, verbose), expected)
        assert capsys.readouterr().out == eager_out
        as_list = list(blocks)
        _assert_same(compiled_list(as_list, x), through_list(as_list, x))
        # A block replaced in the list between calls is the one used.
        as_list[1] = nn.Linear(4, 4)
        _assert_same(compiled_list(as_list, x), through_list(as_list, x))
