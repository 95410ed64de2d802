"""CRV001: an explicit graph break, in carve's or torch's spelling.

    y = x.sin()
    torch._dynamo.graph_break()     # CRV001: runs eagerly, y.cos() is a second graph
    return y.cos()

Not flagged: `graph_break` names that are not carve's or torch's (`my.graph_break()`).
`check_call` finds the call by its imported name; `check_callee` a call the callee resolver
found to be graph_break under another name (`gb = torch._dynamo.graph_break; gb()`: the
compiler's live resolver), which the analysis (rewriters/analysis.py) hands it; and carve's
tracer reports the ones met at run time.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV001", "explicit-graph-break", "explicit graph break",
    "The code asks for a graph break (carve.graph_break() or torch._dynamo.graph_break()). "
    "The statement runs eagerly; code before and after it is compiled separately.",
    "Remove the call if it is left over from debugging; use carve.disable for code that must not be compiled.",
    Strategy.DONT_COMPILE,
    resumable_in_branch=True,
    what="Flags calls to `carve.graph_break()` and `torch._dynamo.graph_break()`, however they were imported.",
    why="Each explicit break ends a graph: the code before and after it becomes two graphs with an eager "
        "call between them, and the optimizer cannot fuse across it.",
    bad_example="y = x.sin()\ntorch._dynamo.graph_break()\nreturn y.cos()",
    good_example="y = x.sin()\nreturn y.cos()",
    known_problems="`carve lint` follows imports and module-level aliases only; a graph_break passed in as an "
                   "argument or looked up in a dict is found by the compiler at run time, not by lint.",
    fix_safety="No automatic fix (the break may be intended). The compiler honours it: the statement runs "
               "eagerly between two graphs.",
)

GRAPH_BREAK_NAMES = frozenset({"carve.graph_break", "torch._dynamo.graph_break"})


def check_call(call: cst.Call, ctx: CheckContext):
    if ctx.qualified(call.func) in GRAPH_BREAK_NAMES:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() forces a graph break")


def check_callee(callee: CalleeInfo):
    """A call whose target the callee resolver recognised as graph_break, whatever its name."""
    if callee.kind is CalleeKind.GRAPH_BREAK:
        yield Violation(RULE.code, f"{callee.name}() forces a graph break")
