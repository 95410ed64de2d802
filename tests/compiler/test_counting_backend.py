"""carve.testing.CountingBackend: the counts its docstring promises, under carve and torch.compile."""

from __future__ import annotations

import torch
import torch._dynamo

import carve
from carve.testing import CountingBackend


def step(x):
    y = x.sin()
    print("norm", y.norm())  # a graph break
    return y.cos()


def test_docstring_example_counts():
    torch._dynamo.reset()
    carve_counts, torch_counts = CountingBackend(), CountingBackend()
    carve_step = carve.compile(step, backend=carve_counts)
    torch_step = torch.compile(step, backend=torch_counts)
    for _ in range(2):
        x = torch.randn(8)
        torch.testing.assert_close(carve_step(x), step(x))
        torch.testing.assert_close(torch_step(x), step(x))
    assert repr(carve_counts) == "CountingBackend(graphs=2, calls=4, ops_run=6)"
    assert repr(torch_counts) == "CountingBackend(graphs=2, calls=4, ops_run=6)"
    assert carve_counts.ops_per_graph == torch_counts.ops_per_graph == [2, 1]
    assert len(carve_counts.graph_modules) == 2


def test_reset_counts_keeps_the_graphs():
    backend = CountingBackend()
    compiled = torch.compile(lambda x: x.sin() + 1, backend=backend)
    torch._dynamo.reset()
    compiled(torch.randn(3))
    backend.reset_counts()
    assert (backend.graphs, backend.calls, backend.ops_run, backend.ops_per_graph) == (1, 0, 0, [2])
    compiled(torch.randn(3))
    assert (backend.graphs, backend.calls, backend.ops_run) == (1, 1, 2)


def test_named_inner_backend_compiles_and_is_counted():
    backend = CountingBackend("aot_eager")
    x = torch.randn(4, requires_grad=True)
    carve.compile(lambda t: (t.sin() * 2).sum(), backend=backend)(x).backward()
    torch.testing.assert_close(x.grad, 2 * x.detach().cos())
    assert backend.graphs == 1 and backend.__name__ == "counting_backend"
    assert repr(backend).startswith("CountingBackend('aot_eager', graphs=1")


def test_custom_op_count():
    backend = CountingBackend(count_ops=lambda gm: 10)
    compiled = carve.compile(lambda x: x * 2, backend=backend)
    for _ in range(3):
        compiled(torch.randn(2))
    assert backend.ops_per_graph == [10] and (backend.calls, backend.ops_run) == (3, 30)
