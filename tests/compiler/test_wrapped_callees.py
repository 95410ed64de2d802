"""A callee behind a library's `functools.wraps` wrapper is analysed and compiled as the user's
function, with the wrapper's behaviour kept (compiler/resolver.py `wrapped_user_function`,
compiler/api.py `compile_nested`):

    @torch.no_grad()                    # torch's decorate_context wraps evaluate
    def evaluate(x):
        y = x @ w
        print(y.sum().item())           # a break carve sees at the call `evaluate(h)` in step
        return y * 2

    def step(x):                        # compiled with carve: `evaluate(h)` runs as Python, and
        h = x @ w                       # evaluate is compiled on its own, inside a copy of the
        e = evaluate(h)                 # no_grad wrapper, once
        return h.cos() + e

Each test compares with eager: values, gradients, printed output and the grad mode the
wrapper sets.
"""

from __future__ import annotations

import inspect

import pytest
import torch

import carve
from carve.api import _nested, compile_nested
from carve.runtime.config import CompileOptions
from carve.testing import CountingBackend

BACKENDS = ["eager", "aot_eager"]

weight = torch.nn.Parameter(torch.randn(4, 4))


@torch.no_grad()
def evaluate(x):
    y = (x @ weight).relu()
    print("eval", round(y.sum().item(), 3))
    made = y.sum() * weight  # requires grad unless no_grad applies
    return y * 2, made


def step(x):
    h = (x @ weight).sin()
    e, made = evaluate(h)
    return h.cos() + e, e, made


def run_against_eager(fn, inputs, backend, capsys, **compile_args):
    """fn compiled with carve, called on each input: values, requires_grad, printed output and
    the gradients of the first output equal eager's."""
    compiled = carve.compile(fn, backend=backend, **compile_args)
    for x in inputs:
        expected = fn(x)
        expected_grad = torch.autograd.grad(expected[0].sum(), weight)[0] if expected[0].requires_grad else None
        eager_printed = capsys.readouterr().out
        got = compiled(x)
        got_grad = torch.autograd.grad(got[0].sum(), weight)[0] if got[0].requires_grad else None
        assert capsys.readouterr().out == eager_printed
        for value, reference in zip(got, expected):
            torch.testing.assert_close(value, reference)
            assert value.requires_grad == reference.requires_grad
            assert value.dtype == reference.dtype
        if expected_grad is not None:
            torch.testing.assert_close(got_grad, expected_grad)
        assert (got_grad is None) == (expected_grad is None)
    return compiled


def item_break_found_statically(fn, args, helper) -> bool:
    """carve.explain of fn reports, before running, that the call of `helper` breaks the graph at
    the helper's `.item()` line (behind its wrapper)."""
    function = inspect.unwrap(helper)
    lines, first = inspect.getsourcelines(function)
    item_line = first + next(i for i, line in enumerate(lines) if ".item()" in line)
    out = carve.explain(fn)(*args)
    return any(reason.code == "CRV016" and reason.found == "statically"
               and f"{function.__code__.co_filename}:{item_line}" in reason.message for reason in out.break_reasons)


def changing_inputs(n=4):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(3, 4, generator=generator) * (i + 1) for i in range(n)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_no_grad_helper_with_a_break_equals_eager_and_keeps_no_grad(backend, capsys):
    run_against_eager(step, changing_inputs(), backend, capsys)
    out = step(torch.randn(3, 4))
    capsys.readouterr()
    assert out[0].requires_grad and not out[1].requires_grad and not out[2].requires_grad


def test_the_helpers_break_is_seen_and_its_body_compiled_on_its_own(capsys):
    assert item_break_found_statically(step, (torch.randn(3, 4),), evaluate)
    lines, first = inspect.getsourcelines(evaluate.__wrapped__)
    item_line = first + next(i for i, line in enumerate(lines) if ".item()" in line)
    out = carve.explain(step)(torch.randn(3, 4))
    statically = [(reason.line, reason.code) for reason in out.break_reasons if reason.found == "statically"]
    assert (item_line, "CRV004") in statically  # the .item() in the helper, found before running
    assert any(reason.code == "CRV016" and "evaluate()" in reason.message for reason in out.break_reasons)
    # The helper's own regions: its body compiled, not traced whole inside step's region.
    helper_regions = [region for region in out.regions
                      if first <= int(region.split(":")[1].split("-")[0]) < first + len(lines)]
    assert helper_regions


def test_fewer_graph_calls_than_torch_compile_and_the_helper_compiled_once(capsys):
    carve_backend, torch_backend = CountingBackend("eager"), CountingBackend("eager")
    compiled = carve.compile(step, backend=carve_backend)
    torch._dynamo.reset()
    reference = torch.compile(step, backend=torch_backend)
    inputs = changing_inputs()
    for x in inputs[:2]:
        compiled(x), reference(x)
    graphs = carve_backend.graphs
    carve_backend.reset_counts(), torch_backend.reset_counts()
    for x in inputs[2:]:
        for value, expected in zip(compiled(x), reference(x)):
            torch.testing.assert_close(value, expected)
    # Before the helper was seen through, step's one region traced the call whole and Dynamo split
    # it at the .item() (torch.compile's 5 graphs); now the call is Python between carve's regions.
    assert carve_backend.graphs == graphs == 4
    assert carve_backend.calls < torch_backend.calls
    capsys.readouterr()


def test_compile_nested_keeps_the_wrapper_and_compiles_the_wrapped_function_once():
    options = CompileOptions(backend="eager")
    first = compile_nested(evaluate, options)
    assert first is not evaluate and first is compile_nested(evaluate, options)
    assert evaluate in _nested
    assert first.__code__ is evaluate.__code__  # torch's decorate_context, run as written
    assert isinstance(first.__wrapped__, carve.api.CompiledFunction) and first.__wrapped__.fn is evaluate.__wrapped__


@torch.enable_grad()
def train_inside(x):
    y = (x @ weight).tanh()
    print("loss", round(y.mean().item(), 3))
    return y * 3, y.sum() * weight


def evaluate_then_train(x):
    with torch.no_grad():
        h = (x @ weight).exp()
        trained, made = train_inside(h)
    return h + 1, trained, made


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_enable_grad_helper_inside_no_grad_equals_eager(backend, capsys):
    inputs = changing_inputs()
    compiled = carve.compile(evaluate_then_train, backend=backend)
    for x in inputs:
        expected = evaluate_then_train(x)
        printed = capsys.readouterr().out
        got = compiled(x)
        assert capsys.readouterr().out == printed
        for value, reference in zip(got, expected):
            torch.testing.assert_close(value, reference)
            assert value.requires_grad == reference.requires_grad
        assert got[1].requires_grad and not got[0].requires_grad
        torch.testing.assert_close(torch.autograd.grad(got[1].sum(), weight)[0],
                                   torch.autograd.grad(expected[1].sum(), weight)[0])
    assert item_break_found_statically(evaluate_then_train, changing_inputs(1), train_inside)


@torch.autocast("cpu", dtype=torch.bfloat16)
def project_in_bfloat16(x):
    y = x @ weight
    print("scale", round(y.float().abs().max().item(), 1))
    return y * 2, y.sum() * weight


def autocast_step(x):
    h = x.sin()
    y, made = project_in_bfloat16(h)
    return y.float() + h, y, made


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_autocast_decorated_helper_with_a_break_equals_eager(backend, capsys):
    compiled = run_against_eager(autocast_step, changing_inputs(), backend, capsys)
    assert compiled(torch.randn(3, 4))[1].dtype == torch.bfloat16
    assert item_break_found_statically(autocast_step, changing_inputs(1), project_in_bfloat16)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.layer(x).relu()

    @torch.no_grad()
    @torch.autocast("cpu", enabled=False)
    def evaluate(self, x):
        y = self(x)
        print("mean", round(y.mean().item(), 3))
        return y.sum() * self.layer.weight


def train_and_evaluate(net, x):
    loss = net(x).pow(2).mean()
    score = net.evaluate(x)
    return loss, score


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_method_behind_stacked_wrappers_equals_eager(backend, capsys):
    torch.manual_seed(0)
    net = Net()
    compiled = carve.compile(train_and_evaluate, backend=backend)
    for x in changing_inputs():
        loss, score = train_and_evaluate(net, x)
        printed = capsys.readouterr().out
        got_loss, got_score = compiled(net, x)
        assert capsys.readouterr().out == printed
        torch.testing.assert_close(got_loss, loss)
        torch.testing.assert_close(got_score, score)
        assert not got_score.requires_grad
        torch.testing.assert_close(torch.autograd.grad(got_loss, net.layer.weight)[0],
                                   torch.autograd.grad(loss, net.layer.weight)[0])
    assert item_break_found_statically(train_and_evaluate, (net, changing_inputs(1)[0]), Net.evaluate)
