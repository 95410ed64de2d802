"""The switch to a function as written (compiler/as_written.py) at its edges, found by a review:
once a function runs as written, its calls must still behave as the rewritten function's did (values and prints as eager's, graph-break errors where the
rewritten function raised them, models and callees compiled where it compiled them).

Regions are made Python as in test_as_written.py (the machine's clock and a backend whose graph
calls sleep); where a region must stay compiled, the tests' even clock keeps it so."""

import contextlib
import io
import time

import pytest
import torch

import carve
from carve import as_written
from carve.api import compiled_function_of
from carve.runtime import cost_check
from carve.runtime.errors import GraphBreakError
from carve.testing import runs_as_written

from tests.runtime.test_as_written import heavy_helper, quiet_helper
from tests.runtime.test_cost_check import DECIDED, sleeping_backend
from tests.runtime.test_worth_compiling import priced_backend

SETTLED = DECIDED + as_written.CHECK_CALLS[-1]


@pytest.fixture
def machine_clock(monkeypatch):
    monkeypatch.setattr(cost_check, "ENABLED", True)
    monkeypatch.setattr(cost_check, "clock", time.perf_counter)


def call_and_compare(fn, compiled, args, calls=1, **kwargs):
    """`calls` calls compiled and eagerly: the same results and printed output."""
    for _ in range(calls):
        with contextlib.redirect_stdout(io.StringIO()) as got_out:
            got = compiled(*args, **kwargs)
        with contextlib.redirect_stdout(io.StringIO()) as want_out:
            want = fn(*args, **kwargs)
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert got_out.getvalue() == want_out.getvalue()


# -- 1. A torch module a region runs compiled (nn.Linear: its forward a WholeCall) --------------

def predict(fc, x):
    out = fc(x)
    print("mean", round(float(out.mean()), 4))
    return out


def test_a_torch_module_the_region_runs_compiled_keeps_the_caller_rewritten():
    """The region is Python with its model compiled (GraphRegion._run_with_compiled_models); the
    model, an nn.Linear, has a compiled forward that is a WholeCall, whose region stays compiled
    here: the caller keeps its rewritten function, which runs the Linear compiled."""
    torch.manual_seed(0)
    fc = torch.nn.Linear(4, 3).requires_grad_(False)
    backend = priced_backend()  # priced: the region's first call finds it runs a model
    compiled = carve.compile(predict, backend=backend)
    x = torch.randn(2, 4)
    call_and_compare(predict, compiled, (fc, x), SETTLED)
    (region,) = compiled_function_of(compiled).regions
    assert region.compiled_models, region.eager_reason
    assert backend.graphs >= 1, "the model's forward never ran compiled"
    calls = backend.calls
    call_and_compare(predict, compiled, (fc, x), 2)
    assert backend.calls == calls + 2  # its graph runs on every call, as the rewritten function runs it
    assert not runs_as_written(compiled)


# -- 2. A generator consumed where breaks must raise ----------------------------------------------

def halves(x):
    y = (x.sin() * 2).tanh()
    print("mid", round(float(y.sum()), 3))
    yield y
    yield (y.cos() + 1).exp()


def test_a_generator_consumed_under_error_on_graph_break_raises_on_every_call(backend):
    """The rewritten generator's checkpoint reads the break policy when the body runs, not when
    the generator is made: made outside the scope and consumed inside, every call raises
    (a generator never runs as written: the policy at the call is not the one at its body)."""
    compiled = carve.compile(halves, backend=backend)
    x = torch.ones(4)
    for call in range(4):
        made = compiled(x)
        with torch._dynamo.error_on_graph_break(True), pytest.raises(GraphBreakError):
            with contextlib.redirect_stdout(io.StringIO()):
                list(made)
    torch.testing.assert_close(list(compiled(x)), list(halves(x)), rtol=0, atol=0)


# -- 3. The break policy set inside the function under a name as_written does not know ----------

strict = torch._dynamo.error_on_graph_break  # a module's own alias


@contextlib.contextmanager
def strict_mode(flag):
    with torch._dynamo.error_on_graph_break(flag):
        yield


def checked_by_alias(x, checks=False):
    y = (x.sin() * 2).tanh()
    with strict(checks):
        print("y", round(float(y.sum()), 3))
    return (y.cos() + 1).exp()


def checked_by_helper(x, checks=False):
    y = (x.sin() * 2).tanh()
    with strict_mode(checks):
        print("y", round(float(y.sum()), 3))
    return (y.cos() + 1).exp()


@pytest.mark.parametrize("fn", [checked_by_alias, checked_by_helper])
def test_a_break_policy_set_inside_under_another_name_still_raises(machine_clock, fn):
    """An alias (`strict = torch._dynamo.error_on_graph_break`) or a helper context manager opens
    the scope under a name of the user's: `changes_break_policy` follows the function's global
    names, so the function keeps raising at the print, as the rewritten one raises."""
    compiled = carve.compile(fn, backend=sleeping_backend(3e-4))
    x = torch.ones(4)
    with pytest.raises(GraphBreakError):
        compiled(x, checks=True)
    call_and_compare(fn, compiled, (x,), SETTLED)
    rewritten = compiled_function_of(compiled)._build.function
    with pytest.raises(GraphBreakError), contextlib.redirect_stdout(io.StringIO()):
        rewritten(x, checks=True)  # what the calls ran before the switch
    with pytest.raises(GraphBreakError), contextlib.redirect_stdout(io.StringIO()):
        compiled(x, checks=True)


# -- 4. A nested definition handed out, called later where breaks must raise -------------------

def make_report(x):
    y = (x.sin() * 2).tanh()
    print("y", round(float(y.sum()), 3))

    def report(z):
        print("z", round(float(z.sum()), 3))
        return (z.cos() + 1).exp()
    return y, report


def test_a_nested_definition_handed_out_after_the_switch_keeps_its_checkpoints(machine_clock):
    """`report` is the compiled definition, whose own checkpoints read the policy when it is
    called: a function that hands out compiled definitions never runs as written."""
    compiled = carve.compile(make_report, backend=sleeping_backend(3e-4))
    x = torch.ones(4)
    _, report = compiled(x)
    with torch._dynamo.error_on_graph_break(True), pytest.raises(GraphBreakError):
        report(x)
    for _ in range(SETTLED):
        with contextlib.redirect_stdout(io.StringIO()):
            _, report = compiled(x)
            report(x)
    _, report = compiled(x)
    with torch._dynamo.error_on_graph_break(True), pytest.raises(GraphBreakError):
        with contextlib.redirect_stdout(io.StringIO()):
            report(x)


# -- 5. A callee first reached after the switch ---------------------------------------------------

def reduce_while_over(words, limit=100):
    total = 0
    for word in words:
        total += len(quiet_helper(word))
    while total > limit:
        total = heavy_helper(torch.full((4,), float(total))) + limit - 1
    return total


def test_a_callee_first_reached_after_the_switch_is_compiled(backend):
    """The loop calling heavy_helper is not entered while the function settles; once it is, the
    rewritten function compiles heavy_helper on its own (`_carve_f.compiled`): a function whose
    callee checkpoints have not all run does not switch (the tests' even clock keeps the
    helper compiled)."""
    compiled = carve.compile(reduce_while_over, backend=backend)
    call_and_compare(reduce_while_over, compiled, (["a", "b"],), SETTLED)
    graphs = backend.graphs
    call_and_compare(reduce_while_over, compiled, (["a", "b"], 1), 10)
    assert backend.graphs > graphs, "heavy_helper was never compiled"


# -- 6. When the checks run, and the call the report names ---------------------------------------

def test_settle_checks_run_on_the_documented_calls_and_the_report_names_the_first_call_as_written(backend):
    from tests.runtime.test_as_written import over_heavy, over_quiet

    # A function that never settles (its callee stays compiled): the calls its checks ran on.
    compiled = carve.compile(over_heavy, backend=backend)
    function = compiled_function_of(compiled)
    xs = [torch.ones(4)]
    with contextlib.redirect_stdout(io.StringIO()):
        compiled(xs)
    checked, calls = [], [1]
    check = function._check_settled

    def spy():
        checked.append(calls[0])
        return check()
    function._check_settled = spy
    for call in range(2, 200):
        calls[0] = call
        with contextlib.redirect_stdout(io.StringIO()):
            compiled(xs)
    assert checked == [2, 3, 5, 9, 17, 33, 65, 193]

    # A function that settles: the report's call is the first one that ran as written.
    compiled = carve.compile(over_quiet, backend=backend)
    first = None
    for call in range(1, SETTLED + 1):
        with contextlib.redirect_stdout(io.StringIO()):
            compiled(["a", "b"])
        if first is None and runs_as_written(compiled):
            first = call
    assert first is not None
    assert compiled_function_of(compiled)._build.regions.as_written_from == first
