"""CRV029: an assignment to a tensor's `.data` that changes its dtype.

    l.weight.data = l.weight.data.half()             # CRV029: float32 -> float16
    t.data = t.data.to(torch.bfloat16)               # CRV029
    l.weight.data = l.weight.data * 2                # not flagged: same dtype (Dynamo traces it)
    l.weight.data = l.weight.data.float()            # not flagged: float32 is the default dtype

`check_statement` looks at each assignment whose target is an attribute `.data` and whose value
converts a tensor to another dtype: `.half()`, `.bfloat16()`, `.double()`, `.long()`, `.int()`,
... or `.to(...)` / `.type(...)` given a torch dtype other than float32. The analysis runs it on
every small statement (rewriters/rules/__init__.py, `STATEMENT_CHECKS`).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV029", "data-dtype-change", "assignment to .data that changes the tensor's dtype",
    "Dynamo traces `t.data = value` only when value keeps t's dtype (\"Failed to mutate tensor data attribute "
    "to different dtype\"): a conversion such as `.half()` assigned to `.data` breaks the graph.",
    "Convert the module outside compiled code (`model.half()`, `model.to(torch.bfloat16)` before "
    "torch.compile), or assign the converted tensor to a new name instead of `.data`.",
    Strategy.DONT_COMPILE,
    what="Flags `x.data = ...` whose value is a dtype conversion: `.half()`, `.bfloat16()`, `.double()`, the "
         "integer and bool conversions, and `.to(dtype)` / `.type(dtype)` with a torch dtype other than float32.",
    why="Assigning `.data` swaps the tensor's storage under autograd. Dynamo can replay that in a graph only when "
        "the fake tensor keeps its metadata; a new dtype would change what every later operation on the tensor "
        "traces to, so it stops the graph there (torch 2.13). Inside `model.apply(fn)` the break is in `fn`, "
        "called once per submodule.",
    bad_example="def to_fp16(layer):\n    layer.weight.data = layer.weight.data.half()\n\nmodel.apply(to_fp16)",
    good_example="model.half()  # before torch.compile, outside compiled code",
    known_problems="The dtype before the conversion is not known from the source: `.float()` and "
                   "`.to(torch.float32)` are taken as keeping the default float32 (missed when they convert half "
                   "tensors back), and `.half()` of a tensor that is already float16 is flagged.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)

CONVERTING_METHODS = frozenset({"half", "bfloat16", "double", "long", "int", "short", "char", "byte", "bool"})
DTYPE_ARGUMENT_METHODS = frozenset({"to", "type"})
SAME_DTYPES = frozenset({"torch.float32", "torch.float"})


def check_statement(stmt: cst.BaseSmallStatement, ctx: CheckContext):
    """`x.data = x.data.half()`: a `.data` target given a dtype conversion."""
    if not isinstance(stmt, cst.Assign):
        return
    if not any(isinstance(t.target, cst.Attribute) and t.target.attr.value == "data" for t in stmt.targets):
        return
    dtype = _converted_to(stmt.value, ctx)
    if dtype is not None:
        target = next(t.target for t in stmt.targets if isinstance(t.target, cst.Attribute))
        yield Violation(RULE.code, f"{ctx.dotted(target) or '.data'} = a {dtype} conversion: torch.compile does not "
                                   "trace a change of a tensor's dtype through .data")


def _converted_to(value: cst.BaseExpression, ctx: CheckContext) -> str | None:
    """`half` for `x.half()`, `torch.bfloat16` for `x.to(torch.bfloat16)`; None for anything else."""
    if not isinstance(value, cst.Call) or method_name(value) is None:
        return None
    method = method_name(value)
    if method in CONVERTING_METHODS and not value.args:
        return method
    if method in DTYPE_ARGUMENT_METHODS:
        for arg in value.args:
            if arg.keyword is not None and arg.keyword.value != "dtype":
                continue
            dtype = ctx.qualified(arg.value) or ""
            if dtype.startswith("torch.") and dtype not in SAME_DTYPES and _is_dtype(dtype):
                return dtype
    return None


def _is_dtype(qualified: str) -> bool:
    """`torch.float16`, `torch.half`, `torch.int64`, `torch.bool`: a torch dtype by its name."""
    name = qualified[len("torch."):]
    return name in ("half", "double", "long", "int", "short", "bool", "cfloat", "cdouble") or name.startswith(
        ("float", "bfloat", "int", "uint", "complex"))
