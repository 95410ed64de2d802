"""CRV009: ops whose output shape depends on tensor data.

    idx = x.nonzero()               # CRV021: torch.compile traces it with an unbacked size
    pos = x[x > 0]                  # CRV009: boolean-mask indexing
    keep = x.abs().sum(-1) > 0
    kept = x[keep]                  # CRV009: a name that only ever holds a mask
    u = torch.unique(x)             # CRV009

A fixed-shape formulation keeps one graph:

    pos_sum = torch.where(x > 0, x, 0).sum()
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.findings import Violation
from carve.rewriters.op_tables import (
    DATA_DEPENDENT_SHAPE_FUNCTIONS,
    DATA_DEPENDENT_SHAPE_METHODS,
    UNBACKED_SIZE_FUNCTIONS,
    UNBACKED_SIZE_METHODS,
)

DYNAMIC_SHAPE_FUNCTIONS = DATA_DEPENDENT_SHAPE_FUNCTIONS
DYNAMIC_SHAPE_METHODS = DATA_DEPENDENT_SHAPE_METHODS
# torch.compile 2.13 gives UNBACKED_SIZE_* an unbacked output size instead of breaking: CRV021
# (eager in carve only).


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    method = method_name(call)
    if name in UNBACKED_SIZE_FUNCTIONS or (
        method in UNBACKED_SIZE_METHODS and not (ctx.qualified(method_receiver(call)) or "").startswith("numpy")
    ):
        yield Violation("CRV021", f"{ctx.dotted(call.func) or f'.{method}'}() has a data-dependent output shape (traced by torch.compile, eager in carve)")
    elif name in DYNAMIC_SHAPE_FUNCTIONS:
        yield Violation("CRV009", f"{ctx.dotted(call.func)}() has a data-dependent output shape")
    elif name == "torch.where" and len(call.args) == 1:
        yield Violation("CRV009", "torch.where(condition) with one argument has a data-dependent output shape")
    elif method_name(call) in DYNAMIC_SHAPE_METHODS and not (ctx.qualified(method_receiver(call)) or "").startswith("numpy"):
        yield Violation("CRV009", f".{method_name(call)}() has a data-dependent output shape")


def check_subscript(node: cst.Subscript, ctx: CheckContext):
    if not ctx.tensors.is_tensor(node.value) and not isinstance(node.value, cst.Name):
        return
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and _is_mask(index.value, ctx, node.value):
            yield Violation("CRV009", "boolean-mask indexing has a data-dependent output shape")
            return


def _is_mask(node: cst.BaseExpression, ctx: CheckContext, indexed: cst.BaseExpression, depth: int = 0) -> bool:
    """A boolean tensor: a comparison of tensors, or of the indexed value itself (`x[x > 0]`), or a
    name every assignment of which is one (`keep = x.abs() > 0`)."""
    if isinstance(node, cst.Name):
        values = ctx.tensors.assigned.get(node.value, ())
        return bool(values) and depth < 4 and all(_is_mask(v, ctx, indexed, depth + 1) for v in values)
    if isinstance(node, cst.Comparison):
        if any(isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in node.comparisons):
            return False
        indexed_name = ctx.dotted(indexed)
        compares_indexed = indexed_name is not None and ctx.dotted(node.left) == indexed_name
        return compares_indexed or ctx.tensors.is_tensor(node)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
        return _is_mask(node.expression, ctx, indexed, depth)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.BitAnd, cst.BitOr)):
        return _is_mask(node.left, ctx, indexed, depth) or _is_mask(node.right, ctx, indexed, depth)
    return False
