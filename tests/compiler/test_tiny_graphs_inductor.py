"""Under Inductor, a graph of one or two ops runs through aot_eager (runtime/dynamo_capture.py
TINY_GRAPH_OPS): Inductor's compile, a C++ build, would be most of a program's first calls and
buys nothing on so few ops. Values and gradients equal eager's either way."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

import carve
from carve.api import compiled_function_of
from carve.runtime import cost_check

# A region's first calls run its Python to price its compile (runtime/cost_check.py); the compiled
# calls come after them.
PRICING = cost_check.PYTHON_FIRST_CALLS


def step(x, w):
    h = torch.tanh(x @ w).sin() * 2 + 1          # a graph worth Inductor's fusion
    print("norm", round(float(h.norm()), 3))
    loss = h.mean()                               # one op: aot_eager
    return loss


@pytest.mark.inductor
def test_a_one_op_graph_runs_through_aot_eager_and_a_larger_one_through_inductor():
    compiled = carve.compile(step)
    for call in range(PRICING + 3):
        torch.manual_seed(call)
        x, w = torch.randn(4, 8), torch.randn(8, 8, requires_grad=True)
        w_eager = w.detach().clone().requires_grad_()
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            got = compiled(x, w)
        with contextlib.redirect_stdout(io.StringIO()) as printed_eager:
            want = step(x, w_eager)
        assert printed.getvalue() == printed_eager.getvalue()
        torch.testing.assert_close(got, want)
        got.backward()
        want.backward()
        torch.testing.assert_close(w.grad, w_eager.grad)
    regions = [r for r in compiled_function_of(compiled).regions if r.graphs]
    compiled_with = {ops: way for r in regions
                     for ops, way in zip(r.capture.recorder.ops_per_graph, r.capture.recorder.compiled_with)}
    assert compiled_with[1] == "aot_eager"
    assert all(way == "backend" for ops, way in compiled_with.items() if ops > 2), compiled_with
