"""CRV009: ops whose output shape depends on tensor data.

    pos = x[x > 0]                  # CRV009: boolean-mask indexing
    keep = x.abs().sum(-1) > 0
    kept = x[keep]                  # CRV009: a name that only ever holds a mask
    u = torch.unique(x)             # CRV009
    s = torch.linalg.lstsq(a, b)    # CRV009 (so torch.combinations): "Dynamic shape operator" on torch 2.13
    idx = x.nonzero()               # CRV009 without fullgraph=True ("Dynamic shape operator"); CRV021 under it
    r = torch.repeat_interleave(x, counts)     # CRV009: repeats given by a tensor
    r = torch.repeat_interleave(x, n, dim=0)   # not flagged: a Python int repeats gives a known shape
    x[x < 0] = 0                    # not flagged: a masked store keeps x's shape

A fixed-shape formulation keeps one graph:

    pos_sum = torch.where(x > 0, x, 0).sum()
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, has_unbacked_output_size, method_name, receiver_is_numpy
from carve.rewriters.op_tables import DATA_DEPENDENT_SHAPE_FUNCTIONS, DATA_DEPENDENT_SHAPE_METHODS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV009", "data-dependent-shape", "output shape depends on tensor data",
    "`nonzero`, `unique`, `masked_select`, boolean-mask indexing and similar ops produce tensors whose "
    "shape depends on the data; torch.compile breaks the graph there unless capture_dynamic_output_shape_ops is set.",
    "Use a fixed-shape formulation (torch.where, multiplication by a mask) where possible.",
    Strategy.REWRITE,
    what="Flags `nonzero` and `argwhere` in code not compiled with `fullgraph=True` (under it torch.compile "
         "traces them with an unbacked size: CRV021), `unique`, `unique_consecutive`, `masked_select`, `bincount`, "
         "`torch.combinations`, `torch.linalg.lstsq` and one-argument "
         "`torch.where(cond)` calls, `repeat_interleave` given its repeats as a tensor (a Python int, "
         "`x.shape[1]` or `self.num_heads`, gives a shape known from the input's), and indexing a tensor with a "
         "boolean mask (`x[x > 0]`).",
    why="A graph is built for known shapes; the size of these outputs is known only once the data is, so the "
        "graph ends at the op and everything after it is a new graph, recompiled for each new size.",
    bad_example="return x[x > 0].sum()",
    good_example="return torch.where(x > 0, x, 0).sum()",
    known_problems="A mask is recognised from comparisons of tensors (and `~`, `&`, `|` of them) and from names "
                   "every assignment of which is one: a mask returned by a helper (`x[make_mask(x)]`) is missed. "
                   "Method names are matched on any receiver that is not visibly NumPy. `repeat_interleave`'s "
                   "repeats count as a tensor only where the analysis can tell they are one: repeats returned by a "
                   "function it cannot read are missed.",
    fix_safety="No automatic fix: the fixed-shape formulation changes the result's shape. The compiler runs "
               "the statement eagerly between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if has_unbacked_output_size(call, ctx):
        if ctx.dynamic_output_sizes_traced:
            return  # under fullgraph=True torch.compile traces it with an unbacked size: CRV021's
        # without fullgraph torch.compile 2.13 ends the graph there ("Dynamic shape operator")
        yield Violation(RULE.code, f"{ctx.dotted(call.func) or f'.{method_name(call)}'}() has a data-dependent output shape")
    elif name == "torch.repeat_interleave" or (method_name(call) == "repeat_interleave" and not receiver_is_numpy(call, ctx)):
        if _repeats_from_a_tensor(call, ctx, method=name != "torch.repeat_interleave"):
            yield Violation(RULE.code, f"{ctx.dotted(call.func)}() with repeats given by a tensor has a data-dependent "
                                       "output shape")
    elif name in DATA_DEPENDENT_SHAPE_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() has a data-dependent output shape")
    elif name == "torch.where" and len(call.args) == 1:
        yield Violation(RULE.code, "torch.where(condition) with one argument has a data-dependent output shape")
    elif method_name(call) in DATA_DEPENDENT_SHAPE_METHODS and not receiver_is_numpy(call, ctx):
        yield Violation(RULE.code, f".{method_name(call)}() has a data-dependent output shape")


def _repeats_from_a_tensor(call: cst.Call, ctx: CheckContext, method: bool) -> bool:
    """`torch.repeat_interleave(x, counts)`, `x.repeat_interleave(counts)` with `counts` a tensor, or
    `torch.repeat_interleave(counts)` (each index repeated its count): the output's length is a sum of
    tensor values. A Python int (`x.shape[1]`, `self.num_heads`) repeats every element alike."""
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    repeats_position = 0 if method else 1
    if not method and len(positional) == 1 and "repeats" not in keywords:
        return True  # the one-argument form: its argument is the repeats tensor
    repeats = positional[repeats_position] if len(positional) > repeats_position else keywords.get("repeats")
    return repeats is not None and ctx.tensors.is_tensor(repeats)


def check_subscript(node: cst.Subscript, ctx: CheckContext):
    if not ctx.tensors.is_tensor(node.value) and not isinstance(node.value, cst.Name):
        return
    for element in node.slice:
        index = element.slice
        if isinstance(index, cst.Index) and _is_mask(index.value, ctx, node.value):
            yield Violation(RULE.code, "boolean-mask indexing has a data-dependent output shape")
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
