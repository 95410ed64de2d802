"""The loop rule on its own: which loops of a function stay Python around their graph regions
(a trip count that may change from call to call) and which Dynamo unrolls (fixed by the
program, a shape or the module's structure). Pure source analysis: no torch."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from carve.rewriters.liveness import local_names
from carve.rewriters.loop_trip_counts import loop_stays_python, loops_in


def stays_python(source: str) -> list[bool]:
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    params = [*function.params.params]
    self_name = params[0].name.value if params and params[0].name.value == "self" else None
    locals_ = local_names(function, set())
    return [loop_stays_python(loop, locals_, self_name) for loop in loops_in(function)]


@pytest.mark.parametrize("header", [
    "for _ in range(n):",                 # an int argument
    "for _ in range(len(xs) + n):",       # partly an argument
    "for x in xs:",                       # an argument's contents
    "for i in range(steps):",             # a local computed from anything
    "while x.sum() > 0:",                 # data-dependent
    "for _ in range(config.steps):",      # an argument's attribute
])
def test_a_trip_count_that_may_change_between_calls_keeps_the_loop_python(header):
    assert stays_python(f"""
        def f(x, xs, n, config):
            steps = n * 2
            {header}
                x = x + 1
            return x
    """) == [True]


@pytest.mark.parametrize("header", [
    "for _ in range(3):",
    "for _ in range(LAYERS):",                        # a module constant: a global Dynamo guards
    "for _ in range(torch._dynamo.testing.three):",
    "for _ in range(x.size(0) + 2):",                 # a shape
    "for _ in range(x.shape[-1]):",
    "for _ in range(len(xs)):",
    "for layer in self.layers:",                      # the module's structure
    "for _ in range(self.config.n_layer):",
])
def test_a_trip_count_fixed_by_the_program_or_a_shape_is_unrolled(header):
    assert stays_python(f"""
        def f(self, x, xs):
            {header}
                x = x + 1
            return x
    """) == [False]


def test_loops_of_nested_functions_are_not_the_functions_own():
    assert stays_python("""
        def f(x, n):
            def inner(y):
                for _ in range(n):
                    y = y + 1
                return y
            for _ in range(4):
                x = inner(x)
            return x
    """) == [False]
