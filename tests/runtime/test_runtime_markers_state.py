"""Markers, compile state and torch-marker recognition."""


import pytest
import torch

import carve.runtime as rt
from carve.runtime import capture_policy, compat, state
from carve.runtime.compat import Marker, classify_callable


def test_markers_are_noops_in_eager_code():
    assert rt.graph_break() is None and rt.skip_frame("why") is None
    assert not rt.is_compiling()


def test_is_compiling_true_inside_trace_false_in_disabled(make_region):
    seen = {}

    @rt.disable
    def eager_part():
        seen["disabled"] = (rt.is_compiling(), torch.compiler.is_compiling())

    def region(x):
        seen["trace"] = (rt.is_compiling(), torch.compiler.is_compiling())
        eager_part()
        return x + 1

    r = make_region(region)
    r(torch.ones(1))
    assert seen["trace"] == (True, True)
    assert seen["disabled"] == (False, False)
    assert not rt.is_compiling() and not torch.compiler.is_compiling()


def test_code_branching_on_torch_is_compiling_matches_torch_compile(make_region, backend):
    def region(x):
        if torch.compiler.is_compiling():
            return x + 1
        return x - 1

    r = make_region(region, backend)
    x = torch.zeros(2)
    assert torch.equal(r(x), torch.ones(2)) and torch.equal(r(x), torch.ones(2))
    assert torch.equal(torch.compile(region, backend="eager")(x), torch.ones(2))


def test_disable_with_and_without_arguments():
    def f(x):
        return x + 1

    d1 = rt.disable(f)
    d2 = rt.disable(recursive=False)(f)
    assert d1(1) == 2 and d2(1) == 2
    assert d1.__wrapped__ is f and d1.__name__ == "f"
    assert d1.__carve_disable__ is True and d2.__carve_disable__ is False
    assert classify_callable(d1) is Marker.DISABLED
    assert classify_callable(d2) is Marker.DISABLED_NONRECURSIVE


def test_disabled_scope_makes_regions_run_original_code(make_region, backend):
    r = make_region(lambda x: x * 2, backend)
    calls = []

    @rt.disable
    def outer(x):
        calls.append(state.is_disabled())
        return r(x)

    assert torch.equal(outer(torch.ones(2)), torch.full((2,), 2.0))
    assert calls == [True] and backend.graphs == 0 and not state.is_disabled()
    nonrec = rt.disable(lambda x: (state.is_disabled(), r(x)), recursive=False)
    flag, _ = nonrec(torch.ones(2))
    assert flag is False and backend.graphs == 1  # nested compiled code still compiles


def test_fullgraph_and_error_on_graph_break_state():
    assert not capture_policy.break_raises()
    with state.error_on_graph_break_scope(True):
        assert capture_policy.break_raises()
        with state.error_on_graph_break_scope(False):
            assert not capture_policy.break_raises()  # innermost wins
    with state.fullgraph_scope(True):
        with state.fullgraph_scope(False):
            assert capture_policy.break_raises()  # fullgraph=False does not turn an outer one off
            with state.error_on_graph_break_scope(False):
                assert capture_policy.break_raises()  # fullgraph wins
    assert not capture_policy.break_raises()


def test_error_on_graph_break_decorator_and_context_manager():
    @rt.error_on_graph_break(True)
    def strict():
        return capture_policy.break_raises()

    @rt.error_on_graph_break(False)
    def lax():
        return capture_policy.break_raises()

    assert strict() is True and lax() is False
    with rt.error_on_graph_break(True):
        assert lax() is False
        assert capture_policy.break_raises()
    with rt.error_on_graph_break(False):
        assert strict() is True
    assert not capture_policy.break_raises()
    assert classify_callable(rt.error_on_graph_break(True)) is Marker.ERROR_ON_GRAPH_BREAK
    assert classify_callable(torch._dynamo.error_on_graph_break(True)) is Marker.ERROR_ON_GRAPH_BREAK


def test_state_is_thread_local():
    import threading
    out = []
    with state.fullgraph_scope(True):
        t = threading.Thread(target=lambda: out.append(capture_policy.break_raises()))
        t.start()
        t.join()
    assert out == [False]


def test_classify_torch_and_carve_markers():
    assert classify_callable(torch._dynamo.graph_break) is Marker.GRAPH_BREAK
    assert classify_callable(rt.graph_break) is Marker.GRAPH_BREAK
    assert classify_callable(torch._dynamo.skip_frame) is Marker.SKIP_FRAME
    assert classify_callable(torch.compiler.disable(lambda: 0)) is Marker.DISABLED
    assert classify_callable(torch._dynamo.disable(lambda: 0, recursive=False)) is Marker.DISABLED_NONRECURSIVE
    assert classify_callable(torch._dynamo.nonstrict_trace(lambda: 0)) is Marker.NONSTRICT_TRACE
    assert classify_callable(rt.nonstrict_trace(lambda: 0)) is Marker.NONSTRICT_TRACE
    assert classify_callable(torch.compiler.is_compiling) is Marker.IS_COMPILING
    assert classify_callable(torch._dynamo.is_compiling) is Marker.IS_COMPILING
    assert classify_callable(rt.is_compiling) is Marker.IS_COMPILING
    assert classify_callable(torch.add) is Marker.NONE
    assert classify_callable(torch.ops.aten.sin) is Marker.NONE

    def user_fn(x):
        return x

    torch.compiler.allow_in_graph(user_fn)
    assert classify_callable(user_fn) is Marker.ALLOW_IN_GRAPH

    @torch.library.custom_op("carve_test::classify", mutates_args=())
    def op(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    assert classify_callable(op) is Marker.CUSTOM_OP
    assert classify_callable(torch.ops.carve_test.classify) is Marker.CUSTOM_OP
    assert classify_callable(torch.ops.carve_test.classify.default) is Marker.CUSTOM_OP


def test_allow_and_disallow_registries_exclude_each_other():
    def g(x):
        return x

    assert rt.disallow_in_graph(g) is g and classify_callable(g) is Marker.DISALLOWED
    assert rt.allow_in_graph(g) is g and classify_callable(g) is Marker.ALLOW_IN_GRAPH
    rt.disallow_in_graph(g)
    assert classify_callable(g) is Marker.DISALLOWED
    rt.markers._disallowed.pop(id(g))


def test_nonstrict_trace_wrapper_preserves_function():
    def g(x):
        return x + 1

    w = rt.nonstrict_trace(g)
    assert w(1) == 2 and w.__wrapped__ is g and w.__name__ == "g"


def test_lookup_backend():
    assert compat.lookup_backend("eager") is not None
    fn = lambda gm, ex: gm.forward  # noqa: E731
    assert compat.lookup_backend(fn) is fn
    with pytest.raises(ValueError, match="aot_eager"):
        compat.lookup_backend("no_such_backend")
