"""CRV010: a generator function.

    def f(xs):                      # CRV010: the whole function runs eagerly
        for x in xs:
            yield x * 2
    def g(xs):                      # not flagged: the yield belongs to the nested function
        def inner():
            yield 1
        return list(inner())

Detected structurally: the analysis (rewriters/analysis.py, `_BodyFacts`) finds the first
`yield` in the function's own body, not in nested functions or lambdas, and `check_function`
reports it.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV010", "generator", "generator function",
    "A function containing `yield` is a generator: each `next()` resumes a Python frame, which a graph cannot do. "
    "carve runs generator functions eagerly.",
    "Return a list or tensor instead of yielding, or compile the per-item function instead.",
    Strategy.DONT_COMPILE, outlinable=False,
    what="Flags a function whose body contains `yield` or `yield from`.",
    why="Calling a generator returns an iterator whose frame is suspended between items; a compiled graph runs "
        "start to end, so the function is not compiled at all.",
    bad_example="def f(xs):\n    for x in xs:\n        yield x * 2",
    good_example="def f(xs):\n    return [x * 2 for x in xs]",
    known_problems="None known: the check is syntactic.",
    fix_safety="No automatic fix. The compiler runs the whole function eagerly; the functions it calls are "
               "still compiled.",
)


def check_function(first_yield: cst.CSTNode | None):
    """The function's own first `yield` (nested definitions excluded), found by the analysis's walk."""
    if first_yield is not None:
        yield Violation(RULE.code, "the function is a generator (contains yield)")
