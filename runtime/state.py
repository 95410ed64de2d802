"""Thread-local carve state: graph-break strictness, and whether carve is disabled.

- *graph-break strictness*: a `fullgraph` depth and a stack of `error_on_graph_break`
  settings, read by `capture_policy.break_mode` (the one place that decides whether a break
  raises).
- *disabled depth*: while `disabled_scope()` is active (a `carve.disable`d function is
  running), carve-compiled functions run their original code.

Whether code is being compiled is Dynamo's to say (`torch.compiler.is_dynamo_compiling()`,
folded to True inside the code Dynamo traces): carve keeps no flag of its own for it, so
eager code in another thread never sees one thread's compile.

The state is thread-local: another thread running eagerly does not change what this thread
sees. `open_scopes.count` counts the scopes open in every thread, so that a region call, on the
common path where none is open, reads one plain attribute instead of a thread-local one.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from collections.abc import Iterator


class _State(threading.local):
    def __init__(self) -> None:
        self.fullgraph = 0
        self.error_on_graph_break: list[bool] = []
        self.disabled = 0
        # How many of the scopes above are open: 0 on the common path, one read for a region call.
        self.scoped = 0


_state = _State()


class _OpenScopes:
    """How many carve scopes are open in all threads (0: no call needs to read `_state`)."""

    def __init__(self) -> None:
        self.count = 0
        self._lock = threading.Lock()

    def opened(self) -> None:
        _state.scoped += 1
        with self._lock:  # `count += 1` is three bytecodes: two threads could lose one
            self.count += 1

    def closed(self) -> None:
        _state.scoped -= 1
        with self._lock:
            self.count -= 1


open_scopes = _OpenScopes()


# ---- fullgraph / error_on_graph_break -------------------------------------------------------

def push_fullgraph(enabled: bool = True) -> None:
    """Enter a fullgraph scope; enabled=False pushes nothing that could turn an outer one off."""
    if enabled:
        _state.fullgraph += 1
        open_scopes.opened()


def pop_fullgraph(enabled: bool = True) -> None:
    if enabled:
        if _state.fullgraph <= 0:
            raise RuntimeError("carve: pop_fullgraph without push_fullgraph")
        _state.fullgraph -= 1
        open_scopes.closed()


@contextmanager
def fullgraph_scope(enabled: bool) -> Iterator[None]:
    push_fullgraph(enabled)
    try:
        yield
    finally:
        pop_fullgraph(enabled)


def fullgraph_active() -> bool:
    return _state.fullgraph > 0


def push_error_on_graph_break(flag: bool) -> None:
    _state.error_on_graph_break.append(bool(flag))
    open_scopes.opened()


def pop_error_on_graph_break() -> None:
    _state.error_on_graph_break.pop()
    open_scopes.closed()


@contextmanager
def error_on_graph_break_scope(flag: bool) -> Iterator[None]:
    push_error_on_graph_break(flag)
    try:
        yield
    finally:
        pop_error_on_graph_break()


def error_on_graph_break_setting() -> bool | None:
    """The innermost carve `error_on_graph_break` setting on this thread; None outside any."""
    stack = _state.error_on_graph_break
    return stack[-1] if stack else None


# ---- carve.disable ---------------------------------------------------------------------------

def is_disabled() -> bool:
    return _state.disabled > 0


@contextmanager
def disabled_scope() -> Iterator[None]:
    """Run the body with carve off: compiled functions run their original code."""
    _state.disabled += 1
    open_scopes.opened()
    try:
        yield
    finally:
        _state.disabled -= 1
        open_scopes.closed()
