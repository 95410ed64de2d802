"""Graph breaks Dynamo meets inside a region: correct results, the right code and line, one log per location."""

import logging

import pytest
import torch

import carve.runtime as rt
from carve.runtime import GraphBreakError, state
from carve.testing import CountingBackend

from runtime_helpers import line_of


def with_item(x):
    y = x * 2
    s = y.sum().item()
    return y + s


def test_item_breaks_where_it_is_and_is_reported_once(make_region, backend):
    r = make_region(with_item, backend)
    for _ in range(3):
        x = torch.randn(4)
        torch.testing.assert_close(r(x), with_item(x))
    (event,) = r.break_events
    assert event.code == "CRV004" and "item" in event.message
    assert event.lineno == line_of(with_item, ".item()")
    # Dynamo splits the region at the break: the work before and after it is still compiled.
    assert backend.graphs >= 1 and not r.eager


def helper_prints(x):
    print("value", x.shape[0])
    return x * 2


def calls_printer(x):
    y = x + 1
    z = helper_prints(y)
    return z - 1


def test_print_in_callee_is_crv003_and_prints_once_per_call(make_region, backend, capsys):
    r = make_region(calls_printer, backend)
    for _ in range(3):
        x = torch.randn(3)
        assert torch.equal(r(x), calls_printer(x))
    out = capsys.readouterr().out
    assert out.count("value 3") == 6  # 3 region calls + 3 eager reference calls
    (event,) = r.break_events
    assert event.code == "CRV003"
    assert event.lineno == line_of(calls_printer, "helper_prints(y)")
    # The user stack goes from the region's line down to the print in the callee.
    assert [e[2] for e in event.user_stack] == ["calls_printer", "helper_prints"]
    assert event.user_stack[1][1] == line_of(helper_prints, "print(")


def carve_break_callee(x):
    rt.graph_break()
    return x


def torch_break_callee(x):
    torch._dynamo.graph_break()
    return x


@pytest.mark.parametrize("callee", [carve_break_callee, torch_break_callee])
def test_explicit_graph_break_in_callee_is_crv001(make_region, backend, callee):
    def region(x):
        y = x.sin()
        y = callee(y)
        return y.cos()

    r = make_region(region, backend)
    x = torch.randn(3)
    assert torch.equal(r(x), x.sin().cos())
    assert r.break_events[0].code == "CRV001"
    assert r.break_events[0].lineno == line_of(region, "callee(y)")


def test_skip_frame_is_crv002(make_region):
    def region(x):
        torch._dynamo.skip_frame()
        return x + 1

    r = make_region(region)
    assert torch.equal(r(torch.zeros(2)), torch.ones(2))
    assert r.break_events[0].code == "CRV002"


@rt.disable
def carve_disabled(x):
    return x * 3


@torch.compiler.disable
def torch_disabled(x):
    return x * 3


@pytest.mark.parametrize("callee", [carve_disabled, torch_disabled])
def test_disabled_callee_is_crv013(make_region, backend, callee):
    def region(x):
        return callee(x + 1) - 1

    r = make_region(region, backend)
    x = torch.randn(3)
    for _ in range(2):
        assert torch.equal(r(x), (x + 1) * 3 - 1)
    assert r.break_events[0].code == "CRV013"


def test_disallow_in_graph_torch_sub_is_crv015(make_region, backend):
    def region(x):
        y = torch.add(x, 1)
        y = torch.sub(y, 1)
        return torch.add(y, 1)

    rt.disallow_in_graph(torch.sub)
    try:
        r = make_region(region, backend)
        x = torch.randn(3)
        assert torch.equal(r(x), region(x))
        # Dynamo reports a disallowed torch function as one it skips (CRV013).
        assert r.break_events[0].code in ("CRV015", "CRV013")
        assert r.break_events[0].lineno == line_of(region, "torch.sub")
    finally:
        rt.allow_in_graph(torch.sub)
    r2 = make_region(region, backend)
    r2(x)
    assert r2.break_events == [] and backend.ops_per_graph[-1] == 3  # allowed again: one graph


def test_torch_disallow_in_graph_is_recognised(make_region):
    def region(x):
        return torch.mul(x, 2)

    torch._dynamo.disallow_in_graph(torch.mul)
    try:
        r = make_region(region)
        r(torch.ones(2))
        assert r.break_events[0].code in ("CRV015", "CRV013")
    finally:
        torch._dynamo.allow_in_graph(torch.mul)


def opaque_double(x):
    return x.sin() * 2 + x.cos()


def test_allow_in_graph_function_is_one_opaque_node(make_region, backend):
    rt.allow_in_graph(opaque_double)
    try:
        def region(x):
            return opaque_double(x + 1) - 1

        r = make_region(region, backend)
        for _ in range(2):
            x = torch.randn(3)
            torch.testing.assert_close(r(x), region(x))
        (gm,) = backend.graph_modules
        targets = [n.target for n in gm.graph.nodes if n.op in ("call_function", "call_method")]
        assert opaque_double in targets and len(targets) == 3
    finally:
        rt.disallow_in_graph(opaque_double)
        rt.markers._disallowed.pop(id(opaque_double))


def magic_number():
    torch._dynamo.graph_break()
    print("nonstrict print is ignored while tracing")
    return torch.tensor([42.0])


def test_nonstrict_trace_ignores_breaks_and_records_ops(make_region):
    for marker in (rt.nonstrict_trace, torch._dynamo.nonstrict_trace):
        traced_magic = marker(magic_number)

        def region(x):
            return x + traced_magic()

        backend = CountingBackend()  # one per marker: each must make its own single graph
        r = make_region(region, backend)
        x = torch.randn(3)
        assert torch.equal(r(x), x + 42)
        assert torch.equal(r(x), x + 42)
        assert r.break_events == [] and backend.graphs == 1
        # One opaque call of the traced function (no graph_break, no print inside), then the add.
        (gm,) = backend.graph_modules
        assert "print" not in gm.code and "graph_break" not in gm.code


def test_nonstrict_trace_inline_use_and_conversions_still_break(make_region):
    def converts(x):
        return x * x.sum().item()

    def region(x):
        return rt.nonstrict_trace(converts)(x) + 1

    r = make_region(region)
    x = torch.randn(3)
    torch.testing.assert_close(r(x), region(x))
    assert "CRV004" in [e.code for e in r.break_events]


@torch.library.custom_op("carve_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


def test_custom_op_is_one_node_no_break(make_region, backend):
    def region(x):
        return twice(x + 1).sin()

    r = make_region(region, backend)
    for _ in range(2):
        x = torch.randn(3)
        torch.testing.assert_close(r(x), region(x))
    assert r.break_events == [] and backend.ops_per_graph == [3]
    assert any("carve_test" in str(n.target) for n in backend.graph_modules[0].graph.nodes)


def test_custom_op_on_aot_eager(make_region):
    def region(x):
        return twice(x + 1).sin()

    r = make_region(region, "aot_eager")
    x = torch.randn(3)
    for _ in range(2):
        torch.testing.assert_close(r(x), region(x))
    assert r.break_events == [] and len(r.graphs) == 1


class TimesThreeGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3  # deliberately not the true derivative


@pytest.mark.parametrize("backend_name", ["counting", "aot_eager"])
def test_autograd_function_keeps_custom_backward(make_region, backend_name, backend):
    def region(x):
        return TimesThreeGrad.apply(x + 1).sum()

    r = make_region(region, backend if backend_name == "counting" else backend_name)
    for _ in range(2):
        x = torch.randn(3, requires_grad=True)
        r(x).backward()
        assert torch.equal(x.grad, torch.full((3,), 3.0))
    assert r.break_events == [] and len(r.graphs) == 1


def data_dependent(x):
    return x[x > 0].sum()


def test_boolean_mask_indexing_is_crv009(make_region):
    r = make_region(data_dependent)
    x = torch.randn(6)
    torch.testing.assert_close(r(x), data_dependent(x))
    assert r.break_events[0].code == "CRV009"


def branches(x):
    if x.sum() > 0:
        return x * 2
    return -x


def test_bool_of_tensor_breaks(make_region):
    r = make_region(branches)
    for x in (torch.ones(2), -torch.ones(2), torch.ones(2)):
        assert torch.equal(r(x), branches(x))
    assert r.break_events[0].code == "CRV005"


def with_print(x):
    y = x * 2
    print("sum", y.sum())
    return y + 1


def test_fullgraph_scope_raises_graph_break_error_with_location(make_region):
    # (Not `.item()`: under fullgraph torch 2.13 captures the scalar in the graph, no break.)
    r = make_region(with_print)
    with state.fullgraph_scope(True):
        with pytest.raises(GraphBreakError) as info:
            r(torch.randn(3))
    err = info.value
    assert err.lineno == line_of(with_print, 'print("sum"')
    assert err.filename == with_print.__code__.co_filename
    text = str(err)
    assert f":{err.lineno}: {err.code} " in text
    assert err.code == "CRV003" and "print(" in err.source_line and "\n    ^" in text
    assert "hint: " in text and "strategy: " in text


def test_fullgraph_option_raises(make_region):
    r = make_region(calls_printer, fullgraph=True)
    with pytest.raises(GraphBreakError) as info:
        r(torch.randn(3))
    assert info.value.code == "CRV003"


def test_error_on_graph_break_toggled_inside_traced_code(make_region):
    @rt.error_on_graph_break(False)
    def tolerant(x):
        rt.graph_break()
        return x

    def region(x):
        return tolerant(x) + 1

    r = make_region(region)
    with rt.error_on_graph_break(True):
        assert torch.equal(r(torch.zeros(2)), torch.ones(2))  # innermost (False) wins
    assert r.break_events[0].code == "CRV001"

    r2 = make_region(region)
    with state.fullgraph_scope(True), pytest.raises(GraphBreakError):
        r2(torch.zeros(2))  # fullgraph wins over an inner error_on_graph_break(False)

    def strict_inside(x):
        with rt.error_on_graph_break(True):
            rt.graph_break()
        return x

    r3 = make_region(strict_inside)
    with pytest.raises(GraphBreakError):
        r3(torch.zeros(2))


def test_tensor_read_through_an_object_is_a_graph_input(make_region, backend):
    holder = type("Holder", (), {})()
    holder.t = torch.ones(3)

    def region(x):
        return x + holder.t

    r = make_region(region, backend)
    x = torch.randn(3)
    assert torch.equal(r(x), x + 1)
    assert r.break_events == [] and r.path == "dynamo"
    holder.t = torch.full((3,), 5.0)  # rebound: the next call must see it
    assert torch.equal(r(x), x + 5)
    holder.t.add_(1)  # changed in place: a graph input, never a baked constant
    assert torch.equal(r(x), x + 6)


def test_backward_in_region_is_crv012(make_region):
    def region(x):
        y = (x * 2).sum()
        y.backward()
        return x.grad

    r = make_region(region)
    x = torch.randn(3, requires_grad=True)
    assert torch.equal(r(x), torch.full((3,), 2.0))
    assert r.break_events[0].code == "CRV012"


def test_graph_break_logged_once_per_location(make_region, caplog):
    with caplog.at_level(logging.INFO, logger="carve.graph_breaks"):
        for _ in range(3):
            r = make_region(with_item)  # a fresh region meets the same break each time
            r(torch.randn(3))
    records = [rec for rec in caplog.records if rec.name == "carve.graph_breaks"]
    assert len(records) == 1
    msg = records[0].getMessage()
    assert "CRV004" in msg and "hint:" in msg
