"""A function defined inside a carve-compiled function is compiled where it is defined
(rewriters/outline.py `_compiled_where_defined`, compiler/api.py `compile_definition`), so a
library calling it runs the compiled version, built once for every function the def makes:

    def train(steps):                             def train(steps):
        for i in range(steps):                        for i in range(steps):
            def closure():                                def closure(): ...
                optimizer.zero_grad()       ->            closure = _carve_f.compiled_definition(closure)
                loss = criterion(model(x), y)             optimizer.step(closure)   # LBFGS calls the
                print("loss", loss.item())                                          # compiled closure
                loss.backward()
                return loss
            optimizer.step(closure)

Each test compares with eager: values, parameters after each call, printed output. Closures
over the enclosing function's variables, generators, decorated defs and defs writing `nonlocal`
run as written.
"""

from __future__ import annotations

import functools
import types

import pytest
import torch

import carve
from carve import api
from carve.testing import CountingBackend

BACKENDS = ["eager", "aot_eager"]

inputs = torch.randn(6, 4)
targets = torch.randn(6, 1)
criterion = torch.nn.MSELoss()
model: torch.nn.Module
optimizer: torch.optim.Optimizer


def fresh_model() -> None:
    """The same model and optimizer for the eager run and the compiled one."""
    global model, optimizer
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4)


def train(steps):
    for i in range(steps):
        print("step", i)

        def closure():
            optimizer.zero_grad()
            out = model(inputs)
            loss = criterion(out, targets)
            print("loss", round(loss.item(), 4))
            loss.backward()
            return loss

        optimizer.step(closure)
    return model[0].weight.sum().item()


def parameters() -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.parameters()]


def eager_run(fn, calls: int, capsys) -> tuple[list, list, str]:
    fresh_model()
    results, params = [], []
    for _ in range(calls):
        results.append(fn(1))
        params.append(parameters())
    return results, params, capsys.readouterr().out


def build_names(monkeypatch) -> list[str]:
    """The names of the functions carve builds (parses and outlines) from now on."""
    names: list[str] = []
    real_build = api.build

    def counting_build(fn, *args, **kwargs):
        names.append(fn.__name__)
        return real_build(fn, *args, **kwargs)

    monkeypatch.setattr(api, "build", counting_build)
    return names


def closure_builds(compiled) -> list:
    """The compiled nested defs of `compiled`'s build (one per def statement)."""
    return list(api.compiled_function_of(compiled)._build.regions.definitions.values())


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_lbfgs_closure_runs_compiled_once_over_calls(backend_name, capsys, monkeypatch):
    calls = 5
    expected, expected_params, expected_printed = eager_run(train, calls, capsys)

    backend = CountingBackend(backend_name)
    builds = build_names(monkeypatch)
    fresh_model()
    compiled = carve.compile(train, backend=backend)
    graphs_after_first = None
    for call in range(calls):
        calls_before = backend.calls
        result = compiled(1)
        # train's own body is the loop, a print and the LBFGS step: every graph call is the closure's.
        assert backend.calls > calls_before, "the closure LBFGS calls ran no carve graph"
        assert result == pytest.approx(expected[call], rel=1e-5)
        for got, reference in zip(parameters(), expected_params[call]):
            torch.testing.assert_close(got, reference, rtol=1e-5, atol=1e-6)
        if graphs_after_first is None:
            graphs_after_first = backend.graphs
    assert capsys.readouterr().out == expected_printed
    assert graphs_after_first > 0
    assert backend.graphs == graphs_after_first, "graphs grew with the number of outer calls"
    assert builds.count("closure") == 1 and builds.count("train") == 1
    (closure,) = closure_builds(compiled)
    assert closure.regions and sum(len(region.graphs) for region in closure.regions) > 0


def helper_in_regions(x):
    def helper(t):
        return t.sin() * 2

    y = helper(x) + 1
    print("y", round(y.sum().item(), 4))
    return helper(y).cos()


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_nested_def_read_by_regions_keeps_their_graphs(backend_name, capsys, monkeypatch):
    """Regions that call the nested def trace it inline, as before: one graph each, whatever
    function object the def made on this call."""
    backend = CountingBackend(backend_name)
    builds = build_names(monkeypatch)
    compiled = carve.compile(helper_in_regions, backend=backend)
    for _ in range(4):
        x = torch.randn(5)
        expected = helper_in_regions(x)
        eager_printed = capsys.readouterr().out
        torch.testing.assert_close(compiled(x), expected)
        assert capsys.readouterr().out == eager_printed
    assert backend.graphs == 2
    assert builds == ["helper_in_regions"]


def called_from_python(x):
    def scale(t):
        print("scaling", t.shape[0])
        return t * 3

    seen.append(scale)
    y = x.sin()
    print("scaled", round(scale(y).sum().item(), 4))
    return scale(y).sum(), scale


seen: list = []


def test_nested_def_called_by_python_statements_is_built_once(capsys, monkeypatch):
    """A direct call in a statement that stays Python goes through the compiled definition too:
    one build, each function the def makes its own object."""
    builds = build_names(monkeypatch)
    compiled = carve.compile(called_from_python, backend="aot_eager")
    made = []
    for size in (3, 3, 5):
        x = torch.randn(size)
        expected, _ = called_from_python(x)
        eager_printed = capsys.readouterr().out
        got, function = compiled(x)
        torch.testing.assert_close(got, expected)
        assert capsys.readouterr().out == eager_printed
        made.append(function)
    assert builds.count("scale") == 1
    assert all(isinstance(function, api.SharedDefinition) for function in made)
    assert len({id(function) for function in made}) == len(made)
    assert seen[-1] is made[-1]


def decorate(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args) + 1

    return wrapper


SCALE = 2.0


def run_as_written(x, k):
    total = 0

    def over_cells():                 # reads x and k: the enclosing function's variables
        return (x * k + SCALE).sum()

    def generator():
        yield x.cos().sum()

    @decorate
    def decorated(t):
        return t.tan()

    def counter():
        nonlocal total
        total = total + 1
        return (x * total).sum()

    made = [over_cells, generator, decorated, counter]
    out = over_cells() + next(generator()) + decorated(x).sum() + counter() + counter()
    return out, total, made


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_closures_carve_keeps_as_written_equal_eager(backend_name):
    """A closure over the enclosing function's cells, a generator, a decorated def and a def
    writing `nonlocal` are the functions the def made, and give eager's values when the
    captured tensor's shape, a captured number and a global they read change between calls."""
    global SCALE
    compiled = carve.compile(run_as_written, backend=backend_name)
    source = None
    for size, k, scale in [(3, 2.0, 2.0), (3, 2.0, 2.0), (5, 2.0, 2.0), (5, -1.5, 2.0), (5, -1.5, 0.5)]:
        SCALE = scale
        x = torch.randn(size)
        expected, expected_total, _ = run_as_written(x, k)
        got, total, made = compiled(x, k)
        torch.testing.assert_close(got, expected)
        assert total == expected_total
        assert all(isinstance(function, types.FunctionType) for function in made)
        source = api.compiled_function_of(compiled).generated_source
    assert source is not None
    # The closure over cells is compiled where it is defined only once carve can share its build
    # across cells; the others are never compiled there.
    assert "compiled_definition(over_cells)" in source
    for name in ("generator", "decorated", "counter"):
        assert f"compiled_definition({name})" not in source
