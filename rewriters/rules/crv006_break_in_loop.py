"""CRV006: a graph break inside a loop.

    for i in range(5):              # CRV006, on the loop's header
        x = x + 1
        print(i)                    # CRV003
    for i in range(5):              # not flagged: nothing in the body breaks
        x = x + 1

Detected structurally: rewriters/analysis.py calls `check_containment` on a `for` or `while`
whose body has a finding of a rule that breaks the graph. carve's runtime also reports it when Dynamo gives up on a region (runtime/dynamo_capture.py).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.rules._rule import Rule, Strategy, containment_check

RULE = Rule(
    "CRV006", "break-in-loop", "graph break inside a loop",
    "torch.compile cannot resume after a graph break inside a loop and skips the whole function. "
    "carve keeps the loop in Python and compiles the tensor work around the breaking statement.",
    "Move the breaking statement out of the loop, or unroll the loop, to get one graph.",
    Strategy.REWRITE, skips_frame=True,
    what="Flags a `for` or `while` loop whose body contains a graph break.",
    why="Dynamo resumes after a graph break by compiling the rest of the frame as a new function; it cannot "
        "do that in the middle of a loop, so it gives up on the whole function, which then runs eagerly.",
    bad_example="for i in range(5):\n    x = x + 1\n    print(i)",
    good_example="for i in range(5):\n    x = x + 1\nprint(list(range(5)))",
    known_problems="Only as precise as the rules of the statements in the body: a break they miss is not "
                   "reported here either, and a break in a branch the loop never takes is reported anyway.",
    fix_safety="No automatic fix in `carve lint`. The compiler keeps the loop in Python and compiles the "
               "tensor work of its body in graphs around the breaking statement.",
)

# The compound statements this rule covers.
STATEMENTS = (cst.For, cst.While)

check_containment = containment_check(RULE.code, STATEMENTS, "a loop")
