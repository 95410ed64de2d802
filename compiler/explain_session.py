"""One `carve.explain` run, as the compiler sees it: which RegionSets to collect, and that
every function is compiled afresh.

    with explain_session.collecting() as session:     # carve.explain's run
        compiled = carve.compile(fn, backend="eager")  # versions come from session.tables only
        compiled(x)                                    # each RegionSet built registers itself
    session.sets                                       # what the report reads

Outside a session `register_regionset` does nothing and `fresh_tables()` is None, so the
compiler's own caches serve. Thread-local: an explain in one thread does not collect another
thread's regions.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from carve.runtime import compat


@dataclass
class RegionTime:
    """Where one region's calls went during an explain run (seconds)."""

    calls: int = 0
    compiled: float = 0.0    # calls that ran Dynamo's compiled code (the cost check's timed Python turns too)
    python: float = 0.0      # calls after the region went to Python (faster as Python, no tensor work, ...)
    compiling: float = 0.0   # calls that traced and compiled (a first call, a recompile)


@dataclass
class Session:
    # The RegionSets (and whole-call captures, which read like one) built during the run.
    sets: list = field(default_factory=list)
    # id(cache table) -> a table of this run only: nothing compiled for the report is kept, and a
    # version already in carve's caches would build, and so report, nothing.
    tables: dict = field(default_factory=dict)
    # id(region) -> its RegionTime, for the regions built during the run.
    region_times: dict = field(default_factory=dict)


class _Current(threading.local):
    # Read on every region call and callee lookup: a class default, since a missing attribute of
    # a thread-local costs an AttributeError (0.4 us) each time.
    session: Session | None = None


_current = _Current()


@contextmanager
def collecting() -> Iterator[Session]:
    previous = _current.session
    session = _current.session = Session()
    try:
        yield session
    finally:
        _current.session = previous


def register_regionset(regions) -> None:
    """Called by every RegionSet built: collected while an explain runs."""
    session = _current.session
    if session is not None:
        session.sets.append(regions)


def unregister_regionset(regions) -> None:
    """A RegionSet built but never run (the call went to a whole-call capture instead)."""
    session = _current.session
    if session is not None and regions in session.sets:
        session.sets.remove(regions)


def fresh_tables() -> dict | None:
    """The running explain's cache tables, or None outside one."""
    session = _current.session
    return session.tables if session is not None else None


class _Timing(threading.local):
    nested: list[float]

    def __init__(self) -> None:
        self.nested = []  # per timed region call on the stack: the time of the region calls it made


_timing = _Timing()
_DYNAMO = compat.CARVE_CAPTURE


class _TimedCaller:
    """A region's caller that records where each call's time went (only during an explain run:
    the generated code calls this in place of `region.caller`)."""

    def __init__(self, region: Any, caller: Callable[..., Any], times: RegionTime) -> None:
        self.region, self.caller, self.times = region, caller, times
        self.__carve_region__ = region
        self.__name__ = getattr(caller, "__name__", "region")

    @property
    def __wrapped__(self) -> Any:  # the region as Python, rebound after the build (GraphRegion.fn)
        return self.caller.__wrapped__  # type: ignore[attr-defined]

    def __call__(self, *args: Any) -> Any:
        region, times = self.region, self.times
        # A region pricing its compile runs its Python too (GraphRegion._first_call_as_python).
        compiles, python = _DYNAMO.compiles, region.eager or region.pricing
        # A region's own time: a region it runs (a model's forward, called from a region run as
        # Python) times its own calls, so the regions' times add up to the run's.
        nested = _timing.nested
        nested.append(0.0)
        start = time.perf_counter()
        try:
            return self.caller(*args)
        finally:
            elapsed = time.perf_counter() - start
            own = elapsed - nested.pop()
            if nested:
                nested[-1] += elapsed
            times.calls += 1
            if _DYNAMO.compiles != compiles:  # this call, or a model it called, compiled
                times.compiling += own
            elif python:
                times.python += own
            else:
                times.compiled += own


def timed_caller(region: Any, caller: Callable[..., Any]) -> Callable[..., Any]:
    """`caller`, timed per call while an explain runs (its RegionTime in the session) or in a
    program run under CARVE_REPORT=DIR (its RegionTime as `region.report_times`, which the page
    written at exit shows); else `caller` itself, at no cost."""
    session = _current.session
    if session is not None:
        times = session.region_times[id(region)] = RegionTime()
    elif os.environ.get("CARVE_REPORT"):
        times = region.report_times = RegionTime()
    else:
        return caller
    return _TimedCaller(region, caller, times)
