"""CRV004: a tensor converted to a Python value.

    scale = x.max().item()          # CRV004: reads tensor data into Python
    n = int(x.sum())                # CRV004
    values = x.tolist()             # CRV004: an .item() per element (non-integer tensors: unsupported)
    ok = math.isfinite(loss)        # CRV004: math functions take Python numbers
    arr = x.numpy()                 # not CRV004: torch.compile traces it (CRV021)
    a = np.zeros(3).tolist()        # not flagged: a NumPy array, not a tensor
    return x / scale

becomes, after the fix the hint suggests:

    scale = x.max()
    return x / scale
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import TRACED_CONVERSION_METHODS, CheckContext, method_name, receiver_is_numpy
from carve.rewriters.op_tables import CONVERSION_METHODS, CONVERTING_BUILTINS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV004", "tensor-to-python", "tensor converted to a Python value",
    "`.item()`, `.tolist()`, `.numpy()` and `int()/float()/bool()` of a tensor read the tensor's data into Python; "
    "a graph cannot return a Python value in the middle of its computation.",
    "Keep the value a tensor (use torch ops on it) or move the conversion after the tensor work.",
    Strategy.REWRITE,
    hoistable=True, resumable_in_branch=True,
    what="Flags `.item()` and `.tolist()` calls, `int()`, `float()`, `bool()` and `complex()` of a tensor, and "
         "`math` functions given a tensor.",
    why="The Python value exists only once the tensor work before it has run (on a GPU: a device "
        "synchronisation), so the graph must end there; what follows depends on a number the graph could "
        "not see, and is a second graph, specialised on that number unless it is marked dynamic.",
    bad_example="scale = x.max().item()\nreturn x / scale",
    good_example="scale = x.max()\nreturn x / scale",
    known_problems="`.item()` and `.tolist()` are flagged on any receiver that is not visibly a NumPy call, so "
                   "a NumPy array held in a local name (`a = np.zeros(3); a.tolist()`) is a false positive. "
                   "`int(v)` and the math functions are flagged only when the analysis can tell `v` is a "
                   "tensor: a tensor returned by a function it cannot read is missed.",
    fix_safety="No automatic fix in `carve lint`. The compiler computes the tensor work inside the statement "
               "in the graph before it and runs only the conversion eagerly.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    method = method_name(call)
    if method in CONVERSION_METHODS and not call.args:
        if method not in TRACED_CONVERSION_METHODS and not receiver_is_numpy(call, ctx):
            yield Violation(RULE.code, f".{method}() converts a tensor to Python data")
        return
    name = ctx.dotted(call.func)
    if name in CONVERTING_BUILTINS and len(call.args) == 1 and ctx.tensors.is_tensor(call.args[0].value):
        yield Violation(RULE.code, f"{name}() of a tensor converts it to a Python value")
    elif (ctx.qualified(call.func) or "").startswith("math.") and any(ctx.tensors.is_tensor(a.value) for a in call.args):
        yield Violation(RULE.code, f"{name}() of a tensor converts it to a Python number")
