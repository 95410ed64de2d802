"""Call conversion: a call of a user function in code that stays Python goes through the
function's RegionSet, which compiles the callee on its own (as torch.compile compiles a nested
frame after a graph break).

    print(helper(x))            ->      print(_carve_f.compiled(helper)(x))

Only the calls the analysis resolved to user functions (`FunctionAnalysis.user_calls`, keyed
by node identity) change; nested defs and lambdas are left alone (their calls run when they
are called, through their own compile). `headers_only` converts a compound statement's
header (`if helper(x):`), its bodies having been converted statement by statement.
"""

from __future__ import annotations

from typing import TypeVar, cast

import libcst as cst

from carve.rewriters.templates import replace_expression

N = TypeVar("N", bound=cst.CSTNode)


def convert_calls(node: N, user_calls: dict, regions_var: str, headers_only: bool = False) -> N:
    """`node` with each call in `user_calls` routed through `regions_var.compiled(...)`."""
    if not user_calls:
        return node
    converter = _CallConverter(user_calls, regions_var, headers_only)
    return cast(N, node.visit(converter))  # only calls' callees change: the node keeps its type


class _CallConverter(cst.CSTTransformer):
    def __init__(self, calls: dict, regions_var: str, headers_only: bool) -> None:
        self.calls = calls
        self.regions_var = regions_var
        self.headers_only = headers_only

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return not self.headers_only  # compound bodies were converted statement by statement

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if id(original) not in self.calls:
            return updated
        return updated.with_changes(func=replace_expression(
            "regions.compiled(function)", regions=self.regions_var, function=updated.func))
