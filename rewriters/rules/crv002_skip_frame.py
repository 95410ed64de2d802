"""CRV002: a request to skip compiling the current function.

    x = inner1(x)
    carve.skip_frame()              # CRV002: the whole function runs eagerly
    x = inner2(x)

Not flagged: `skip_frame` names that are not carve's or torch's. `check_call` finds the call
by its imported name, `check_callee` a call the callee resolver found to be skip_frame under
another name; the analysis (rewriters/analysis.py) makes the first such finding the
function's whole-function finding.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV002", "skip-frame", "frame skipped on request",
    "carve.skip_frame() / torch._dynamo.skip_frame() gives up compiling the current function: it runs eagerly. "
    "Functions it calls are still compiled.",
    "Move the code that needs skipping into a small helper function and call skip_frame there.",
    Strategy.DONT_COMPILE, outlinable=False,
    what="Flags calls to `carve.skip_frame()` and `torch._dynamo.skip_frame()`.",
    why="A skipped frame is not compiled at all: every tensor operation of the function runs eagerly, "
        "not only the code around the call.",
    bad_example="x = inner1(x)\ntorch._dynamo.skip_frame()\nx = inner2(x)",
    good_example="x = inner1(x)\nproblematic_code()  # calls skip_frame itself\nx = inner2(x)",
    known_problems="As CRV001: lint follows imports and module-level aliases, not values passed in at run time.",
    fix_safety="No automatic fix. The compiler runs the whole function eagerly and compiles the functions "
               "it calls.",
)

SKIP_FRAME_NAMES = frozenset({"carve.skip_frame", "torch._dynamo.skip_frame"})


def check_call(call: cst.Call, ctx: CheckContext):
    if ctx.qualified(call.func) in SKIP_FRAME_NAMES:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() skips compiling this function")


def check_callee(callee: CalleeInfo):
    """A call whose target the callee resolver recognised as skip_frame, whatever its name."""
    if callee.kind is CalleeKind.SKIP_FRAME:
        yield Violation(RULE.code, f"{callee.name}() skips compiling this function")
