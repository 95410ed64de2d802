"""carve's public markers: the user's way to steer what is compiled.

They mirror torch.compile's (`torch._dynamo.graph_break`, `torch.compiler.disable`,
`allow_in_graph`, ...), and carve recognises torch's own markers too (see
`compat.classify_callable`), so code written for torch.compile behaves the same.

    @carve.disable                 # runs eagerly, and so does everything it calls
    def log_stats(x): ...

    @carve.nonstrict_trace         # traced even though it graph-breaks inside
    def magic(): carve.graph_break(); return torch.tensor([42])

    with carve.error_on_graph_break(True):   # breaks in here are errors
        ...

In eager code the markers do nothing (graph_break/skip_frame are no-ops).
Inside a region, Dynamo honours them: each is built on torch's own marker.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch._dynamo as _dynamo
from torch.compiler import is_dynamo_compiling as _dynamo_compiling

from . import state

# Each marker is built on torch's own, so Dynamo honours it inside a region it captures.


def graph_break(msg: str = "") -> None:
    """Force a graph break here (CRV001). A no-op when not compiling."""
    _dynamo.graph_break(msg)


def skip_frame(msg: str = "") -> None:
    """Give up compiling the current function: it runs eagerly (CRV002). A no-op when not compiling."""
    _dynamo.skip_frame(msg)


def is_compiling() -> bool:
    """True in code Dynamo is tracing into a graph region, False in code that runs eagerly.

    Per thread: Dynamo folds the call to True inside the code it traces, and nothing is set
    that eager code in another thread could read (torch.compiler.is_compiling() reads a
    process-wide flag that torch 2.13 sets for the length of any compile)."""
    return _dynamo_compiling()


# ---- disable ---------------------------------------------------------------------------------

def _carve_disabled(fn: Callable[..., Any], recursive: bool) -> Callable[..., Any]:
    if recursive:
        @functools.wraps(fn)
        def carve_disabled(*args: Any, **kwargs: Any) -> Any:
            with state.disabled_scope():
                return fn(*args, **kwargs)
    else:
        @functools.wraps(fn)
        def carve_disabled(*args: Any, **kwargs: Any) -> Any:
            # Only fn itself is eager (Dynamo skips its frame): compiled functions it calls still compile.
            return fn(*args, **kwargs)
    carve_disabled.__carve_disable__ = recursive  # type: ignore[attr-defined]
    return carve_disabled


def _make_disabled(fn: Callable[..., Any], recursive: bool) -> Callable[..., Any]:
    # torch's disable outside carve's: Dynamo skips the wrapper frame (and, non-recursively,
    # the user's own frame too, while what it calls still compiles).
    inner = fn if recursive or not callable(fn) else _dynamo.disable(fn, recursive=False)
    disabled = _dynamo.disable(_carve_disabled(inner, recursive), recursive=recursive)
    disabled.__wrapped__ = fn  # what the user wrapped, as functools.wraps promises
    return disabled


def disable(fn: Callable[..., Any] | None = None, recursive: bool = True) -> Any:
    """Run `fn` eagerly. recursive=True: also everything it calls. Usable with or without arguments."""
    if fn is None:
        return lambda f: _make_disabled(f, recursive)
    if not callable(fn):
        raise TypeError(f"carve.disable expects a callable, got {type(fn).__name__}")
    return _make_disabled(fn, recursive)


# ---- allow_in_graph / disallow_in_graph ------------------------------------------------------

# Keyed by id; the value keeps the object alive so the id can't be reused.
_allowed: dict[int, Any] = {}
_disallowed: dict[int, Any] = {}
# Generation counter: compat caches classifications and must forget them on any change.
registry_version = 0


def _bump() -> None:
    global registry_version
    registry_version += 1


def allow_in_graph(fn: Any) -> Any:
    """Put calls to `fn` in the graph as one opaque node; carve does not trace inside."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError("carve.allow_in_graph expects a callable")
    _disallowed.pop(id(fn), None)
    # torch's own operators are in graphs already: allowing one only undoes a disallow, and must
    # not pin it as "allowed" over a later torch._dynamo.disallow_in_graph (the latest call wins).
    if not _is_torch_operator(fn):
        _allowed[id(fn)] = fn
    _tell_dynamo(_dynamo.allow_in_graph, fn)
    _bump()
    return fn


def _tell_dynamo(register: Callable[[Any], Any], fn: Any) -> None:
    """Register with Dynamo too; Dynamo refuses some callables carve accepts (it then traces them)."""
    try:
        register(fn)
    except Exception:
        pass


def _is_torch_operator(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return module == "torch" or module.startswith(("torch.", "torch._C"))


def disallow_in_graph(fn: Any) -> Any:
    """Break the graph at every call of `fn` (works on torch functions such as torch.sub)."""
    if isinstance(fn, (list, tuple)):
        return [disallow_in_graph(f) for f in fn]
    if not callable(fn):
        raise TypeError("carve.disallow_in_graph expects a callable")
    _allowed.pop(id(fn), None)
    _disallowed[id(fn)] = fn
    _tell_dynamo(_dynamo.disallow_in_graph, fn)
    _bump()
    return fn


def is_allowed_in_graph(fn: Any) -> bool:
    return id(fn) in _allowed


def is_disallowed_in_graph(fn: Any) -> bool:
    return id(fn) in _disallowed


# ---- nonstrict_trace -------------------------------------------------------------------------

def nonstrict_trace(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Trace `fn` non-strictly: explicit graph breaks and I/O inside it are ignored while tracing.

    Tensor-to-Python conversions inside it still break. Usable as a decorator and
    inline: `carve.nonstrict_trace(g)(x)`.
    """
    if _dynamo_compiling():
        return _dynamo.nonstrict_trace(fn)  # inline use inside a region Dynamo captures
    if not callable(fn):
        raise TypeError("carve.nonstrict_trace expects a callable")
    wrapped = _carve_nonstrict(fn)
    try:
        wrapped = _dynamo.nonstrict_trace(wrapped)  # Dynamo traces it non-strictly too
    except Exception:
        pass
    wrapped.__carve_nonstrict_trace__ = True  # type: ignore[attr-defined]
    wrapped.__wrapped__ = fn  # type: ignore[attr-defined]
    return wrapped


def _carve_nonstrict(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def carve_nonstrict(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    carve_nonstrict.__carve_nonstrict_trace__ = True  # type: ignore[attr-defined]
    return carve_nonstrict


# ---- error_on_graph_break --------------------------------------------------------------------

class ErrorOnGraphBreak:
    """Make graph breaks errors (True) or not (False) in a block or a function.

    Usable as a context manager and as a decorator, like
    torch._dynamo.error_on_graph_break. The innermost setting wins, but a
    fullgraph scope makes every break an error regardless. torch's own
    setting is set alongside carve's, so Dynamo honours it inside a region.
    """

    def __init__(self, flag: bool) -> None:
        self.flag = bool(flag)
        self._torch_scopes: list = []

    def __enter__(self) -> None:
        state.push_error_on_graph_break(self.flag)
        scope = _dynamo.error_on_graph_break(self.flag)
        scope.__enter__()
        self._torch_scopes.append(scope)

    def __exit__(self, *exc: Any) -> None:
        self._torch_scopes.pop().__exit__(*exc)
        state.pop_error_on_graph_break()

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        flag = self.flag
        torch_decorated = _dynamo.error_on_graph_break(flag)(fn)

        @functools.wraps(fn)
        def carve_error_on_graph_break(*args: Any, **kwargs: Any) -> Any:
            if _dynamo_compiling():
                return torch_decorated(*args, **kwargs)
            state.push_error_on_graph_break(flag)
            try:
                return torch_decorated(*args, **kwargs)
            finally:
                state.pop_error_on_graph_break()

        carve_error_on_graph_break.__carve_error_on_graph_break__ = flag  # type: ignore[attr-defined]
        return carve_error_on_graph_break


def error_on_graph_break(flag: bool) -> Any:
    """`with carve.error_on_graph_break(True):` or `@carve.error_on_graph_break(False)`."""
    if _dynamo_compiling():
        return _dynamo.error_on_graph_break(flag)  # used inside a region Dynamo captures
    return ErrorOnGraphBreak(flag)


def mark_dynamic(tensor: Any, dim: Any) -> None:
    """`carve.mark_dynamic(x, 1)`: trace dimension `dim` of `x` (an int or a list of ints) with
    a symbolic size from the first capture, so one graph serves every size; the same mark as
    `torch._dynamo.mark_dynamic`, which carve honours too."""
    _dynamo.mark_dynamic(tensor, dim)


def mark_static(tensor: Any, dim: Any = None) -> None:
    """`carve.mark_static(x, 0)`: never make dimension `dim` of `x` symbolic (all dimensions when
    `dim` is None), even when its size changes; the same mark as `torch._dynamo.mark_static`."""
    _dynamo.mark_static(tensor, dim)

