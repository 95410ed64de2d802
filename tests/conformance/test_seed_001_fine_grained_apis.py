"""disable, disallow_in_graph, allow_in_graph, graph_break, is_compiling."""

from __future__ import annotations

import torch

import carve
from carve.testing import CountingBackend


def test_disable_is_recursive(m, backend):
    seen = []

    def aa_fn(x):
        seen.append(carve.is_compiling())
        return x * 2

    @m.disable
    def a_fn(x):
        return aa_fn(x) + 1

    def b_fn(x):
        return x - 3

    @carve.compile(backend=backend)
    def fn(x):
        y = a_fn(x)
        return b_fn(y)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x * 2 + 1 - 3)
    assert seen == [False, False]  # the disabled frame and what it calls run eagerly
    assert backend.graphs == 1  # b_fn's work is compiled


def test_disable_non_recursive_still_compiles_nested_compiled_functions(backend):
    inner_backend = CountingBackend()

    @carve.compile(backend=inner_backend)
    def inner(x):
        return x.sin() * 2

    @carve.disable(recursive=False)
    def outer(x):
        return inner(x) + 1

    x = torch.randn(3)
    outer(x)
    assert torch.allclose(outer(x), x.sin() * 2 + 1)
    assert inner_backend.graphs == 1

    @carve.disable
    def outer_recursive(x):
        return inner(x) + 1

    before = inner_backend.graphs
    inner.__wrapped__  # compiled object still reachable
    outer_recursive(x)
    assert inner_backend.graphs == before


def test_disallow_in_graph_forces_a_break_at_torch_ops(m, backend):
    m.disallow_in_graph(torch.sub)
    try:
        @carve.compile(backend=backend)
        def fn(x):
            a = x * 2
            b = torch.sub(a, 1)
            return b * 3

        x = torch.randn(3)
        for _ in range(2):
            assert torch.allclose(fn(x), (x * 2 - 1) * 3)
        assert backend.graphs == 2
        # No graph contains torch.sub.
        assert all(torch.sub not in [n.target for n in gm.graph.nodes] for gm in backend.graph_modules)
    finally:
        carve.allow_in_graph(torch.sub)
        torch._dynamo.allow_in_graph(torch.sub)


def test_allow_in_graph_is_one_opaque_node(m, backend):
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 2 * x

    @m.allow_in_graph
    def square_plus_one(x):
        return Square.apply(x) + 1

    @carve.compile(backend=backend)
    def fn(x):
        return square_plus_one(x * 3).sum()

    x = torch.randn(4, requires_grad=True)
    for _ in range(2):
        x.grad = None
        fn(x).backward()
        assert torch.allclose(x.grad, 2 * (3 * x.detach()) * 3)
    targets = [n.target for gm in backend.graph_modules for n in gm.graph.nodes if n.op == "call_function"]
    # torch's allow_in_graph may hand back a wrapper: the node calls the function or its wrapper.
    candidates = {square_plus_one, getattr(square_plus_one, "__wrapped__", square_plus_one)}
    assert any(t in candidates or getattr(t, "__wrapped__", None) in candidates for t in targets), targets
    # not traced inside: the only multiplication in the graph is the caller's `x * 3`
    assert sum(getattr(t, "__name__", "") in ("mul", "__mul__") for t in targets) == 1, targets


def test_is_compiling_true_in_graphs_false_in_eager(m, backend):
    def probe(x):
        if m.is_compiling():
            return x + 100
        return x - 100

    @carve.compile(backend=backend)
    def fn(x):
        y = probe(x)
        print("eager here:", m.is_compiling())
        return y

    x = torch.zeros(2)
    for _ in range(2):
        assert torch.equal(fn(x), x + 100)
    assert not m.is_compiling()
