"""CRV021: what torch.compile 2.13 traces without a break, but carve runs eagerly.

    arr = x.numpy()                 # CRV021: torch.compile traces it (trace_numpy)
    idx = x.nonzero()               # CRV021 under fullgraph=True: torch.compile gives it an unbacked size
    warnings.warn("slow path")      # CRV021: torch.compile handles it itself
    a = np.zeros(3).nonzero()       # not flagged: a NumPy array, not a tensor

Three checks, each placed in the order of call checks just before the rule such a call would
otherwise fall under (CRV003, CRV004, CRV009), which leaves these calls to this rule.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import (
    TRACED_CONVERSION_METHODS,
    TRACED_WARNING_FUNCTIONS,
    CheckContext,
    has_unbacked_output_size,
    method_name,
    receiver_is_numpy,
)
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV021", "eager-in-carve-only", "run eagerly by carve, traced by torch.compile",
    "torch.compile 2.13 traces this without a graph break (`.numpy()` through trace_numpy, "
    "`nonzero`/`argwhere` with unbacked sizes under fullgraph=True, `warnings.warn`), but carve's graphs "
    "cannot hold it: carve runs the statement eagerly and compiles the code around it.",
    "Nothing to do for torch.compile; for carve, keep such statements together or move them out of hot loops "
    "(under fullgraph=True, out of the compiled function).",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False, resumable_in_branch=True,
    what="Flags `.numpy()` of a tensor, `nonzero` / `argwhere` (as functions or methods) where the code is traced "
         "as under `fullgraph=True` (carve's compiler; in `carve lint`, a function compiled with it: without it "
         "torch.compile breaks there, CRV009) and `warnings.warn`.",
    why="torch.compile keeps one graph here, but carve's graphs hold only operations with static output shapes "
        "and no Python effects, so carve splits its graph at the statement: a difference between the two "
        "compilers, not a break to fix for torch.compile.",
    bad_example="values = x.numpy()\nidx = x.nonzero()",
    good_example="values = x  # keep tensors\nmask = x != 0",
    known_problems="Matched by name: `.numpy()` and `.nonzero()` on any receiver that is not visibly NumPy, "
                   "so a NumPy array held in a local name is a false positive.",
    fix_safety="No automatic fix (off by default in `carve lint`). The compiler runs the statement eagerly "
               "between two graphs.",
)


def check_traced_warning(call: cst.Call, ctx: CheckContext):
    if ctx.qualified(call.func) in TRACED_WARNING_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() (handled by torch.compile, eager in carve)")


def check_traced_conversion(call: cst.Call, ctx: CheckContext):
    method = method_name(call)
    if method in TRACED_CONVERSION_METHODS and not call.args and not receiver_is_numpy(call, ctx):
        yield Violation(RULE.code, f".{method}() converts a tensor to Python data (traced by torch.compile, eager in carve)")


def check_unbacked_size(call: cst.Call, ctx: CheckContext):
    if ctx.dynamic_output_sizes_traced and has_unbacked_output_size(call, ctx):
        yield Violation(RULE.code, f"{ctx.dotted(call.func) or f'.{method_name(call)}'}() has a data-dependent output shape (traced by torch.compile, eager in carve)")
