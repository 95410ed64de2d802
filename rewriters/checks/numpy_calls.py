"""CRV014: NumPy functions applied to tensors.

    y = np.exp(x)                   # CRV014: converts x to an array
    y = torch.exp(x)                # the fix
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.findings import Violation


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name.startswith("numpy.") and any(ctx.tensors.is_tensor(arg.value) for arg in call.args):
        yield Violation("CRV014", f"{ctx.dotted(call.func)}() is a NumPy call on a tensor")
