"""A compiled function whose every region runs as Python runs as written from then on, with the
same results, prints and errors as before (compiler/as_written.py).

The regions are made Python by the cost check against a backend whose graph calls sleep (as in
test_cost_check.py), so which way wins does not hang on this machine's timings; where a region
must stay compiled, the tests' even clock keeps it so (tests/conftest.py)."""

import contextlib
import io
import time

import pytest
import torch

import carve
from carve import as_written
from carve.runtime import cost_check
from carve.runtime.errors import GraphBreakError
from carve.testing import CountingBackend, runs_as_written

from tests.runtime.test_cost_check import DECIDED, sleeping_backend

# Enough calls for every region's decision and a settle check after it.
SETTLED = DECIDED + as_written.CHECK_CALLS[-1]


@pytest.fixture
def machine_clock(monkeypatch):
    monkeypatch.setattr(cost_check, "ENABLED", True)
    monkeypatch.setattr(cost_check, "clock", time.perf_counter)


W = torch.tensor([0.5, -1.0, 2.0])


def fit(w, steps):
    """pytorch/examples' regression loop in small: an unbounded loop, `.item()`, a break."""
    w = w.clone().requires_grad_(True)
    for step in range(1, steps + 1):
        x = torch.linspace(-1, 1, 8).unsqueeze(1) ** torch.arange(1, 4)
        loss = ((x @ w - x @ W) ** 2).mean()
        value = loss.item()
        loss.backward()
        with torch.no_grad():
            w -= 0.3 * w.grad
            w.grad.zero_()
        if value < 1e-3:
            break
    print(f"loss {value:.6f} after {step} steps")
    return w.detach(), step


def run_and_compare(fn, compiled, args, calls):
    for _ in range(calls):
        with contextlib.redirect_stdout(io.StringIO()) as got_out:
            got = compiled(*args)
        with contextlib.redirect_stdout(io.StringIO()) as want_out:
            want = fn(*args)
        if isinstance(want, str):
            assert got == want
        else:
            torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert got_out.getvalue() == want_out.getvalue()


def test_a_function_whose_regions_all_run_as_python_runs_as_written(machine_clock):
    backend = sleeping_backend(3e-4)
    compiled = carve.compile(fit, backend=backend)
    args = (torch.zeros(3), 40)
    run_and_compare(fit, compiled, args, SETTLED)
    regions = carve.api.compiled_function_of(compiled).regions
    assert regions and all(region.path == "eager" for region in regions)
    assert runs_as_written(compiled)
    graph_calls = backend.counts.calls
    run_and_compare(fit, compiled, args, 5)
    assert backend.counts.calls == graph_calls  # nothing compiled runs any more


def test_no_settle_check_before_a_region_has_settled(machine_clock):
    compiled = carve.compile(fit, backend=sleeping_backend(3e-4))
    run_and_compare(fit, compiled, (torch.zeros(3), 40), 3)
    assert not runs_as_written(compiled)  # still weighing its regions


def breaks(x):
    y = x.sin() * 2
    print("norm", round(float(y.norm()), 3))
    return y.cos()


def test_error_on_graph_break_raises_at_the_break_after_the_switch(machine_clock):
    compiled = carve.compile(breaks, backend=sleeping_backend(3e-4))
    x = torch.ones(4)
    for _ in range(2):
        with torch._dynamo.error_on_graph_break(True), pytest.raises(GraphBreakError) as before:
            compiled(x)
    run_and_compare(breaks, compiled, (x,), SETTLED)
    assert runs_as_written(compiled)
    with torch._dynamo.error_on_graph_break(True), pytest.raises(GraphBreakError) as after:
        compiled(x)
    assert (after.value.filename, after.value.lineno) == (before.value.filename, before.value.lineno)
    assert after.value.lineno == breaks.__code__.co_firstlineno + 2
    run_and_compare(breaks, compiled, (x,), 2)  # and as written again after the scope


def strict_inside(x):
    y = x.sin() * 2
    print("norm", round(float(y.norm()), 3))
    with torch._dynamo.error_on_graph_break(False):
        print("mean", round(float(y.mean()), 3))
    return y.cos()


def test_a_function_that_sets_the_break_policy_itself_keeps_its_checkpoints(machine_clock):
    compiled = carve.compile(strict_inside, backend=sleeping_backend(3e-4))
    run_and_compare(strict_inside, compiled, (torch.ones(4),), SETTLED)
    assert not runs_as_written(compiled)
    assert as_written.changes_break_policy(strict_inside.__code__)
    assert not as_written.changes_break_policy(fit.__code__)


def test_the_policy_named_by_a_keyword_counts_too():
    def patched(x):
        with torch._dynamo.config.patch(error_on_graph_break=True):
            return x + 1

    assert as_written.changes_break_policy(patched.__code__)


# The caller has no tensor work of its own; its callee breaks and is compiled on its own.
def heavy_helper(x):
    y = (x.sin() * 2 + x.cos()).tanh()
    print("helper", round(float(y.sum()), 3))
    return float(y.mean())


def quiet_helper(word):
    # Strings, not ints: Dynamo's automatic dynamic shapes, kept per source line across tests,
    # could make an int's arithmetic a graph.
    print("quiet", word)
    return word.upper()


def over_heavy(xs):
    total = 0.0
    for x in xs:
        total += heavy_helper(x)
    return total


def over_quiet(words):
    total = ""
    for word in words:
        total += quiet_helper(word)
    return total


def test_a_caller_waits_for_its_compiled_callee(backend):
    # The tests' even clock keeps the helper's region compiled: the caller must keep calling the
    # compiled helper, so it never runs as written.
    compiled = carve.compile(over_heavy, backend=backend)
    xs = [torch.full((4,), float(i)) for i in range(3)]
    run_and_compare(over_heavy, compiled, (xs,), SETTLED)
    assert not runs_as_written(compiled)
    assert backend.graphs >= 1
    calls = backend.calls
    run_and_compare(over_heavy, compiled, (xs,), 1)
    per_call = backend.calls - calls
    assert per_call >= len(xs)  # the helper's graphs run on every call
    run_and_compare(over_heavy, compiled, (xs,), 1)
    assert backend.calls == calls + 2 * per_call


def test_a_caller_whose_callees_settled_runs_as_written(backend):
    compiled = carve.compile(over_quiet, backend=backend)
    run_and_compare(over_quiet, compiled, (["a", "b", "c"],), SETTLED)
    assert runs_as_written(compiled)
    assert backend.graphs == 0


class Stepper:
    def __init__(self):
        self.scale = 2.0

    def step(self, x):
        y = (x * self.scale).sin()
        print("step", round(float(y.sum()), 3))
        return y


def through_method(stepper, xs):
    return [stepper.step(x) for x in xs]


def test_a_method_callee_compiled_on_its_own_keeps_the_caller(backend):
    stepper = Stepper()
    compiled = carve.compile(through_method, backend=backend)
    xs = [torch.full((4,), float(i)) for i in range(2)]
    run_and_compare(through_method, compiled, (stepper, xs), SETTLED)
    assert backend.graphs >= 1
    assert not runs_as_written(compiled)
    stepper.scale = 3.0  # read by the compiled method's guards: still eager's values
    run_and_compare(through_method, compiled, (stepper, xs), 2)


def test_calls_as_written_follow_changes_to_globals_and_defaults(machine_clock):
    compiled = carve.compile(fit, backend=sleeping_backend(3e-4))
    run_and_compare(fit, compiled, (torch.zeros(3), 40), SETTLED)
    assert runs_as_written(compiled)
    global W
    saved = W
    try:
        W = torch.tensor([1.0, 0.0, -0.5])
        run_and_compare(fit, compiled, (torch.zeros(3), 40), 2)
        fit.__defaults__ = (torch.ones(3), 3)
        with contextlib.redirect_stdout(io.StringIO()) as got_out:
            got = compiled()
        with contextlib.redirect_stdout(io.StringIO()) as want_out:
            want = fit()
        torch.testing.assert_close(got, want, rtol=0, atol=0)
        assert got_out.getvalue() == want_out.getvalue()
    finally:
        W = saved
        fit.__defaults__ = None


def test_no_graph_runs_once_settled(machine_clock):
    counts = CountingBackend()
    compiled = carve.compile(over_quiet, backend=counts)
    run_and_compare(over_quiet, compiled, (["d", "e"],), SETTLED)
    assert runs_as_written(compiled)
    calls = counts.calls
    run_and_compare(over_quiet, compiled, (["d", "e"],), 3)
    assert counts.calls == calls


def test_the_report_says_from_which_call_the_function_ran_as_written(tmp_path, machine_clock):
    from carve.report import regions_of, write_function_page

    compiled = carve.compile(over_quiet, backend=CountingBackend())
    run_and_compare(over_quiet, compiled, (["d", "e"],), SETTLED)
    assert runs_as_written(compiled)
    regions = regions_of(carve.api.compiled_function_of(compiled))
    write_function_page(regions, tmp_path / "page.html")
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert f"from its call {regions.as_written_from} on, carve ran this function as written" in text
    assert 1 < regions.as_written_from <= SETTLED
