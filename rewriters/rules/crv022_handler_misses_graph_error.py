"""CRV022: a handler a compiled graph would raise past.

    try:                            # CRV022, on the try: it stays Python
        L = torch.linalg.cholesky(A)
    except RuntimeError:            # a matrix that is not positive-definite, on some call
        L = torch.linalg.cholesky(A + 1e-3 * I)

    try:                            # not flagged: no tensor operation raises KeyError
        w = weights[name]
    except KeyError:
        w = None

Detected structurally: the analysis (rewriters/analysis.py) calls `check_try` on each `try`
(or `try*`) statement of the function's own body.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.names import dotted_name
from carve.rewriters.rules import crv007_break_in_try as break_in_try
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV022", "handler-misses-graph-error", "handler a compiled graph would raise past",
    "A tensor operation can fail on the data of one call only (an index out of range, a matrix that "
    "is not positive-definite). Traced into a graph with its `try`, the operation runs when the graph "
    "runs, after the trace has left the `try`: the error escapes the handler. torch.compile raises it; "
    "carve keeps the `try` in Python and compiles its body, so the handler catches it as in eager.",
    "Nothing to change for carve. Under torch.compile, validate the data before the operation instead "
    "of catching its error.",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
    what="Flags a `try` with an `except` clause that catches what a tensor operation raises on bad data: "
         "bare `except`, `Exception`, `BaseException`, `RuntimeError`, `IndexError`, `LookupError`, "
         "`NotImplementedError` and torch's own errors (`torch.linalg.LinAlgError`, `torch.OutOfMemoryError`).",
    why="A graph's operations run when the graph is called, after the traced code's `try` blocks have closed. "
        "Dynamo models an exception raised while it traces, not one raised later on another call's data, "
        "which then leaves the compiled function however the handler was written.",
    bad_example="try:\n    y = x[idx]\nexcept IndexError:\n    y = x.sum()",
    good_example="y = x[idx] if -x.size(0) <= idx < x.size(0) else x.sum()",
    known_problems="Matched by the handler's exception names: a user's own exception class named "
                   "`RuntimeError`-like is taken at its name, and a `try` whose body cannot fail on data "
                   "(`except Exception` around a Python call) is kept in Python needlessly: more graphs, "
                   "not a wrong result.",
    fix_safety="No automatic fix (off by default in `carve lint`: torch.compile does not break here). The "
               "compiler keeps the `try` in Python and compiles the tensor work of its body.",
)

# The exceptions a tensor operation raises on bad data when its graph runs, and their bases.
RUN_TIME_ERRORS = frozenset({
    "BaseException", "Exception", "RuntimeError", "IndexError", "LookupError", "NotImplementedError",
    "LinAlgError", "OutOfMemoryError", "AcceleratorError",
})

# The compound statements this rule covers: the try statements, as CRV007's.
STATEMENTS = break_in_try.STATEMENTS


def check_try(statement: cst.CSTNode):
    """A `try` one of whose handlers catches what a graph raises on data, else nothing."""
    if not isinstance(statement, STATEMENTS):
        return
    for handler in statement.handlers:
        caught = _caught_names(handler.type)
        if caught is None or caught & RUN_TIME_ERRORS:
            shown = "a bare except" if handler.type is None else f"except {cst.Module([]).code_for_node(handler.type)}"
            yield Violation(
                RULE.code,
                f"{shown} would not see an error a compiled graph raises on a later call's data: the try stays Python",
                frozen_by_tracing=True)
            return


def _caught_names(expression: cst.BaseExpression | None) -> frozenset[str] | None:
    """The last parts of the exception names a handler catches; None for a bare `except`."""
    if expression is None:
        return None
    elements = [e.value for e in expression.elements] if isinstance(expression, cst.Tuple) else [expression]
    names = set()
    for element in elements:
        dotted = dotted_name(element)
        # Not a plain name (`except errors[0]:`): any exception may be meant.
        names.add(dotted.rsplit(".", 1)[-1] if dotted else "BaseException")
    return frozenset(names)
