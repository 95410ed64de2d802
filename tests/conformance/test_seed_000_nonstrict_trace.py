"""`nonstrict_trace` (programming_model.dynamo_nonstrict_trace)."""

from __future__ import annotations

import pytest
import dataclasses

import torch

import carve


def test_graph_break_in_callee_is_an_error_under_fullgraph(m, backend):
    def get_magic_num():
        m.graph_break()
        return torch.tensor([42])

    @carve.compile(fullgraph=True, backend=backend)
    def func(x):
        n = get_magic_num()
        return x + n

    with pytest.raises(carve.GraphBreakError) as info:
        func(torch.rand(10))
    assert info.value.code in ("CRV016", "CRV001")
    assert __file__ in str(info.value)


def test_nonstrict_trace_decorator_removes_the_break(m, backend):
    @m.nonstrict_trace
    def get_magic_num():
        m.graph_break()
        return torch.tensor([42])

    @carve.compile(fullgraph=True, backend=backend)
    def func(x):
        n = get_magic_num()
        return x + n

    x = torch.rand(10)
    assert torch.equal(func(x), x + 42)
    assert torch.equal(func(x), x + 42)
    assert backend.graphs == 1


def test_nonstrict_trace_inline_call(m, backend):
    def get_magic_num():
        m.graph_break()
        return torch.tensor([42])

    @carve.compile(fullgraph=True, backend=backend)
    def func(x):
        n = m.nonstrict_trace(get_magic_num)()
        return x + n

    x = torch.rand(10)
    assert torch.equal(func(x), x + 42)
    assert torch.equal(func(x), x + 42)
    assert backend.graphs == 1


@dataclasses.dataclass
class Affine:
    """An input of a nonstrict_trace method: torch requires it be a pytree (here a registered dataclass)."""

    w: torch.Tensor

    @carve.nonstrict_trace
    def apply(self, x):
        carve.graph_break()
        return x * self.w


torch.utils._pytree.register_dataclass(Affine)


def test_nonstrict_trace_on_methods_and_pytree_inputs(backend):
    @carve.nonstrict_trace
    def combine(parts):
        carve.graph_break()
        return {"sum": parts["a"] + parts["b"][0], "diff": parts["a"] - parts["b"][1]}

    affine = Affine(torch.tensor(3.0))

    @carve.compile(fullgraph=True, backend=backend)
    def func(x, y):
        out = combine({"a": x, "b": (y, y * 2)})
        return affine.apply(out["sum"]) + out["diff"]

    x, y = torch.randn(4), torch.randn(4)
    expected = (x + y) * 3 + (x - 2 * y)
    for _ in range(2):
        assert torch.allclose(func(x, y), expected)
