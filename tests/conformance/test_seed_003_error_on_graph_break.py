"""error_on_graph_break, its nesting, and its interaction with fullgraph."""

from __future__ import annotations

import pytest
import torch

import carve


def test_false_under_true_decorator(m, backend):
    @m.error_on_graph_break(False)
    def code_with_a_difficult_graph_break(x):
        x = x + 1
        m.graph_break()
        return x + 2

    def inner(x):
        return code_with_a_difficult_graph_break(x)

    @m.error_on_graph_break(True)
    @carve.compile(backend=backend)
    def fn(x):
        return inner(x)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)


def test_false_as_context_manager_inside_compiled_function(m, backend):
    @m.error_on_graph_break(True)
    @carve.compile(backend=backend)
    def fn(x):
        x = x + 1
        with m.error_on_graph_break(False):
            m.graph_break()
        return x + 2

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)
    assert backend.graphs == 2


def test_monkey_patched_third_party_forward(m, backend):
    class ThirdPartyModule(torch.nn.Module):
        def forward(self, x):
            x = x + 1
            m.graph_break()
            return x + 2

    tp_mod = ThirdPartyModule()
    tp_mod.forward = m.error_on_graph_break(False)(tp_mod.forward)

    @m.error_on_graph_break(True)
    @carve.compile(backend=backend)
    def fn(x):
        return tp_mod.forward(x)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)


def test_true_in_callee_errors_under_default(m, backend):
    @m.error_on_graph_break(True)
    def inner2(x):
        x = x + 1
        m.graph_break()  # error
        return x + 2

    def inner(x):
        return inner2(x)

    @carve.compile(backend=backend)
    def fn(x):
        x = x + 4
        m.graph_break()  # no error
        return inner(x)

    for _ in range(2):
        with pytest.raises(carve.GraphBreakError) as info:
            fn(torch.randn(3))
        assert info.value.code == "CRV001"


def test_nesting_context_manager_in_callee(m, backend):
    def inner(x):
        x = x + 1
        m.graph_break()
        return x + 2

    def inner2(x):
        with m.error_on_graph_break(False):
            return inner(x)

    @m.error_on_graph_break(True)
    @carve.compile(backend=backend)
    def fn(x):
        return inner2(x)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)


def test_nested_regions_innermost_wins(m, backend):
    def inner(x):
        x = x + 1
        with m.error_on_graph_break(False):
            m.graph_break()
        return x + 2

    def inner2(x):
        with m.error_on_graph_break(True):
            return inner(x)

    @carve.compile(backend=backend)
    def fn(x):
        return inner2(x)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x + 3)


def test_three_levels_of_nesting(backend):
    def level3(x):
        carve.graph_break()
        return x * 2

    @carve.error_on_graph_break(False)
    def level2(x):
        return level3(x) + 1

    @carve.error_on_graph_break(True)
    def level1(x):
        return level2(x) - 1

    @carve.compile(backend=backend)
    def fn(x):
        return level1(x)

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), x * 2)


def test_fullgraph_wins_over_error_on_graph_break_false(m, backend):
    @m.error_on_graph_break(False)
    def inner(x):
        x = x + 1
        m.graph_break()
        return x + 2

    @carve.compile(fullgraph=True, backend=backend)
    def fn(x):
        return inner(x)

    with pytest.raises(carve.GraphBreakError):
        fn(torch.randn(3))


def test_fullgraph_cannot_be_toggled_back(m, backend):
    @carve.compile(fullgraph=False, backend=backend)
    def inner(x):
        x = x + 1
        m.graph_break()
        return x + 2

    @carve.compile(fullgraph=True, backend=backend)
    def fn(x):
        return inner(x)

    with pytest.raises(carve.GraphBreakError):
        fn(torch.randn(3))


def test_nested_fullgraph_errors_under_permissive_caller(m, backend):
    @carve.compile(fullgraph=True, backend=backend)
    def inner(x):
        x = x + 1
        m.graph_break()
        return x + 2

    @carve.compile(fullgraph=False, backend=backend)
    def fn(x):
        return inner(x)

    with pytest.raises(carve.GraphBreakError):
        fn(torch.randn(3))


def test_skip_frame_inside_error_on_graph_break_false_region(m, backend):
    def problematic(x):
        m.skip_frame()
        return x + 1

    @carve.compile(backend=backend)
    def fn(x):
        with m.error_on_graph_break(False):
            y = problematic(x)
        return y * 2

    x = torch.randn(3)
    for _ in range(2):
        assert torch.allclose(fn(x), (x + 1) * 2)
