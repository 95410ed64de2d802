"""CRV032: a tensor's `.grad` used after an augmented assignment updated the tensor in place.

    with torch.no_grad():
        for p in params:
            p -= lr * p.grad            # an in-place update of p through the name
            p.grad.zero_()              # CRV032: Dynamo loses p.grad here and skips the frame
    p.sub_(lr * p.grad); p.grad.zero_()          # not flagged: a method, traced
    p.data -= lr * p.grad; p.grad.zero_()        # not flagged: through .data, traced
    p -= lr * p.grad; p.grad = None              # not flagged: a store to .grad is traced

After `p -= ...` (or `+=`, `*=`, ...) on a tensor, Dynamo 2.13 no longer finds the tensor's
`grad` attribute ("raised exception AttributeError('zero_')" / ObservedAttributeError): it gives up
on the whole frame, which runs eagerly (`WON'T CONVERT`). The from-scratch SGD step of many
tutorials is written exactly so.

`check_statement` runs on each small statement in source order (rewriters/rules/__init__.py,
`STATEMENT_CHECKS`); the names updated so far are kept on the function's CheckContext
(`updated_in_place`), and a new binding of the name (`p = ...`, a loop over it) forgets it.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation
from carve.rewriters.scopes import OwnScopeVisitor

RULE = Rule(
    "CRV032", "grad-after-inplace-update", "a tensor's .grad used after an augmented assignment to it",
    "After `p -= ...` updates a tensor in place through its name, torch.compile 2.13 loses the tensor's `.grad` "
    "(an AttributeError inside Dynamo) and skips the whole function.",
    "Update through a method (`p.sub_(lr * p.grad)`) or through `.data` (`p.data -= lr * p.grad`), or use a "
    "torch.optim optimizer.",
    Strategy.REWRITE, skips_frame=True,
    what="Flags a use of `p.grad` (a method call on it, arithmetic with it) after an augmented assignment "
         "`p -= ...`, `p += ...`, `p *= ...` to the same name earlier in the function.",
    why="An augmented assignment to a tensor is an in-place operation that rebinds the name to its result; "
        "Dynamo 2.13's record of the updated tensor no longer answers `.grad`, so tracing fails and Dynamo runs the "
        "function eagerly, every graph of it lost.",
    bad_example="with torch.no_grad():\n    for p in params:\n        p -= lr * p.grad\n        p.grad.zero_()",
    good_example="with torch.no_grad():\n    for p in params:\n        p.sub_(lr * p.grad)\n        p.grad.zero_()",
    known_problems="Read by name, in source order: an update in a branch not taken is taken, and the same "
                   "tensor reached under another name is not seen. Returning `p.grad` as it is works and is not "
                   "flagged.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)


def check_statement(stmt: cst.BaseSmallStatement, ctx: CheckContext):
    """`p.grad.zero_()` after `p -= lr * p.grad`: a `.grad` of a name updated in place before."""
    updated = ctx.updated_in_place
    if updated and not _returns_grad_as_it_is(stmt):
        reads = _GradReads(updated)
        for part in _read_parts(stmt):
            part.visit(reads)
        for name in sorted(reads.found):
            yield Violation(RULE.code, f"{name}.grad after an augmented assignment to {name}: torch.compile loses the "
                                       "tensor's .grad there and skips the function")
    if isinstance(stmt, cst.AugAssign) and isinstance(stmt.target, cst.Name):
        updated.add(stmt.target.value)
    elif isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        for target in targets:
            if isinstance(target, cst.Name):
                updated.discard(target.value)


def forget_loop_target(target: cst.BaseExpression, iterable: cst.BaseExpression, ctx: CheckContext) -> None:
    """`for p in params:` binds `p` anew (the analysis calls it at each `for` header)."""
    if isinstance(target, cst.Name):
        ctx.updated_in_place.discard(target.value)


def _read_parts(stmt: cst.BaseSmallStatement) -> list[cst.CSTNode]:
    """What `stmt` reads: all of it, but for the `p.grad` an assignment stores to (`p.grad = None`
    after `p -= lr * p.grad` is traced: only a read of the lost attribute fails)."""
    if isinstance(stmt, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target]
        kept: list[cst.CSTNode] = [t for t in targets if not _is_grad_of_a_name(t)]
        return kept + ([stmt.value] if stmt.value is not None else [])
    return [stmt]


def _is_grad_of_a_name(node: cst.CSTNode) -> bool:
    return isinstance(node, cst.Attribute) and node.attr.value == "grad" and isinstance(node.value, cst.Name)


def _returns_grad_as_it_is(stmt: cst.BaseSmallStatement) -> bool:
    return isinstance(stmt, cst.Return) and isinstance(stmt.value, cst.Attribute) and stmt.value.attr.value == "grad"


class _GradReads(OwnScopeVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.found: set[str] = set()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value == "grad" and isinstance(node.value, cst.Name) and node.value.value in self.names:
            self.found.add(node.value.value)
