"""CRV037: an assignment to a tensor's `requires_grad` attribute.

    y = x * 2
    layer.weight.requires_grad = False      # CRV037: "setattr() on Tensor.requires_grad"
    layer.weight.requires_grad_(False)      # not flagged: the in-place method is traced

`check_statement` looks at each assignment (plain or augmented) whose target is an attribute named
`requires_grad`. Only tensors (and parameters) have such an attribute that code sets: a module has
the method `requires_grad_()`, not the attribute. The analysis runs it on every small statement
(rewriters/rules/__init__.py, `STATEMENT_CHECKS`).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV037", "requires-grad-assignment", "assignment to a tensor's requires_grad",
    "Dynamo does not trace setting a tensor's `requires_grad` attribute (\"setattr() on Tensor.requires_grad\"): "
    "the graph breaks at the assignment, whether the tensor is an input, a parameter or made in the function.",
    "Freeze or unfreeze parameters outside compiled code, or call the in-place method `t.requires_grad_(flag)`, "
    "which Dynamo traces.",
    Strategy.DONT_COMPILE,
    what="Flags `x.requires_grad = value` (and augmented assignments to it) on any receiver.",
    why="Changing whether a tensor requires grad changes what autograd records for every later use of it; "
        "Dynamo replays that only through `requires_grad_()`, and breaks the graph at the attribute assignment "
        "(checked with torch._dynamo.explain on torch 2.13: an input, a parameter and a local tensor alike).",
    bad_example="def reset_parameters(self):\n    self.weight.data = dct(torch.eye(self.N)).t()\n"
                "    self.weight.requires_grad = False",
    good_example="def reset_parameters(self):\n    self.weight.data = dct(torch.eye(self.N)).t()\n"
                 "    self.weight.requires_grad_(False)",
    known_problems="The receiver's type is not checked: an object of the user's own with a `requires_grad` "
                   "attribute would be a false positive (none seen in the corpora).",
    fix_safety="No automatic fix (the method form is equivalent for a leaf tensor; for a non-leaf it raises as the "
               "attribute does). The compiler runs the statement eagerly between two graphs.",
)


def _targets(stmt: cst.BaseSmallStatement) -> list[cst.BaseExpression]:
    if isinstance(stmt, cst.Assign):
        return [t.target for t in stmt.targets]
    if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        return [stmt.target]
    return []


def check_statement(stmt: cst.BaseSmallStatement, ctx: CheckContext):
    """`t.requires_grad = False`: a `requires_grad` attribute as an assignment's target."""
    for target in _targets(stmt):
        if isinstance(target, cst.Attribute) and target.attr.value == "requires_grad":
            yield Violation(RULE.code, f"{ctx.dotted(target) or 'requires_grad'} = ...: torch.compile does not trace "
                                       "setting a tensor's requires_grad attribute")
