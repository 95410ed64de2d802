"""Shared test fixtures: a counting backend that proves tensor work runs in compiled graphs.

Every function carve outlines in these tests is checked against the outliner's invariants
(CARVE_VERIFY, rewriters/verify.py): a broken invariant fails the test that caused it."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("CARVE_VERIFY", "1")
# Whether a region stays compiled must not hang on this machine's timings: the cost check
# (runtime/cost_check.py) is off but in tests/runtime/test_cost_check.py, which turns it on.
os.environ.setdefault("CARVE_COST_CHECK", "0")

from carve.testing import CountingBackend  # noqa: E402 - after CARVE_VERIFY, which carve reads per build


@pytest.fixture
def backend():
    return CountingBackend()
