"""fullgraph=True to find and remove graph breaks; the three strategies."""

from __future__ import annotations

import os

import pytest
import torch

import carve


def test_iterator_argument_works_and_matches_eager(backend):
    # Dynamo cannot call next() on an input list_iterator under fullgraph; carve keeps
    # next() as eager Python (it advances the caller's iterator) and compiles the rest.
    @carve.compile(fullgraph=True, backend=backend)
    def f(xs):
        a = next(xs)
        b = next(xs)
        return a + b

    xs = [torch.tensor(1.0), torch.tensor(2.0), torch.tensor(5.0)]
    it = iter(xs)
    assert torch.equal(f(it), torch.tensor(3.0))
    assert torch.equal(next(it), torch.tensor(5.0))  # the caller's iterator advanced by two
    assert torch.equal(f(iter(xs)), torch.tensor(3.0))


def test_rewritten_iterator_version(backend):
    @carve.compile(fullgraph=True, backend=backend)
    def f_rewritten(xs):
        it = iter(xs)
        a = next(it)
        b = next(it)
        return a + b

    xs = [torch.tensor(1.0), torch.tensor(2.0)]
    assert torch.equal(f_rewritten(xs), torch.tensor(3.0))


def g(x):
    y = x.sin()
    torch._dynamo.graph_break()
    z = y.sin()
    return z


def test_strategy_2_nonstrict_trace_escape_hatch(m, backend):
    def g_local(x):
        y = x.sin()
        m.graph_break()
        return y.sin()

    @carve.compile(fullgraph=True, backend=backend)
    def f(x):
        w = x.sin()
        return g_local(w)

    x = torch.randn(3)
    with pytest.raises(carve.GraphBreakError) as info:
        f(x)
    assert "strategy" in str(info.value)

    @carve.compile(fullgraph=True, backend=backend)
    def f_rewritten(x):
        w = x.sin()
        return m.nonstrict_trace(g_local)(w)

    assert torch.allclose(f_rewritten(x), x.sin().sin().sin())
    assert torch.allclose(f_rewritten(x), x.sin().sin().sin())


@torch.library.custom_op("carvetest::square", mutates_args=())
def square(x: torch.Tensor) -> torch.Tensor:
    return x * x


@square.register_fake
def _(x):
    return x.new_empty(x.size())


def test_strategy_2_custom_op_is_opaque_not_a_break(backend):
    @carve.compile(fullgraph=True, backend=backend)
    def f(x):
        return square(x) + 1

    x = torch.randn(3, 3)
    for _ in range(2):
        assert torch.allclose(f(x), x * x + 1)
    assert backend.graphs == 1
    targets = [n.target for n in backend.graph_modules[0].graph.nodes if n.op == "call_function"]
    assert any("square" in str(t) for t in targets)


def test_strategy_3_io_is_an_error_under_fullgraph_and_split_works(tmp_path, backend):
    path = str(tmp_path / "foo.pt")

    @carve.compile(fullgraph=True, backend=backend)
    def f(x):
        y = x ** 2 / 2
        torch.save(y, path)
        z = y ** 3 / 6
        return z

    with pytest.raises(carve.GraphBreakError) as info:
        f(torch.randn(3))
    assert info.value.code == "CRV003"
    assert not os.path.exists(path)  # the error came before anything ran

    @carve.compile(fullgraph=True, backend=backend)
    def g2(x):
        return x ** 2 / 2

    @carve.compile(fullgraph=True, backend=backend)
    def h(y):
        return y ** 3 / 6

    def f_rewritten(x):
        y = g2(x)
        torch.save(y, path)
        return h(y)

    x = torch.randn(3)
    assert torch.allclose(f_rewritten(x), (x ** 2 / 2) ** 3 / 6)
    assert os.path.exists(path)
