"""Thread-local compile state: are we tracing, are graph breaks errors, is carve disabled.

Three pieces of state that markers, the tracer and graph regions share:

- *tracing depth*: `is_compiling()` is True only while carve's tracer records a
  graph region (`tracing_scope`). It is False in eager code, including inside a
  disabled function called from a trace.
- *graph-break strictness*: a `fullgraph` depth and a stack of
  `error_on_graph_break` settings. `should_error()` is True if any fullgraph
  scope is active (fullgraph=False nested inside it does not turn it off),
  else the innermost `error_on_graph_break` setting (default False), as in
  torch.compile.
- *disabled depth*: while `disabled_scope()` is active (a `carve.disable`d
  function is running), carve-compiled functions run their original code.

The state is thread-local: another thread tracing or running eagerly does not
change what this thread sees.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from collections.abc import Iterator


class _State(threading.local):
    def __init__(self) -> None:
        self.tracing = 0
        self.fullgraph = 0
        self.error_on_graph_break: list[bool] = []
        self.disabled = 0


_state = _State()


def is_compiling() -> bool:
    """True while carve's tracer is recording a graph region on this thread."""
    return _state.tracing > 0


@contextmanager
def tracing_scope(enabled: bool = True) -> Iterator[None]:
    """Mark the dynamic extent of a trace (enabled=True) or an eager hole in it (False)."""
    saved = _state.tracing
    _state.tracing = saved + 1 if enabled else 0
    try:
        yield
    finally:
        _state.tracing = saved


def set_tracing(depth: int) -> int:
    """Set the tracing depth directly; returns the previous one (for the tracer's hot paths)."""
    saved = _state.tracing
    _state.tracing = depth
    return saved


def tracing_depth() -> int:
    return _state.tracing


# ---- fullgraph / error_on_graph_break -------------------------------------------------------

def push_fullgraph(enabled: bool = True) -> None:
    """Enter a fullgraph scope; enabled=False pushes nothing that could turn an outer one off."""
    _state.fullgraph += 1 if enabled else 0


def pop_fullgraph(enabled: bool = True) -> None:
    if enabled:
        if _state.fullgraph <= 0:
            raise RuntimeError("carve: pop_fullgraph without push_fullgraph")
        _state.fullgraph -= 1


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


def pop_error_on_graph_break() -> None:
    _state.error_on_graph_break.pop()


@contextmanager
def error_on_graph_break_scope(flag: bool) -> Iterator[None]:
    push_error_on_graph_break(flag)
    try:
        yield
    finally:
        pop_error_on_graph_break()


def error_on_graph_break_depth() -> int:
    return len(_state.error_on_graph_break)


def error_on_graph_break_setting() -> bool:
    stack = _state.error_on_graph_break
    return stack[-1] if stack else False


def should_error() -> bool:
    """Whether a graph break met now must raise: fullgraph wins, else the innermost setting."""
    if _state.fullgraph > 0:
        return True
    stack = _state.error_on_graph_break
    return stack[-1] if stack else False


# ---- carve.disable ---------------------------------------------------------------------------

def is_disabled() -> bool:
    return _state.disabled > 0


@contextmanager
def disabled_scope() -> Iterator[None]:
    """Run the body with carve off: compiled functions run their original code, no tracing."""
    saved_tracing = _state.tracing
    _state.disabled += 1
    _state.tracing = 0
    try:
        yield
    finally:
        _state.disabled -= 1
        _state.tracing = saved_tracing
