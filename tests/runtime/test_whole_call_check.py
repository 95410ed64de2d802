"""A region kept compiled for its backward is weighed by whole calls of its function when the
function runs the backward itself, and runs as Python if that is faster; every call equals
eager (runtime/whole_call_check.py)."""

import logging
import time

import pytest
import torch

import carve
from carve.runtime import cost_check, log, whole_call_check
from carve.testing import CountingBackend
from tests.runtime.test_cost_check import sleeping_backend

# Calls enough for a region's cost check (warm-up, then a first timed compiled call over
# TIMED_UNDER) and the whole-call weighing after it.
CALLS = 1 + cost_check.WARM_CALLS + 2 + 2 * whole_call_check.WHOLE_CALL_SAMPLES + 2


@pytest.fixture(autouse=True)
def _real_clock(monkeypatch):
    monkeypatch.setattr(cost_check, "ENABLED", True)
    monkeypatch.setattr(cost_check, "clock", time.perf_counter)


def step(w, x, optimizer):
    loss = ((x @ w).tanh() ** 2).mean()
    print("loss", round(float(loss), 4))
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return float(loss)


def returns_loss(w, x):
    loss = ((x @ w).tanh() ** 2).mean()
    print("loss", round(float(loss), 4))
    return loss * 2


def make_state():
    torch.manual_seed(0)
    w = torch.randn(8, 4, requires_grad=True)
    return w, torch.optim.SGD([w], lr=0.1)


def batch(call):
    return torch.randn(16, 8, generator=torch.Generator().manual_seed(call))


def test_a_region_whose_compiled_forward_and_backward_are_slower_runs_as_python(capsys, caplog):
    backend = sleeping_backend(2 * cost_check.TIMED_UNDER)
    compiled = carve.compile(step, backend=backend)
    w, optimizer = make_state()
    w_eager, optimizer_eager = make_state()
    with caplog.at_level(logging.INFO, logger=log.PERF):
        for call in range(CALLS):
            got = compiled(w, batch(call), optimizer)
            got_printed = capsys.readouterr().out
            want = step(w_eager, batch(call), optimizer_eager)
            assert got == want and got_printed == capsys.readouterr().out
            torch.testing.assert_close(w, w_eager)
    region = next(r for r in compiled.regions if r.graphs)
    assert region.path == "eager" and "its backward included" in region.eager_reason, region.eager_reason
    said = [rec.getMessage() for rec in caplog.records if "its backward included" in rec.getMessage()]
    assert len(said) == 1
    # Decided: later calls run no graph.
    calls_then = backend.counts.calls
    for call in range(3):
        compiled(w, batch(call), optimizer)
        step(w_eager, batch(call), optimizer_eager)
    capsys.readouterr()
    assert backend.counts.calls == calls_then
    torch.testing.assert_close(w, w_eager)


def test_a_backward_outside_the_function_ends_the_weighing_and_the_region_stays_compiled(capsys):
    backend = sleeping_backend(2 * cost_check.TIMED_UNDER)
    compiled = carve.compile(returns_loss, backend=backend)
    w, _ = make_state()
    w_eager, _ = make_state()
    for call in range(CALLS):
        got = compiled(w, batch(call))
        want = returns_loss(w_eager, batch(call))
        torch.testing.assert_close(got, want)
        got.backward()
        want.backward()
        torch.testing.assert_close(w.grad, w_eager.grad)
    capsys.readouterr()
    region = next(r for r in compiled.regions if r.graphs)
    assert region.path == "dynamo" and region._whole_call is None
    # Its calls ran the graph on every call: the weighing ended at its first timed call.
    assert backend.counts.calls >= CALLS - 2


def test_a_region_as_fast_compiled_stays_compiled_and_returns_to_the_steady_path(capsys, monkeypatch):
    readings = iter(range(10**6))
    monkeypatch.setattr(cost_check, "clock", lambda: 2e-3 * next(readings))  # every timed call alike, over 1 ms
    backend = CountingBackend("eager")
    compiled = carve.compile(step, backend=backend)
    w, optimizer = make_state()
    w_eager, optimizer_eager = make_state()
    for call in range(CALLS):
        assert compiled(w, batch(call), optimizer) == step(w_eager, batch(call), optimizer_eager)
        torch.testing.assert_close(w, w_eager)
    capsys.readouterr()
    region = next(r for r in compiled.regions if r.graphs)
    assert region.path == "dynamo" and region._whole_call is None
    assert compiled._whole_call_check is not None and compiled._whole_call_check.done
    compiled(w, batch(0), optimizer)
    capsys.readouterr()
    assert region._steady


class BreakingNet(torch.nn.Module):
    """A model whose forward breaks the graph: carve compiles it as a callee of the training step,
    and its regions' backward runs in the step, outside the forward's calls."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(8, 4))

    def forward(self, x):
        y = (x @ self.w).tanh()
        print("norm", round(float(y.norm()), 4))
        return (y ** 2).mean()


def train_step(net, x, optimizer):
    loss = net(x)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    return float(loss)


def test_a_models_forward_region_is_weighed_by_the_calls_of_the_step_that_runs_its_backward(capsys):
    # The forward's own whole calls cannot hold the backward: the step calling it weighs its regions.
    backend = sleeping_backend(2 * cost_check.TIMED_UNDER)
    compiled = carve.compile(train_step, backend=backend)
    net, net_eager = BreakingNet(), BreakingNet()
    optimizer, optimizer_eager = (torch.optim.SGD(net.parameters(), lr=0.1),
                                  torch.optim.SGD(net_eager.parameters(), lr=0.1))
    for call in range(CALLS + 2 * whole_call_check.WHOLE_CALL_SAMPLES):
        got = compiled(net, batch(call), optimizer)
        got_printed = capsys.readouterr().out
        want = train_step(net_eager, batch(call), optimizer_eager)
        assert got == want and got_printed == capsys.readouterr().out
        torch.testing.assert_close(net.w, net_eager.w)
    forward = type(carve.compile(net, backend=backend)).forward.__carve_version__
    weighed = [r for r in forward.regions if r.graphs]
    assert weighed and all(r.path == "eager" and "its backward included" in r.eager_reason for r in weighed), \
        [(r.name, r.eager_reason) for r in forward.regions]
