"""What carve.compile returns stays the thing it compiled: its defaults are the function's as they
are at each call, and a module method that returns the module returns the compiled module.

Defaults: eager Python reads a function's `__defaults__` and `__kwdefaults__` at every call, so a
program that rebinds them (on the function, or on the object carve.compile returned, which is the
function itself in the eager run) must see the new values on the next compiled call too.

Module methods: `compiled.double()`, `.train()`, `.to(...)`, ... return the module they were called
on; for a compiled module that is the compiled module (as torch.compile's returns its
OptimizedModule), so `model = carve.compile(model).half()` keeps the compilation.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.nn as nn

import carve
from carve.api import CompiledModule
from carve.testing import CountingBackend

from .harness import BOTH, differential

X = torch.arange(1.0, 7.0).reshape(2, 3)
BREAKS = pytest.mark.parametrize("breaks", [False, True], ids=["one-graph", "graph-break"])


# -- defaults rebound between calls ------------------------------------------------------------------

def _scaled(breaks):
    def scaled(x, scale=1.0, *, shift=0.0):
        y = x * scale
        if breaks:
            print("y", y.sum().item())
        return y + shift

    return scaled


@BREAKS
def test_defaults_rebound_on_the_function(breaks):
    def scenario(compile):
        fn = _scaled(breaks)
        compiled = compile(fn)
        yield compiled(X)
        fn.__defaults__ = (5.0,)
        yield compiled(X)
        fn.__kwdefaults__ = {"shift": -3.0}
        yield compiled(X)
        fn.__kwdefaults__["shift"] = 7.0  # the same dict, changed in place
        yield compiled(X)
        yield compiled(X, 2.0, shift=1.0)  # arguments given: the defaults do not apply
        fn.__defaults__ = None
        yield compiled(X, 3.0)

    differential(scenario, backends=BOTH)


@BREAKS
def test_defaults_rebound_on_the_compiled_function(breaks):
    def scenario(compile):
        fn = _scaled(breaks)
        compiled = compile(fn)
        yield compiled(X), compiled.__defaults__, compiled.__kwdefaults__
        compiled.__defaults__ = (-2.0,)
        compiled.__kwdefaults__ = {"shift": 0.5}
        yield compiled(X), compiled.__defaults__, compiled.__kwdefaults__, fn(X)

    differential(scenario, backends=BOTH)


def test_defaults_of_a_method_and_of_a_module_forward():
    def scenario(compile):
        class Scaler:
            def scale(self, x, factor=2.0):
                y = x * factor
                print("y", y.sum().item())
                return y.sin()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = nn.Linear(3, 3)

            def forward(self, x, gain=1.0):
                y = self.linear(x) * gain
                print("y", y.sum().item())
                return y.relu()

        method = compile(Scaler().scale)
        net = compile(Net())
        yield method(X), net(X)
        Scaler.scale.__defaults__ = (-1.0,)
        Net.forward.__defaults__ = (3.0,)
        yield method(X), net(X)

    differential(scenario, backends=BOTH)


def test_defaults_of_a_decorated_function():
    def scenario(compile):
        def step(x, lr=0.1):
            y = x * lr
            print("y", y.sum().item())
            return y.exp()

        decorated = torch.no_grad()(step)
        compiled = compile(decorated)
        yield compiled(X)
        step.__defaults__ = (0.5,)  # the function the decorator wraps
        yield compiled(X)

    differential(scenario, backends=BOTH)


# -- module methods that return the module ----------------------------------------------------------

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 4)
        self.norm = nn.BatchNorm1d(4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        y = self.norm(self.linear(x))
        print("y", y.dtype)
        return self.drop(y.relu())


# Methods of nn.Module that return the module itself, with arguments they need.
SELF_RETURNING_CALLS = {
    "half": (), "float": (), "double": (), "bfloat16": (), "cpu": (), "train": (), "eval": (),
    "requires_grad_": (), "share_memory": (), "to": (torch.float64,), "type": (torch.float32,),
    "apply": (lambda module: None,),
}
KEYWORD_CALLS = {"to_empty": {"device": "cpu"}, "to": {"dtype": torch.float32}, "train": {"mode": False}}


def _returns_self(name: str, args: tuple = (), kwargs: dict | None = None) -> bool:
    module = Block()
    try:
        return getattr(module, name)(*args, **(kwargs or {})) is module
    except Exception:  # noqa: BLE001 - a method that needs arguments or a device this machine lacks
        return False


def test_every_self_returning_method_of_a_module_returns_the_compiled_module():
    # Every public method of nn.Module that eager calls with no arguments and that returns the
    # module, found anew for the installed torch, and those above that take arguments.
    found = {name for name in dir(nn.Module) if not name.startswith("_") and name != "compile"
             and callable(getattr(nn.Module, name)) and _returns_self(name)}
    assert {"half", "double", "train", "eval", "cpu", "requires_grad_"} <= found
    calls = [(name, (), {}) for name in sorted(found)]
    calls += [(name, args, {}) for name, args in SELF_RETURNING_CALLS.items()]
    calls += [(name, (), kwargs) for name, kwargs in KEYWORD_CALLS.items()]
    for name, args, kwargs in calls:
        assert _returns_self(name, args, kwargs), f"nn.Module.{name} does not return the module in eager"
        compiled = carve.compile(Block(), backend="eager")
        result = getattr(compiled, name)(*args, **kwargs)
        assert result is compiled, f"compiled.{name}() returned {type(result).__mro__[:2]}, not the compiled module"
        assert isinstance(result, CompiledModule) and isinstance(result, Block)


def test_a_user_method_returning_self_returns_the_compiled_module():
    class Tunable(Block):
        def with_dropout(self, p):
            self.drop.p = p
            return self

    compiled = carve.compile(Tunable(), backend="eager")
    assert compiled.with_dropout(0.0) is compiled


def test_values_after_double_equal_eagers_and_graphs_are_still_compiled():
    torch.manual_seed(0)
    block = Block().eval()
    eager = copy.deepcopy(block)
    counting = CountingBackend()
    compiled = carve.compile(block, backend=counting)
    assert torch.equal(compiled(X), eager(X))
    graphs = counting.graphs
    model = compiled.double()
    eager = eager.double()
    assert model is compiled and model.linear.weight.dtype == torch.float64
    counting.reset_counts()
    out = model(X.double())
    assert out.dtype == torch.float64 and torch.equal(out, eager(X.double()))
    # float64 parameters and input: captured again, and run as graphs
    assert counting.graphs > graphs and counting.calls >= 1
    counting.reset_counts()
    assert torch.equal(model(X.double() + 1), eager(X.double() + 1)) and counting.calls >= 1


def test_train_and_eval_switch_dropout_and_batch_norm_as_in_eager():
    def scenario(compile):
        model = compile(Block())
        for mode in ("train", "eval", "train", "eval"):
            model = model.train() if mode == "train" else model.eval()
            torch.manual_seed(1)  # the same dropout mask in both runs
            out = model(X)
            yield out, model.training, model.norm.running_mean, model.norm.num_batches_tracked
        model = model.requires_grad_(False)
        yield model(X), model.linear.weight.requires_grad
        model = model.train(False).double()
        yield model(X.double()), model.training

    differential(scenario, backends=BOTH)
