"""CRV033: an in-place view operation on a tensor the compiled function was given.

    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                grad = p.grad.data
                grad.transpose_(0, 1)           # CRV033: an in-place view of an input (p.grad)
        x.t_()                                  # CRV033 for a parameter `x` of the function
        y = x.clone(); y.t_()                   # not flagged: a tensor the function made
        x.mul_(2)                               # not flagged: in place, but not a view

torch.compile 2.13 refuses `transpose_`, `t_`, `squeeze_`, `unsqueeze_`, `swapdims_`, `swapaxes_`
and `as_strided_` on a graph input ("Getting an inplace view on a graph input is not supported"):
the graph breaks there. A graph input is a tensor from outside the frame: a parameter of the
function, or what is reached from one or from `self` by attributes (`p.grad.data`,
`self.weight`), or by iterating them (`for p in group["params"]`).

`check_call` finds the call (the analysis runs it on every call); `check_statement`, run on each
small statement in source order before its calls are checked (rewriters/rules/__init__.py,
`STATEMENT_CHECKS`), keeps on the function's CheckContext which names hold inputs: the parameters
at first, then each name assigned one (`grad = p.grad.data`) or bound by iterating one
(`bind_loop_target`, called at each `for` header); a name assigned anything else holds a tensor the
function made. The calls of a statement see the names as they were before it (`input_names_before`).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.names import dotted_name
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV033", "inplace-view-of-input", "in-place view operation on an input tensor",
    "torch.compile 2.13 does not trace an in-place view (`transpose_`, `t_`, `squeeze_`, `unsqueeze_`, ...) of a "
    "tensor the compiled function was given (\"Getting an inplace view on a graph input is not supported\"): "
    "the graph breaks there.",
    "Use the out-of-place view and keep the result (`g = g.transpose(0, 1)`), or clone the input first.",
    Strategy.REWRITE,
    what="Flags `transpose_`, `t_`, `squeeze_`, `unsqueeze_`, `swapdims_`, `swapaxes_` and `as_strided_` called on a "
         "parameter of the function, on an attribute chain from one or from `self` (`p.grad.data.t_()`, "
         "`self.weight.data.t_()`), or on a name holding one (`grad = p.grad.data`, a loop over `group['params']`).",
    why="An in-place view changes the shape and strides of a tensor that lives outside the graph; a graph replayed "
        "later would have to change its caller's tensor's metadata, which torch.compile does not do: it ends the "
        "graph and runs the call eagerly.",
    bad_example="grad = p.grad.data\ngrad.transpose_(0, 1)",
    good_example="grad = p.grad.data.transpose(0, 1)",
    known_problems="Read by name, in source order: a name given an input on one path and a new tensor on another "
                   "holds what the last assignment before the call gave it, and an input reached through a container "
                   "the function builds is not seen.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)

INPLACE_VIEW_METHODS = frozenset({"transpose_", "t_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_", "as_strided_"})


def check_call(call: cst.Call, ctx: CheckContext):
    """`grad.transpose_(0, 1)` with `grad` holding an input."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in INPLACE_VIEW_METHODS and _is_input(
            func.value, ctx.input_names_before):
        yield Violation(RULE.code, f".{func.attr.value}() of {dotted_name(func.value) or 'an input'}, a tensor the "
                                   "compiled function was given: torch.compile does not trace an in-place view of an "
                                   "input")


def check_statement(stmt: cst.BaseSmallStatement, ctx: CheckContext):
    """What `stmt` binds: `grad = p.grad.data` holds an input, `grad = grad.view(-1)` a new tensor."""
    ctx.input_names_before = ctx.input_names
    targets: list[cst.BaseAssignTargetExpression] = []
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, cst.AnnAssign):
        targets = [stmt.target]
    value = getattr(stmt, "value", None)
    for target in targets:
        if isinstance(target, cst.Name):
            holds_input = value is not None and _is_input(value, ctx.input_names_before)
            if holds_input != (target.value in ctx.input_names):
                if ctx.input_names is ctx.input_names_before:
                    ctx.input_names = set(ctx.input_names)  # the statement's calls still see the names before it
                (ctx.input_names.add if holds_input else ctx.input_names.discard)(target.value)
    return
    yield  # a statement check: a generator that reports nothing itself


def bind_loop_target(target: cst.BaseExpression, iterable: cst.BaseExpression, ctx: CheckContext) -> None:
    """`for p in group["params"]`: `p` holds an input when what it iterates is one."""
    ctx.input_names_before = ctx.input_names
    if isinstance(target, cst.Name):
        if _is_input(iterable, ctx.input_names):
            ctx.input_names.add(target.value)
        else:
            ctx.input_names.discard(target.value)


def _is_input(node: cst.BaseExpression, inputs: set[str]) -> bool:
    """A name holding an input, or an attribute chain or a subscript (`group["params"]`) from one or from self."""
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Subscript) and not all(
                isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.SimpleString, cst.Integer, cst.Name))
                for element in node.slice):
            return False  # `x[mask]`, `x[1:]`: a new tensor or a view, not the input itself
        node = node.value
    return isinstance(node, cst.Name) and (node.value in inputs or node.value == "self")
