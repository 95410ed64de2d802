"""CRV016: a graph break inside a called function.

    def helper(x):
        print(x)                    # CRV003, in the helper
        return x * 2

    y = helper(x)                   # CRV016: the call stack names helper's CRV003

`check_callee` reports a call the callee resolver reads (a function of the same module, an
imported one, a method of `self`) whose own analysis has a graph break; the analysis
(rewriters/analysis.py) hands it what the resolver found. compiler/api.py also reports it
when a callee breaks at run time.
"""

from __future__ import annotations

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV016", "callee-graph-break", "graph break inside a called function",
    "A function called here contains a graph break (shown in the call stack). The call runs eagerly, "
    "and carve compiles the callee on its own, as torch.compile compiles nested frames.",
    "Fix the break in the callee, or mark the callee carve.nonstrict_trace if it is pure tensor code.",
    Strategy.ESCAPE_HATCH,
    resumable_in_branch=True,
    what="Flags a call to a function whose body has a graph break, with the call stack down to that break.",
    why="torch.compile inlines the callee into the caller's graph; a break inside it ends the caller's graph "
        "at the call too, so the cost shows up far from the code that causes it.",
    bad_example="def helper(x):\n    print(x)\n    return x * 2\n\ny = helper(x)",
    good_example="def helper(x):\n    return x * 2\n\ny = helper(x)\nprint(x)",
    known_problems="Only callees the resolver can read are followed: a function passed in as an argument, "
                   "looked up in a dict or created at run time is not, so `carve lint` misses its breaks "
                   "(the compiler, which resolves calls against the live program, finds more).",
    fix_safety="No automatic fix. The compiler runs the call eagerly and compiles the callee on its own.",
)


def check_callee(callee: CalleeInfo):
    """A call of a user function with a graph break inside: its first break, with the call
    stack down to it (`helper.py:7: CRV003 I/O or logging: print() performs I/O`)."""
    if callee.kind is CalleeKind.USER_FUNCTION and callee.breaks:
        first = callee.breaks[0]
        where = callee.location(first)
        yield Violation(
            RULE.code, f"{callee.name}() has a graph break inside ({first.code} at {where}: {first.message})",
            callee_stack=(f"{where}: {first.describe()}",) + first.callee_stack,
        )
