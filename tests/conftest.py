"""Shared test fixtures: a counting backend that proves tensor work runs in compiled graphs,
and the cost check on, with a clock that makes its decisions independent of the machine.

Every function carve outlines in these tests is checked against the outliner's invariants
(CARVE_VERIFY, rewriters/verify.py): a broken invariant fails the test that caused it."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("CARVE_VERIFY", "1")

from carve.runtime import cost_check  # noqa: E402 - after CARVE_VERIFY, which carve reads per build
from carve.testing import CountingBackend  # noqa: E402


class EvenClock:
    """A clock that advances `STEP` seconds per reading: every timed call of the cost check
    (runtime/cost_check.py) lasts the same, compiled or as Python. The check stays on, as users
    run it: under a priced backend (Inductor) each region's first calls run its Python and are
    priced, each region is weighed after its warm-up calls, runs its timed calls both ways (the
    Python ones must give eager's answer too), and is decided compiled whatever this machine's
    load (STEP is under TIMED_UNDER, so a region whose results require grad is weighed as a short
    one). tests/runtime/test_cost_check.py and test_worth_compiling.py put the real clock or
    their own back."""

    STEP = 0.9e-3

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += self.STEP
        return self.now


assert EvenClock.STEP < cost_check.TIMED_UNDER
# The tests price regions for a long run: every region's compile pays (up to 10,000 ops), so each
# is compiled from its third call and the tests check compiled code. tests/runtime/
# test_worth_compiling.py prices with the default run's length.
cost_check.PAYBACK_CALLS = 10**6
assert cost_check.worth_compiling(EvenClock.STEP, 10_000, False)


cost_check.clock = EvenClock()


@pytest.fixture
def backend():
    return CountingBackend()
