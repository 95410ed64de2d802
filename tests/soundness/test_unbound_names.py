"""A name bound on some paths only, read by a compiled region: eager's UnboundLocalError, never carve's
placeholder as a value.

carve carries a name that may be unbound across a region boundary as its `UNBOUND` placeholder
(rewriters/unbound.py). When a region reads such a name and it is unbound at the call, the region
runs as Python, whose read raises eager's exception; when it is bound, the compiled graph runs.
Each program here is called with values that bind the name and values that leave it unbound, in
turns, on the "eager" and "aot_eager" backends; every result and every exception (type, message and
the user's line it was raised at) must be eager's. Several of them had two names crossing into one
region, one bound and one not: Dynamo, tracing the region's `del` of the unbound one, resumed after
its graph with the placeholder put back (`TypeError: unsupported operand type(s) for +: 'Tensor'
and 'Unbound'`).
"""

from __future__ import annotations

import traceback

import torch

import carve
from carve.testing import CountingBackend

from .harness import BOTH, differential

X = torch.arange(1.0, 4.0)


class RaisedAt:
    """An exception compared by type, message and the line of this file it was raised at."""

    def __init__(self, error: BaseException) -> None:
        frames = [frame for frame in traceback.extract_tb(error.__traceback__) if frame.filename == __file__]
        self.type, self.message, self.line = type(error), str(error), frames[-1].lineno if frames else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RaisedAt) and (self.type, self.message, self.line) == \
            (other.type, other.message, other.line)

    def __repr__(self) -> str:
        return f"RaisedAt({self.type.__name__}: {self.message} at line {self.line})"


def attempt_at(fn, *args):
    try:
        return fn(*args)
    except Exception as error:  # noqa: BLE001 - the exception is the behaviour compared
        return RaisedAt(error)


def calls(program, argument_sets):
    """A scenario calling `program` compiled on each argument tuple in turn."""

    def scenario(compile):
        compiled = compile(program)
        for args in argument_sets:
            yield attempt_at(compiled, X, *args)

    return scenario


def raises_somewhere(program, argument_sets) -> bool:
    return any(isinstance(attempt_at(program, X, *args), RaisedAt) for args in argument_sets)


def check(program, argument_sets):
    assert raises_somewhere(program, argument_sets), "the case must leave the name unbound on some call"
    differential(calls(program, argument_sets), backends=BOTH)


# -- loops whose body skips the binding ------------------------------------------------------------

def loop_with_continue(x, k, flag):
    t1 = x * 2
    for i in range(k):
        if i == 1:
            break
        t2 = x * i
    for i in range(k):
        if i == 0:
            continue
        t3 = x + i
    print("mid", k)
    t1 = t1 + t2.sin()
    return t1 + t3


def test_loop_with_continue_that_never_reaches_the_binding():
    # k == 1: t2 is bound, t3 is not; k == 0: neither
    check(loop_with_continue, [(3, False), (1, False), (3, False), (0, False), (1, False), (2, False)])


def while_loop_with_continue(x, k, flag):
    t1 = x * 2
    if flag:
        t2 = x.cos()
    j = 0
    while j < k:
        j += 1
        if j == 1:
            continue
        t3 = x - j
    t1 = t1 + t3.sin()
    t1 = t1 + t2.sin()
    return t1 + t2


def test_while_loop_with_continue():
    check(while_loop_with_continue, [(2, True), (2, False), (1, True), (3, True), (2, False)])


def loop_that_may_not_run(x, k, flag):
    t1 = x * 2
    if flag:
        t2 = x.cos()
    print("mid", k)
    for i in range(k):
        t3 = t1 + i
    print("mid", k)
    t1 = t1 + t3.sin()
    return t1 + t2


def test_loop_that_may_not_run():
    check(loop_that_may_not_run, [(2, True), (2, False), (0, True), (1, True), (0, False)])


# -- if without else, try/except, del ----------------------------------------------------------------

def if_without_else(x, k, flag):
    t1 = x.sin()
    if k > 1:
        t2 = x.cos()
    print("mid", k)
    if flag:
        t3 = x.exp()
    t1 = t1 + t2
    return t1 * t3


def test_if_without_else():
    check(if_without_else, [(2, True), (1, True), (2, False), (2, True), (1, False)])


def try_except_binding(x, k, flag):
    t1 = x * 2
    if flag:
        t2 = x.cos()
    print("mid", k)
    try:
        if k == 1:
            raise ValueError("k")
        t3 = x.sin()
    except ValueError:
        pass
    t1 = t1 + t3.sin()
    return t1 + t2


def test_try_except_that_skips_the_binding():
    check(try_except_binding, [(2, True), (1, True), (2, False), (2, True), (1, False)])


def deleted_name(x, k, flag):
    t1 = x * 2
    t2 = x.exp()
    if k == 1:
        del t2
    print("mid", k)
    if flag:
        t3 = x.cos()
    t1 = t1 + t2.sin()
    t1 = t1 + t3.sin()
    return t1 + t2


def test_deleted_name_and_a_binding_inside_the_region():
    check(deleted_name, [(2, True), (2, False), (1, True), (2, True), (1, False)])


def bound_in_the_region_on_some_paths(x, k, flag):
    t1 = x * 2
    print("mid", k)
    if flag:
        t3 = x.cos()
    return t1 + t3.sin()


def test_name_bound_only_inside_the_region():
    check(bound_in_the_region_on_some_paths, [(1, True), (1, False), (1, True)])


def read_but_never_bound_before(x, k, flag):
    t1 = x * 2
    if k > 5:
        del t1
    print("mid", k)
    t2 = x.cos()
    if flag:
        t2 = t2 + t3  # noqa: F821 - t3 is bound below, after this read: eager raises here
    t3 = x + 1
    return t1 + t2 + t3


def test_name_read_before_any_binding_in_the_region():
    check(read_but_never_bound_before, [(1, False), (1, True), (1, False), (6, False)])


# -- read by a later eager statement -------------------------------------------------------------------

def read_by_eager_statements(x, k, flag):
    t1 = x * 2
    for i in range(k):
        if i == 0:
            continue
        t2 = x + i
    t1 = t1.sin()
    print("shape", t1.shape)
    print("value", round((t2 + t1).sum().item(), 4))
    return t1


def test_name_read_only_by_eager_statements():
    check(read_by_eager_statements, [(3, False), (1, False), (2, False), (0, False)])


def caught_by_the_user(x, k, flag):
    t1 = x * 2
    for i in range(k):
        if i == 0:
            continue
        t2 = x + i
    print("mid", k)
    try:
        t1 = t1 + t2
    except UnboundLocalError as error:
        print("caught", error)
        t1 = t1 - 1
    return t1.cos()


def test_unbound_local_error_from_a_region_is_the_users_to_catch():
    differential(calls(caught_by_the_user, [(3, False), (1, False), (2, False)]), backends=BOTH)


# -- when the name is bound, the region is still a graph ----------------------------------------------

def last_step_reads_the_loops_result(x, k):
    for i in range(k):
        if i == 0:
            continue
        t2 = x + i
    print("k", k)
    return (t2 * 2).sin()


def test_the_region_stays_compiled_when_the_name_is_bound():
    counting = CountingBackend()
    compiled = carve.compile(last_step_reads_the_loops_result, backend=counting)
    compiled(X, 2)
    assert "__wrapped__" in compiled.generated_source  # the call site tests the possibly unbound t2
    counting.reset_counts()
    try:
        compiled(X, 1)
    except UnboundLocalError as error:
        assert "'t2'" in str(error)
    assert counting.calls == 0  # t2 unbound: the last region ran as Python, and raised
    assert torch.equal(compiled(X, 2), last_step_reads_the_loops_result(X, 2))
    assert counting.calls == 2  # the loop's region and the last one, both graphs
