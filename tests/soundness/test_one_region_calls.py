"""A function whose body is one region takes its call straight into that region.

    @carve.compile
    def f(x, w):                # the rewritten f only calls its one region:
        return x @ w + 1        #     def f(x, w): return _f_graph_region_0(x, w)

A call passing every argument positionally skips the rewritten function's frame (carve's
per-call overhead over Dynamo's). Every other call takes the full path, and each must still
behave as the function: keyword arguments, too few or too many arguments (eager's TypeError),
defaults bound after compiling, `carve.disable`, a user's torch.compile around the call, and a
value the region reads changed between calls.
"""

from __future__ import annotations

import torch

import carve

from .harness import BOTH, attempt, differential

X = torch.arange(1.0, 7.0).reshape(2, 3)
W = torch.linspace(-1.0, 1.0, 9).reshape(3, 3)

SCALE = 1.0


def affine(x, w):
    return x @ w * SCALE + 1


def test_the_region_is_called_directly():
    compiled = carve.compile(affine, backend="eager")
    compiled(X, W)
    region = compiled._forward
    assert region is not None and getattr(region, "__carve_region__", None) is not None


def test_calls_of_every_shape_behave_as_the_function():
    def scenario(compile):
        global SCALE
        SCALE = 1.0
        fn = compile(affine)
        yield fn(X, W)
        yield fn(X, w=W)                      # a keyword: the full path
        yield fn(w=W, x=X)
        yield attempt(fn, X)                  # too few: eager's TypeError, named as the function
        yield attempt(fn, X, W, W)            # too many
        SCALE = -2.0                          # a global the region reads, changed
        yield fn(X, W)
        yield fn(X[:1], W)                    # a new shape
        affine.__defaults__ = (W.T,)          # a default bound after compiling
        try:
            yield fn(X), fn(X, W)
        finally:
            affine.__defaults__ = None
        SCALE = 1.0

    differential(scenario, backends=BOTH)


def test_under_carve_disable_and_inside_a_users_torch_compile():
    compiled = carve.compile(affine, backend="eager")
    expected = affine(X, W)
    torch.testing.assert_close(compiled(X, W), expected)
    torch.testing.assert_close(carve.disable(lambda: compiled(X, W))(), expected)
    outer = torch.compile(lambda x, w: compiled(x, w) * 2, backend="eager", fullgraph=True)
    torch.testing.assert_close(outer(X, W), expected * 2)


def test_a_method_of_a_module():
    def scenario(compile):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(3, 3)

            def forward(self, x):
                return self.linear(x).relu() * 2

        torch.manual_seed(0)
        net = Net()
        compiled = compile(net)
        yield compiled(X)
        with torch.no_grad():
            net.linear.weight.mul_(-1)       # a parameter changed in place
        yield compiled(X)
        net.linear = torch.nn.Linear(3, 3)  # a submodule replaced
        yield compiled(X)

    differential(scenario, backends=BOTH)
