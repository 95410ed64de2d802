"""CRV012: running the backward pass inside compiled code.

    loss = model(x).sum()
    loss.backward()                 # CRV012: call .backward() outside the compiled function
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name
from carve.rewriters.findings import Violation
from carve.rewriters.op_tables import AUTOGRAD_FUNCTIONS, AUTOGRAD_METHODS


def check_call(call: cst.Call, ctx: CheckContext):
    if method_name(call) in AUTOGRAD_METHODS:
        yield Violation("CRV012", ".backward() runs the autograd engine inside compiled code")
    elif ctx.qualified(call.func) in AUTOGRAD_FUNCTIONS:
        yield Violation("CRV012", f"{ctx.dotted(call.func)}() runs the autograd engine inside compiled code")
