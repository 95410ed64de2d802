"""CRV005 in expressions: a conditional expression that branches on a tensor's value.

    y = x * 2 if x.sum() > 0 else x * 3          # CRV005: Python must read the tensor to choose

selects element-wise instead, in one graph:

    y = torch.where(x.sum() > 0, x * 2, x * 3)

(`if` and `while` statements are checked by the analysis itself, on their header.)
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.findings import Violation


def check_conditional(node: cst.IfExp, ctx: CheckContext):
    if ctx.tensors.reads_value(node.test):
        yield Violation("CRV005", "conditional expression (`a if cond else b`) depends on a tensor's value")
