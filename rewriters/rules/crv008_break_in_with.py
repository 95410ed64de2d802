"""CRV008: a graph break inside a `with` block.

    with ctx():                     # CRV008, on the with
        x = x + 1
        print(x)                    # CRV003
    with torch.no_grad():           # not flagged: Dynamo resumes inside grad-mode blocks
        x = x + 1
        print(x)

Detected structurally: rewriters/analysis.py calls `check_containment` once it knows the
body broke, except for a `with` entering only `RESUMABLE_CONTEXT_MANAGERS` (Dynamo resumes
inside those).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.rules._rule import Rule, Strategy, containment_check

RULE = Rule(
    "CRV008", "break-in-with", "graph break inside a context manager",
    "torch.compile cannot resume after a graph break inside most `with` blocks and skips the whole function. "
    "carve keeps the `with` in Python and compiles the tensor work in its body. Not reported for torch's "
    "own grad-mode, autocast, saved-tensor-hook and profiler managers: there both compilers resume after "
    "the break, inside the block.",
    "Move the breaking statement out of the `with` block.",
    Strategy.REWRITE, skips_frame=True,
    what="Flags a `with` statement whose body contains a graph break, unless every manager it enters is one "
         "torch.compile resumes inside (grad mode, autocast, saved-tensor hooks, the profiler).",
    why="To resume after a break Dynamo must re-enter the context manager in the new frame; it knows how to "
        "for torch's own managers only, and gives up on the whole function otherwise.",
    bad_example="with ctx():\n    x = x + 1\n    print(x)",
    good_example="with ctx():\n    x = x + 1\nprint(x)",
    known_problems="The resumable managers are a fixed list of qualified names: one reached through an alias "
                   "the import table cannot resolve is reported, and a profiler entered `as` a name is "
                   "reported too (the profiler object cannot leave a graph).",
    fix_safety="No automatic fix in `carve lint`. The compiler keeps the `with` in Python and compiles the "
               "tensor work of its body.",
)

# The compound statements this rule covers.
STATEMENTS = (cst.With,)

check_containment = containment_check(RULE.code, STATEMENTS, "a `with` block")
