"""CRV005: control flow on a tensor's value.

    y = x * 2 if x.sum() > 0 else x * 3          # CRV005: Python must read the tensor to choose
    y = x * 2 if x.shape[0] > 2 else x * 3       # not flagged: a shape is known when tracing
    assert not torch.isnan(loss)                 # CRV005: `not` (or `and`/`or`) of a tensor in an assert
    assert (t > 0).all(), f"{name} not positive" # CRV005: a tensor assert with a message Python must build
    assert torch.isfinite(loss).all()            # not flagged: Dynamo turns a tensor assert into an op
    assert torch.isfinite(loss).all(), "nan"     # not flagged: the same, with a constant message

selects element-wise instead, in one graph:

    y = torch.where(x.sum() > 0, x * 2, x * 3)

`check_conditional` checks conditional expressions, `check_condition` the header of an
`if`/`elif` or `while` statement (the analysis, rewriters/analysis.py, records that finding on
the statement, whose header it is), `check_assert` an `assert` (a statement check).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV005", "data-dependent-branch", "control flow on a tensor's value",
    "An `if`/`while` (or `and`/`or`/conditional expression) whose condition depends on a tensor's data "
    "cannot be decided when the graph is built.",
    "Compute both sides and select with torch.where, or use torch.cond for larger branches.",
    Strategy.REWRITE,
    hoistable=True,
    what="Flags `if`, `elif` and `while` conditions and conditional expressions (`a if cond else b`) whose "
         "value depends on a tensor's data (`x.sum() > 0`), not on its shape, dtype or device; and an `assert` "
         "of `not`, `and` or `or` of such values, or of such a value with a message that is not a string literal "
         "(`assert (t > 0).all(), f\"{name} must be positive\"`): torch.compile traces `assert t` and "
         "`assert t, \"message\"` itself, but not `not t` nor a message built at run time.",
    why="The branch taken is decided by Python from a value computed in the graph: the graph has to end at "
        "the condition and hand the value to Python, and each branch becomes a graph of its own.",
    bad_example="if x.sum() > 0:\n    y = x * 2\nelse:\n    y = -x",
    good_example="y = torch.where(x.sum() > 0, x * 2, -x)",
    known_problems="Whether the condition reads tensor data is inferred from the source: a condition on the "
                   "result of a function the analysis cannot read is missed.",
    fix_safety="`carve lint --fix --unsafe-fixes` rewrites an `if` whose two branches assign the same name "
               "(or return) into one `torch.where`: unsafe, since both sides are then computed and torch.where "
               "broadcasts and promotes them. The compiler keeps the `if` in Python and computes its condition "
               "in the graph before it.",
)


def check_conditional(node: cst.IfExp, ctx: CheckContext):
    if ctx.tensors.reads_value(node.test):
        yield Violation(RULE.code, "conditional expression (`a if cond else b`) depends on a tensor's value")


def check_condition(test: cst.BaseExpression, keyword: str, ctx: CheckContext):
    """The condition of an `if`, `elif` or `while` header (`keyword`); the analysis records the
    finding on the whole statement, whose header it is."""
    if ctx.tensors.reads_value(test):
        yield Violation(RULE.code, f"`{keyword}` condition depends on a tensor's value")


def check_assert(stmt: cst.BaseSmallStatement, ctx: CheckContext):
    """`assert not torch.isnan(loss)`, `assert a.all() and b.all()`: Dynamo 2.13 turns `assert t` of a tensor
    into a graph operation, but a `not`, `and` or `or` of tensors must be decided in Python ("generic_jump").
    It recognises the assert by its bytecode, a message being one constant (`LOAD_CONST`): with a message
    built at run time (`f"{name} ..."`, `"...".format(name)`, a name) the tensor is a plain jump too."""
    if not isinstance(stmt, cst.Assert):
        return
    test = stmt.test
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and ctx.tensors.reads_value(
            test.expression) or isinstance(test, cst.BooleanOperation) and ctx.tensors.reads_value(test):
        yield Violation(RULE.code, "`assert` condition (`not`, `and` or `or` of a tensor) depends on a tensor's value")
    elif stmt.msg is not None and not _is_constant_message(stmt.msg) and ctx.tensors.is_tensor(test):
        yield Violation(RULE.code, "`assert` of a tensor with a message built at run time depends on the tensor's "
                                   "value (torch.compile traces it only with a string literal or no message)")


def _is_constant_message(message: cst.BaseExpression) -> bool:
    """A message Python compiles to one constant (`LOAD_CONST`): a string literal (implicitly concatenated
    or not), an f-string without placeholders, a number. A name, even of a module-level string, is loaded
    at run time (`LOAD_GLOBAL`): Dynamo then breaks."""
    if isinstance(message, (cst.SimpleString, cst.Integer, cst.Float)):
        return True
    if isinstance(message, cst.ConcatenatedString):
        return _is_constant_message(message.left) and _is_constant_message(message.right)
    if isinstance(message, cst.FormattedString):
        return not any(isinstance(part, cst.FormattedStringExpression) for part in message.parts)
    return False
