"""The hand-written benchmark programs, cases (a)-(e) of `make bench`.

They live in a real module because carve reads a function's source. Each
case is one plain Python function; `bench/speed.py` runs it eagerly, under
`torch.compile` and under `carve.compile`, and `bench/capture.py` counts how
much of its tensor work each compiler runs inside compiled graphs.

    (a) chain         a break-free elementwise chain of 20 ops
    (b) loop_print    the chain in an 8-iteration loop with a print in the body
    (c) try_print     the chain in a try block with a print
    (d) with_print    the chain in a user `with` block with a print
    (e) add_one       `x + 1` on 8 elements: per-call overhead
    (f) linear_plus_one  the same through a submodule (a region Dynamo captures)
    (g) poly_fit      PyTorch's polynomial-fit tutorial loop: small regions once per step

The chain keeps values bounded (sin/cos/tanh/sigmoid, small constants), so it
can be repeated any number of times without overflowing.
"""

from __future__ import annotations

import torch

CHAIN_ITERATIONS = 8


def chain(x):
    """20 elementwise ops, no graph break: case (a)."""
    x = torch.sin(x)
    x = x * 1.5
    x = x + 0.25
    x = torch.cos(x)
    x = x * x
    x = x - 0.5
    x = torch.sin(x)
    x = x * 0.75
    x = x + 0.1
    x = torch.cos(x)
    x = x * 2.0
    x = x - 1.0
    x = torch.tanh(x)
    x = x + 0.3
    x = torch.sin(x)
    x = x * 1.25
    x = torch.cos(x)
    x = x - 0.2
    x = torch.sigmoid(x)
    x = x * 3.0
    return x


def loop_print(x):
    """Case (b): the chain in a loop, with a print in the body."""
    for step in range(CHAIN_ITERATIONS):
        x = torch.sin(x)
        x = x * 1.5
        x = x + 0.25
        x = torch.cos(x)
        x = x * x
        x = x - 0.5
        x = torch.sin(x)
        x = x * 0.75
        x = x + 0.1
        x = torch.cos(x)
        print("step", step)
        x = x * 2.0
        x = x - 1.0
        x = torch.tanh(x)
        x = x + 0.3
        x = torch.sin(x)
        x = x * 1.25
        x = torch.cos(x)
        x = x - 0.2
        x = torch.sigmoid(x)
        x = x * 3.0
    return x


def try_print(x):
    """Case (c): the chain in a try block, with a print in it."""
    try:
        x = torch.sin(x)
        x = x * 1.5
        x = x + 0.25
        x = torch.cos(x)
        x = x * x
        x = x - 0.5
        x = torch.sin(x)
        x = x * 0.75
        x = x + 0.1
        x = torch.cos(x)
        print("halfway")
        x = x * 2.0
        x = x - 1.0
        x = torch.tanh(x)
        x = x + 0.3
        x = torch.sin(x)
        x = x * 1.25
        x = torch.cos(x)
        x = x - 0.2
        x = torch.sigmoid(x)
        x = x * 3.0
    except RuntimeError:
        x = torch.zeros_like(x)
    return x


class Section:
    """A user-defined context manager (what a profiler range or a timer would be)."""

    def __init__(self, name):
        self.name = name
        self.depth = 0

    def __enter__(self):
        self.depth += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self.depth -= 1
        return False


SECTION = Section("chain")


def with_print(x):
    """Case (d): the chain in a user `with` block, with a print in it."""
    with SECTION:
        x = torch.sin(x)
        x = x * 1.5
        x = x + 0.25
        x = torch.cos(x)
        x = x * x
        x = x - 0.5
        x = torch.sin(x)
        x = x * 0.75
        x = x + 0.1
        x = torch.cos(x)
        print("in section", SECTION.name)
        x = x * 2.0
        x = x - 1.0
        x = torch.tanh(x)
        x = x + 0.3
        x = torch.sin(x)
        x = x * 1.25
        x = torch.cos(x)
        x = x - 0.2
        x = torch.sigmoid(x)
        x = x * 3.0
    return x


def add_one(x):
    """Case (e): the smallest possible graph, to measure per-call overhead."""
    return x + 1


OVERHEAD_LINEAR = torch.nn.Linear(8, 8)


def linear_plus_one(x):
    """Case (f): per-call overhead of a region that calls a submodule (captured by Dynamo)."""
    return OVERHEAD_LINEAR(x) + 1


POLY_STEPS = 60


def poly_fit(x):
    """Case (g): the "Learning PyTorch with examples" fit of sin(x) by a cubic, with autograd and
    a print every 20 steps: the print keeps the loop Python, and each step runs two regions
    of a few ops on scalars and a 2,000-element vector, where a compiled call costs more than
    the ops it runs (torch.compile skips the frame: a break in a loop)."""
    y = torch.sin(x)
    a = torch.zeros((), requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    c = torch.zeros((), requires_grad=True)
    d = torch.zeros((), requires_grad=True)
    learning_rate = 1e-6
    for t in range(POLY_STEPS):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        if t % 20 == 19:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    return torch.stack([a, b, c, d]).detach()
