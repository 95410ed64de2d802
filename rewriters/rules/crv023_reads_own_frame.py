"""CRV023: code that reads the function's own frame.

    def report(x, step):
        y = x.softmax(-1)
        print("step {step}: {y}".format(**locals()))   # CRV023: sees every local by name
        return y

    def f(x, name):
        return getattr(x, name)()                      # not flagged: reads one attribute

`check_call` finds `locals()`, `vars()` and `dir()` without arguments, `eval(...)` and
`exec(...)` by their names. The compiler (compiler/pipeline.py) then keeps the function
whole: carve's split moves locals into region functions, which such a call would no longer
see.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV023", "reads-own-frame", "code that reads the function's own frame",
    "`locals()`, `vars()`, `dir()`, `eval` and `exec` read the function's local variables by name. carve's "
    "split keeps locals that only its graph regions use inside those regions, so it does not split such "
    "a function: Dynamo captures it whole, as torch.compile does.",
    "Pass the values by name (`print(f\"{y}\")`) instead of reading the frame.",
    Strategy.REWRITE, breaks_torch_compile=False, splits_carve_graph=False, lint_default=False,
    what="Flags `locals()`, `vars()` and `dir()` called without arguments, and `eval(...)` and `exec(...)`.",
    why="The names a frame holds are an implementation detail a rewrite changes: a region's temporaries "
        "live in the region's frame, and its own helper names in the function's.",
    bad_example='print("loss {loss}".format(**locals()))',
    good_example='print(f"loss {loss}")',
    known_problems="Matched by name: a local function named `locals` is taken for the builtin (the function "
                   "is then captured whole, which is correct, only without carve's split).",
    fix_safety="No automatic fix (off by default in `carve lint`). The compiler hands the function to Dynamo "
               "whole; `carve rewrite` still writes its split.",
)

FRAME_READERS = frozenset({"locals", "vars", "dir"})
CODE_RUNNERS = frozenset({"eval", "exec"})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if name in FRAME_READERS and not call.args or name in CODE_RUNNERS:
        yield Violation(RULE.code, f"{name}() reads the function's local variables by name")
