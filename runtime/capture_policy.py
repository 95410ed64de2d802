"""Who runs a graph region, and whether a graph break raises: each decided here, once.

    path = region_path(region)      # CapturePath("dynamo", "torch._dynamo captures every region")
    mode = break_mode(fullgraph)    # "fullgraph" | "error" | "permissive"

Every region is captured by `torch._dynamo` (docs/architecture.md); the only other answer is
Python, for a reason carve states once (not a Python function, no tensor operations, not
worth a compile, the cost check found Python faster, it compiles again on most calls: `recompiles_on_most_calls`,
it compiled again and made no graph: `compiles_for_nothing`).
`carve.explain` prints the path and its reason.

The break policy, as torch.compile's: a `fullgraph` scope makes every break an error (a nested
`fullgraph=False` does not turn it off); else the innermost `error_on_graph_break` setting,
carve's or torch's own (`torch._dynamo.error_on_graph_break`, which carve's markers set too);
else breaks are allowed. Eager checkpoints (`RegionSet.graph_break`) and Dynamo's capture read
the same answer.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import compat, state

DYNAMO = "dynamo"
FULLGRAPH, ERROR, PERMISSIVE = "fullgraph", "error", "permissive"
_state = state._state
_torch_error_on_graph_break = compat.torch_error_on_graph_break
EAGER = "eager"


class CapturePath(NamedTuple):
    """How a region runs now, and why (`carve.explain`'s words)."""

    kind: str  # DYNAMO, or EAGER (the region runs as Python)
    reason: str


def region_path(eager_reason: str | None, fullgraph: bool, capture_reason: str | None = None) -> CapturePath:
    """The path of a region that runs as Python for `eager_reason` (None: it is captured, for
    `capture_reason` when the compiler gave one)."""
    if eager_reason is not None:
        return CapturePath(EAGER, eager_reason)
    if capture_reason is not None:
        return CapturePath(DYNAMO, capture_reason)
    if fullgraph:
        return CapturePath(DYNAMO, "fullgraph=True: Dynamo captures one graph or raises")
    return CapturePath(DYNAMO, "torch._dynamo captures every region")


# A region compiled this many times, on at least half of its calls, each time because the same
# guard failed, runs as Python from then on.
CHURN_COMPILES = 4


def recompiles_on_most_calls(compiles: int, calls: int, failed_guards: list[str]) -> bool:
    """Whether a region that has compiled `compiles` times in `calls` calls keeps compiling: one
    of its inputs takes a new value of what Dynamo guards on nearly every call (a list whose
    length is an episode's, a float that changes every step), so each call pays a trace and a
    backend compile that Python would not. Dynamo's `recompile_limit` would stop it only after 8.

        calls:     1  2  3  4  5  6  7        compiles on calls 1, 2, 4, 5, all because
        compiled:  x  x     x  x              `len(rewards) == N` failed: Python from call 5

    `failed_guards`: the guard that failed in each version Dynamo tried at each recompile
    (compat.dynamo_guard_failures). Only the same guard failing again and again, with new values,
    is churn: a region that compiles a few versions early and then reuses them (train and eval, a
    size made symbolic, a second dtype) fails on other guards each time, and on fewer calls."""
    if compiles < CHURN_COMPILES or 2 * compiles < calls or not failed_guards:
        return False
    return len({_guard_shape(reason) for reason in failed_guards}) == 1


# A region Dynamo compiled this many times without making a graph runs as Python from then on.
NO_GRAPH_COMPILES = 2


def compiles_for_nothing(compiles: int, graphs: int) -> bool:
    """Whether a region keeps compiling and never makes a graph: Dynamo's capture runs its Python
    and guards it, each compile a trace (2.5 s for transformers' `optimizer_grouped_parameters`
    list over BERT's named parameters, traced again on each call as new objects fail its
    guards), and no graph ever pays for it. Its Python gives the same answer, sooner."""
    return graphs == 0 and compiles >= NO_GRAPH_COMPILES


def failed_guard(reason: str) -> str:
    """`0/2: len(rewards) == 3 # r = torch.tensor(rewards) # f.py:5 in f` -> `len(rewards) == 3`"""
    return reason.split(" # ")[0].split(": ", 1)[-1]


def _guard_shape(reason: str) -> str:
    """`0/2: len(rewards) == 3 # ...` -> `len(rewards) == #`: the guard, whatever value it held."""
    return re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "#", failed_guard(reason))


def break_mode(fullgraph: bool) -> str:
    """How a graph break met now is treated: "fullgraph" (one graph or an error), "error" (an
    error, that an inner `error_on_graph_break(False)` may lift) or "permissive".

    Called on every region call: the common case (no scope, torch's flag off) reads two
    thread-local fields and one C flag."""
    thread = _state
    if fullgraph or thread.fullgraph:
        return FULLGRAPH
    settings = thread.error_on_graph_break
    if settings:
        return ERROR if settings[-1] else PERMISSIVE
    return ERROR if _torch_error_on_graph_break() else PERMISSIVE


def break_raises(fullgraph: bool = False) -> bool:
    """Whether a graph break met now must raise (`GraphBreakError` naming the user's line)."""
    return break_mode(fullgraph) is not PERMISSIVE


__all__ = ["CapturePath", "DYNAMO", "EAGER", "FULLGRAPH", "ERROR", "PERMISSIVE", "region_path", "break_mode",
           "break_raises", "recompiles_on_most_calls", "failed_guard", "CHURN_COMPILES"]
