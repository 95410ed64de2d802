"""CRV009: ops whose output shape depends on tensor data.

    idx = x.nonzero()               # CRV009
    pos = x[x > 0]                  # CRV009: boolean-mask indexing
    u = torch.unique(x)             # CRV009

A fixed-shape formulation keeps one graph:

    pos_sum = torch.where(x > 0, x, 0).sum()
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name

DYNAMIC_SHAPE_FUNCTIONS = frozenset({
    "torch.nonzero", "torch.unique", "torch.unique_consecutive", "torch.masked_select",
    "torch.argwhere", "torch.bincount", "torch.repeat_interleave",
})
DYNAMIC_SHAPE_METHODS = frozenset({"nonzero", "unique", "unique_consecutive", "masked_select", "argwhere"})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if name in DYNAMIC_SHAPE_FUNCTIONS:
        yield "CRV009", f"{ctx.dotted(call.func)}() has a data-dependent output shape"
    elif name == "torch.where" and len(call.args) == 1:
        yield "CRV009", "torch.where(condition) with one argument has a data-dependent output shape"
    elif method_name(call) in DYNAMIC_SHAPE_METHODS and not (ctx.qualified(call.func.value) or "").startswith("numpy"):
        yield "CRV009", f".{method_name(call)}() has a data-dependent output shape"


def check_subscript(node: cst.Subscript, ctx: CheckContext):
    if not ctx.tensors.is_tensor(node.value) and not isinstance(node.value, cst.Name):
        return
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and _is_mask(index.value, ctx):
            yield "CRV009", "boolean-mask indexing has a data-dependent output shape"
            return


def _is_mask(node: cst.BaseExpression, ctx: CheckContext) -> bool:
    if isinstance(node, cst.Comparison):
        return ctx.tensors.is_tensor(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
        return _is_mask(node.expression, ctx)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr)):
        return _is_mask(node.left, ctx) or _is_mask(node.right, ctx)
    return False
