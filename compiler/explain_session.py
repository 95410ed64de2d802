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

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class Session:
    # The RegionSets (and whole-call captures, which read like one) built during the run.
    sets: list = field(default_factory=list)
    # id(cache table) -> a table of this run only: nothing compiled for the report is kept, and a
    # version already in carve's caches would build, and so report, nothing.
    tables: dict = field(default_factory=dict)


_current = threading.local()


@contextmanager
def collecting() -> Iterator[Session]:
    previous = getattr(_current, "session", None)
    session = _current.session = Session()
    try:
        yield session
    finally:
        _current.session = previous


def register_regionset(regions) -> None:
    """Called by every RegionSet built: collected while an explain runs."""
    session = getattr(_current, "session", None)
    if session is not None:
        session.sets.append(regions)


def unregister_regionset(regions) -> None:
    """A RegionSet built but never run (the call went to a whole-call capture instead)."""
    session = getattr(_current, "session", None)
    if session is not None and regions in session.sets:
        session.sets.remove(regions)


def fresh_tables() -> dict | None:
    """The running explain's cache tables, or None outside one."""
    session = getattr(_current, "session", None)
    return session.tables if session is not None else None
