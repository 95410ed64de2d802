"""A graph break inside a `with` block of torch's own context managers.

Where Dynamo resumes after a break inside the block (grad mode, autocast, the profiler), carve
keeps the block in one region and Dynamo re-enters the manager after the break. What the
manager sets must hold on both sides of the break, on every call: autocast's dtype, a grad mode
read from an argument that changes between calls, in-place updates under `no_grad`, and
`enable_grad` nested in `no_grad`. Values, `requires_grad`, dtypes, gradients and printed lines
are compared with eager by the harness.
"""

from __future__ import annotations

import torch

from .harness import BOTH, differential


def autocast_on_both_sides(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = x @ w
        print("dtype", y.dtype)
        z = y @ w
    return z.float().sum()


def grad_mode_from_an_argument(x, w, flag):
    with torch.set_grad_enabled(flag):
        y = x * w
        print("requires grad", y.requires_grad)
        z = y * 2
    return z


def in_place_under_no_grad(x, w):
    with torch.no_grad():
        w.add_(1.0)
        print("w", round(w.sum().item(), 3))
        w.mul_(0.5)
    return x * w


def enable_grad_inside_no_grad(x, w):
    with torch.no_grad():
        y = x * w
        with torch.enable_grad():
            z = x * w
            print("inner requires grad", z.requires_grad)
            q = z * 2
        r = y + 1
    return q, r


def test_autocast_dtype_holds_after_a_break_inside_the_block():
    def scenario(compile):
        compiled = compile(autocast_on_both_sides)
        x, w = torch.randn(3, 3), torch.randn(3, 3)
        yield compiled(x, w)
        yield compiled(x * 2, w)

    differential(scenario, backends=BOTH)


def test_grad_mode_read_from_an_argument_that_changes_between_calls():
    def scenario(compile):
        compiled = compile(grad_mode_from_an_argument)
        x, w = torch.randn(3), torch.randn(3, requires_grad=True)
        for flag in (True, False, True):
            z = compiled(x, w, flag)
            yield z
            if flag:
                z.sum().backward()
                yield w.grad
                w.grad = None

    differential(scenario, backends=BOTH)


def test_in_place_updates_under_no_grad_on_both_sides_of_a_break():
    def scenario(compile):
        compiled = compile(in_place_under_no_grad)
        x, w = torch.randn(3), torch.randn(3)
        for _ in range(3):
            yield compiled(x, w), w

    differential(scenario, backends=BOTH)


def test_enable_grad_nested_in_no_grad_with_a_break_inside():
    def scenario(compile):
        compiled = compile(enable_grad_inside_no_grad)
        x, w = torch.randn(3), torch.randn(3, requires_grad=True)
        yield compiled(x, w)
        yield compiled(x + 1, w)

    differential(scenario, backends=BOTH)


def names_the_autocast_object(x, w):
    with torch.autocast("cpu", dtype=torch.bfloat16) as autocast:
        y = x @ w
    return y.float(), type(autocast).__name__


def test_the_object_a_with_statement_binds_is_eagers():
    # A traced `with torch.autocast(...) as name` binds None (torch.compile returns "NoneType"
    # here): carve keeps the header in Python, so the name is the autocast object.
    def scenario(compile):
        compiled = compile(names_the_autocast_object)
        x, w = torch.randn(3, 3), torch.randn(3, 3)
        yield compiled(x, w)
        yield compiled(x * 2, w)

    differential(scenario, backends=BOTH)
