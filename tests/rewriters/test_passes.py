"""The small passes on their own (rewriters/passes.py lists them all): call conversion and
checkpoints, from source, without torch."""

from __future__ import annotations

import libcst as cst

from carve.rewriters.call_conversion import convert_calls
from carve.rewriters.checkpoints import checkpoint, eager_comment
from carve.rewriters.findings import Finding


def code(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node).strip()


class Calls(cst.CSTVisitor):
    def __init__(self, name: str) -> None:
        self.name, self.found = name, {}

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == self.name:
            self.found[id(node)] = node


def user_calls(statement: cst.CSTNode, name: str = "helper") -> dict:
    calls = Calls(name)
    statement.visit(calls)
    return calls.found


def test_a_user_call_in_python_code_compiles_the_callee():
    statement = cst.parse_statement("print(helper(x), other(x))")
    converted = convert_calls(statement, user_calls(statement), "_carve_f")
    assert code(converted) == "print(_carve_f.compiled(helper)(x), other(x))"


def test_calls_inside_a_lambda_or_a_nested_def_are_left_to_their_own_compile():
    statement = cst.parse_statement("ys = map(lambda v: helper(v), xs)")
    assert code(convert_calls(statement, user_calls(statement), "_carve_f")) == "ys = map(lambda v: helper(v), xs)"


def test_headers_only_converts_a_compound_header_not_its_body():
    statement = cst.parse_statement("if helper(x):\n    y = helper(x)\n")
    converted = convert_calls(statement, user_calls(statement), "_carve_f", headers_only=True)
    assert code(converted) == "if _carve_f.compiled(helper)(x):\n    y = helper(x)"


def test_no_user_calls_leaves_the_node_itself():
    statement = cst.parse_statement("print(x)")
    assert convert_calls(statement, {}, "_carve_f") is statement


def test_a_checkpoint_names_the_line_and_rule_and_the_comment_says_why():
    finding = Finding("CRV003", "print() performs   I/O\n(twice)", line=12)
    assert code(checkpoint(finding, "_carve_f", line=99)) == '_carve_f.graph_break(12, "CRV003")'
    assert code(checkpoint(Finding("CRV003", "m", line=0), "_carve_f", line=7)) == '_carve_f.graph_break(7, "CRV003")'
    comment = eager_comment(finding).comment
    assert comment is not None and comment.value.startswith("# carve: eager, CRV003 ")
    assert comment.value.endswith(": print() performs I/O (twice)")
