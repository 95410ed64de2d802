"""where torch.compile skips whole frames, carve keeps compiling around the break."""

from __future__ import annotations

import contextlib

import torch

import carve


def inner1(x):
    return x + 1


def inner2(x):
    return x + 2


def test_skip_frame_runs_function_eagerly_but_compiles_callees(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        x = inner1(x)
        m.skip_frame()
        x = inner2(x)
        return x

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)
    # inner1 and inner2 are compiled when called: one graph each.
    assert backend.graphs == 2


def test_graph_break_in_a_loop_does_not_skip(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        for i in range(5):
            x = x + 1
            if i == 3:
                m.graph_break()
        return x

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 5)
    assert backend.graphs >= 1 and backend.calls >= 5  # the loop body runs as a graph


class CustomCtxManager:
    def __enter__(self):
        pass

    def __exit__(self, exc_type, exc_value, traceback):
        pass


def test_graph_break_in_a_context_manager_does_not_skip(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        with CustomCtxManager():
            x = x + 1
            m.graph_break()
            return x + 1

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 2)
    assert backend.graphs == 2


def test_graph_break_in_resumable_context_managers(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        with contextlib.nullcontext():
            with torch.no_grad():
                x = x + 1
                m.graph_break()
                return x + 1

    x = torch.randn(3, requires_grad=True)
    for _ in range(2):
        out = fn(x)
        assert torch.allclose(out, x.detach() + 2) and not out.requires_grad


def test_graph_break_in_a_try_block_does_not_skip(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        try:
            x = x + 1
            m.graph_break()
            return x + 1
        except Exception:
            pass

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 2)
    assert backend.graphs == 2


def test_isolated_problematic_code(m, backend):
    @carve.compile(backend=backend)
    def fn(x):
        x = inner1(x)

        def problematic_code():
            m.skip_frame()

        problematic_code()
        x = inner2(x)
        return x

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)
    assert backend.graphs >= 2
