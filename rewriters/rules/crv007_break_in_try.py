"""CRV007: a graph break inside a try block.

    try:                            # CRV007, on the try
        x = x + 1
        print(x)                    # CRV003
    except ValueError:
        pass

Detected structurally: rewriters/analysis.py calls `check_containment` on a `try` (or
`try*`) any part of which has a finding of a rule that breaks the graph.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.rules._rule import Rule, Strategy, containment_check

RULE = Rule(
    "CRV007", "break-in-try", "graph break inside a try block",
    "torch.compile cannot resume after a graph break inside a try block and skips the whole function. "
    "carve keeps the try in Python and compiles the tensor work in its body.",
    "Move the breaking statement out of the try block.",
    Strategy.REWRITE, skips_frame=True,
    what="Flags a `try` statement whose body, handlers, `else` or `finally` contain a graph break.",
    why="Dynamo cannot resume a frame inside an active exception handler block, so a break there makes it "
        "give up on the whole function, which then runs eagerly.",
    bad_example="try:\n    x = x + 1\n    print(x)\nexcept ValueError:\n    pass",
    good_example="try:\n    x = x + 1\nexcept ValueError:\n    pass\nprint(x)",
    known_problems="Only as precise as the rules of the statements inside: a break they miss is not "
                   "reported here either.",
    fix_safety="No automatic fix in `carve lint`. The compiler keeps the `try` in Python and compiles the "
               "tensor work of its body.",
)

# The compound statements this rule covers.
STATEMENTS = (cst.Try, cst.TryStar) if hasattr(cst, "TryStar") else (cst.Try,)

check_containment = containment_check(RULE.code, STATEMENTS, "a try block")
