"""The mechanical fix `carve lint --fix` offers: a data-dependent `if` that picks a value.

    if x.sum() > 0:                         y = torch.where(x.sum() > 0, x * 2, -x)
        y = x * 2                   ->
    else:
        y = -x

    if x.max() > 1:                         return torch.where(x.max() > 1, x / 2, x)
        return x / 2                ->
    else:
        return x

Offered only when each branch is one assignment to the same name (or one
`return`), the two values are tensors, nothing else in the `if` has a
finding (so evaluating both sides has no effect the original did not have)
and there are no comments to lose.

The fix is *unsafe* (ruff's term): applied by `--fix` only with
`--unsafe-fixes`. Both sides are computed, then one is selected element-wise:
the same values and one graph when both sides have the same shape and dtype
and the condition is a single value, but torch.where broadcasts and promotes
otherwise (`if x.sum() > 0: y = x * 2 else: y = torch.zeros(1)` gives shape
[1] or [3] before, always [3] after), and an error or a NaN gradient in the
branch not taken now counts. Source alone cannot prove those facts.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import cast

import libcst as cst
from libcst.helpers import parse_template_statement

from carve.rewriters.analysis import FunctionAnalysis
from carve.rewriters.rules import crv005_data_dependent_branch as data_dependent_branch
from carve.rewriters.walk import children
from carve.rewriters.tensors import TensorInference


SAFE = "safe"
UNSAFE = "unsafe"

WHERE_UNSAFE_REASON = (
    "torch.where computes both branches and broadcasts and promotes them: if they differ in shape or dtype "
    "(or the condition is not a single value) the result changes, and an error or NaN gradient in the "
    "branch not taken now counts"
)


@dataclass(frozen=True)
class Fix:
    """Replace lines `start_line`..`end_line` (1-based, inclusive, whole lines) by `replacement`.

    `applicability` is SAFE (keeps every result: `--fix` applies it) or UNSAFE (may change a
    shape, dtype or result, for the `reason` given: applied only with `--unsafe-fixes`)."""

    message: str
    start_line: int
    end_line: int
    replacement: str
    applicability: str = SAFE
    reason: str = ""

    @property
    def safe(self) -> bool:
        return self.applicability == SAFE

    def as_dict(self) -> dict:
        data = {"message": self.message, "start_line": self.start_line, "end_line": self.end_line,
                "replacement": self.replacement, "applicability": self.applicability}
        if self.reason:
            data["reason"] = self.reason
        return data


def where_fixes(analysis: FunctionAnalysis, context, tensors: TensorInference, source_lines: list[str]) -> dict[int, Fix]:
    """header line -> fix, for the `if` statements of the analysed function that can become torch.where."""
    torch_alias = next((alias for alias, full in context.imports.aliases.items() if full == "torch"), None)
    if torch_alias is None:
        return {}
    fixes: dict[int, Fix] = {}
    for statement in _if_statements(analysis.func.body):
        codes = [f.code for f in analysis.findings_of(statement)]
        if codes != [data_dependent_branch.RULE.code]:
            continue
        new_statement = _as_where(statement, torch_alias, tensors)
        if new_statement is None or any(analysis.findings_of(s) for s in _branch_statements(statement)):
            continue
        position = context.position(statement)
        if position is None:
            continue
        first, last = position.start.line, position.end.line
        line_text = source_lines[first - 1] if first - 1 < len(source_lines) else ""
        indent = line_text[: len(line_text) - len(line_text.lstrip(" \t"))]
        code = cst.Module(body=[new_statement]).code.strip("\r\n")
        fixes[first] = Fix("select with torch.where instead of branching", first, last, indent + code + "\n",
                           UNSAFE, WHERE_UNSAFE_REASON)
    return fixes


def _if_statements(block: cst.CSTNode):
    """`if` statements of a function body, nested blocks included, nested definitions not."""
    for child in children(block):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(child, cst.If):
            yield child
        if isinstance(child, (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.Finally)):
            yield from _if_statements(child)


def _branch_statements(statement: cst.If):
    yield statement.body.body[0]
    yield cast(cst.Else, statement.orelse).body.body[0]  # an if/else: `_as_where` took it


def _single_statement(block: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1:
        return None
    line = block.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    if line.leading_lines or line.trailing_whitespace.comment is not None or block.header.comment is not None:
        return None
    return line.body[0]


def _as_where(
    statement: cst.If, torch_alias: str, tensors: TensorInference
) -> cst.SimpleStatementLine | cst.BaseCompoundStatement | None:
    if not isinstance(statement.orelse, cst.Else) or statement.orelse.leading_lines:
        return None
    then_small = _single_statement(statement.body)
    else_small = _single_statement(statement.orelse.body)
    if then_small is None or else_small is None:
        return None
    template_values = {"torch": cst.Name(torch_alias), "cond": statement.test}
    then_value: cst.BaseExpression | None
    else_value: cst.BaseExpression | None
    if isinstance(then_small, cst.Assign) and isinstance(else_small, cst.Assign):
        if len(then_small.targets) != 1 or len(else_small.targets) != 1:
            return None
        target, other_target = then_small.targets[0].target, else_small.targets[0].target
        if not (isinstance(target, cst.Name) and isinstance(other_target, cst.Name) and target.value == other_target.value):
            return None
        then_value, else_value = then_small.value, else_small.value
        template = "{target} = {torch}.where({cond}, {then_value}, {else_value})"
        template_values["target"] = target
    elif isinstance(then_small, cst.Return) and isinstance(else_small, cst.Return):
        then_value, else_value = then_small.value, else_small.value
        if then_value is None or else_value is None:
            return None
        template = "return {torch}.where({cond}, {then_value}, {else_value})"
    else:
        return None
    if not (tensors.is_tensor(then_value) and tensors.is_tensor(else_value)):
        return None
    template_values.update(then_value=then_value, else_value=else_value)
    # The keys name the template's fields: never the `config` parameter mypy fears the dict could fill.
    return parse_template_statement(template, **template_values)  # type: ignore[arg-type]


def apply_fixes(source: str, fixes: list[Fix]) -> str:
    """`source` with the fixes applied, bottom-up so line numbers stay valid; overlapping fixes are skipped."""
    lines = source_lines(source)
    applied_from = len(lines) + 1
    for fix in sorted(fixes, key=lambda f: f.start_line, reverse=True):
        if fix.end_line >= applied_from:
            continue
        replacement = fix.replacement
        last_line = lines[fix.end_line - 1] if fix.end_line - 1 < len(lines) else "\n"
        newline = "\r\n" if last_line.endswith("\r\n") else "\n"
        if not last_line.endswith(("\n", "\r")):
            replacement = replacement.rstrip("\n")
        else:
            replacement = replacement.replace("\n", newline)
        lines[fix.start_line - 1: fix.end_line] = [replacement]
        applied_from = fix.start_line
    return "".join(lines)


def source_lines(source: str) -> list[str]:
    """Lines with their endings, split where Python splits them (not at form feeds)."""
    return io.StringIO(source, newline="").readlines()
