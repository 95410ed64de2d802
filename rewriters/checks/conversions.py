"""CRV004: tensor-to-Python conversions (and CRV021 for the ones torch.compile traces).

    scale = x.max().item()          # CRV004: reads tensor data into Python
    n = int(x.sum())                # CRV004
    values = x.tolist()             # CRV004: an .item() per element (non-integer tensors: unsupported)
    ok = math.isfinite(loss)        # CRV004: math functions take Python numbers
    arr = x.numpy()                 # CRV021: torch.compile traces it (trace_numpy), carve runs it eagerly
    return x / scale

becomes, after the fix the hint suggests:

    scale = x.max()
    return x / scale
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.findings import Violation
from carve.rewriters.op_tables import CONVERSION_METHODS, CONVERTING_BUILTINS

# torch.compile traces these (numpy through trace_numpy): CRV021, not a graph break. `.tolist()` is
# not one: Dynamo 2.13 breaks on it for a float tensor and reads each element with .item() (a
# break without capture_scalar_outputs) for an integer one. (`explain` counts no break when it
# happens before any graph op, as in `values = x.tolist()` first thing; Dynamo's graph-break log does.)
TRACED_BY_TORCH_COMPILE = frozenset({"numpy"})


def check_call(call: cst.Call, ctx: CheckContext):
    method = method_name(call)
    if method in CONVERSION_METHODS and not call.args:
        receiver = method_receiver(call)
        # `np.random.rand(3).tolist()` is numpy, not torch: only flag receivers that are not numpy calls.
        if not (ctx.qualified(receiver) or "").startswith("numpy"):
            if method in TRACED_BY_TORCH_COMPILE:
                yield Violation("CRV021", f".{method}() converts a tensor to Python data (traced by torch.compile, eager in carve)")
            else:
                yield Violation("CRV004", f".{method}() converts a tensor to Python data")
        return
    name = ctx.dotted(call.func)
    if name in CONVERTING_BUILTINS and len(call.args) == 1 and ctx.tensors.is_tensor(call.args[0].value):
        yield Violation("CRV004", f"{name}() of a tensor converts it to a Python value")
    elif (ctx.qualified(call.func) or "").startswith("math.") and any(ctx.tensors.is_tensor(a.value) for a in call.args):
        yield Violation("CRV004", f"{name}() of a tensor converts it to a Python number")
