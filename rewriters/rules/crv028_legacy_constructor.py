"""CRV028: a legacy tensor constructor given one value that may be a shape.

    x_real = torch.Tensor(x_gen.shape)      # CRV028: eager makes a tensor of that shape;
    buf = torch.FloatTensor(sizes)          # Dynamo 2.13 makes one holding the shape's numbers
    t = torch.Tensor(3, 4)                  # not flagged: sizes as numbers
    t = torch.Tensor([1.0, 2.0])            # not flagged: data as a literal

`check_call` flags `torch.Tensor(...)` and the typed legacy constructors (`torch.FloatTensor`,
`torch.LongTensor`, ...) called with exactly one positional argument that is neither a number
nor a list or tuple literal: eager reads a `torch.Size` there as a shape and anything else as
data, and torch 2.13's Dynamo reads both as data, a silent wrong value. carve keeps the
statement as Python, where eager's reading holds.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV028", "legacy-constructor", "legacy tensor constructor given a value that may be a shape",
    "`torch.Tensor(size)` with a `torch.Size` makes an uninitialised tensor of that shape in eager mode; torch "
    "2.13's Dynamo traces it as `torch.tensor(list(size))`, a tensor holding the shape's numbers: a wrong value "
    "with no error. carve runs the statement as Python.",
    "Use `torch.empty(size)` (or `torch.zeros(size)`) for a tensor of a shape and `torch.tensor(data)` for data.",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
    what="Flags `torch.Tensor`, `torch.FloatTensor`, `torch.DoubleTensor`, `torch.LongTensor` and the other "
         "typed legacy constructors called with one positional argument that is not a number or a list or "
         "tuple literal.",
    why="The legacy constructors decide at run time whether their argument is a shape or data; Dynamo decides "
        "by the argument's Python type and takes a `torch.Size` for data, so torch.compile silently computes "
        "another tensor (torch 2.13). Run as Python, the statement gives eager's tensor.",
    bad_example="x_real = torch.Tensor(x_gen.shape).to(device)",
    good_example="x_real = torch.empty(x_gen.shape, device=device)",
    known_problems="The argument's type is not known statically: a name holding a list of data is flagged "
                   "too (it then runs as Python, which is correct, one graph split).",
    fix_safety="No automatic fix (off by default in `carve lint`). The compiler runs the statement as Python "
               "between two graphs.",
)

LEGACY_CONSTRUCTORS = frozenset({
    "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor",
    "torch.LongTensor", "torch.IntTensor", "torch.ShortTensor", "torch.CharTensor", "torch.ByteTensor",
    "torch.BoolTensor",
})


def check_call(call: cst.Call, ctx: CheckContext):
    if ctx.qualified(call.func) not in LEGACY_CONSTRUCTORS:
        return
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if len(positional) != 1 or len(call.args) != 1:
        return
    value = positional[0].value
    if isinstance(value, (cst.List, cst.Tuple, cst.ListComp, cst.Integer, cst.Float, cst.UnaryOperation)):
        return
    yield Violation(RULE.code, f"{ctx.dotted(call.func)}() of one value that may be a torch.Size: Dynamo "
                               "reads it as data, eager as a shape")
