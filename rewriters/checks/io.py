"""CRV003: printing, logging and other I/O.

    y = x * 2
    print("y =", y)                 # CRV003: eager, printed on every call, in order
    logger.info("step %d", step)    # CRV003
    return y + 1
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.findings import Violation
from carve.rewriters.op_tables import IO_FUNCTIONS, LOGGING_METHODS

# torch.compile 2.13 handles these itself (no graph break); carve still runs them eagerly.
TRACED_BY_TORCH_COMPILE = frozenset({"warnings.warn"})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if name in TRACED_BY_TORCH_COMPILE:
        yield Violation("CRV021", f"{ctx.dotted(call.func)}() (handled by torch.compile, eager in carve)")
        return
    if name in IO_FUNCTIONS:
        yield Violation("CRV003", f"{ctx.dotted(call.func)}() performs I/O")
        return
    method = method_name(call)
    if method in LOGGING_METHODS:
        receiver = ctx.dotted(method_receiver(call)) or ""
        qualified_receiver = ctx.qualified(method_receiver(call)) or ""
        if qualified_receiver == "logging" or "log" in receiver.lower():
            yield Violation("CRV003", f"{ctx.dotted(call.func)}() logs")
    elif method in ("write", "flush") and (ctx.dotted(method_receiver(call)) or "").lower() in ("f", "fh", "file", "out", "stream", "writer"):
        yield Violation("CRV003", f"{ctx.dotted(call.func)}() writes to a file")
