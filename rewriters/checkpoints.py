"""Checkpoints: how a statement that stays Python is marked in the generated code.

    print(z)        ->      # carve: eager, CRV003 I/O or logging: print() performs I/O
                            _carve_f.graph_break(4, "CRV003")
                            print(z)

The comment says why the statement runs eagerly (in `carve rewrite`'s files too). The
`graph_break` call, emitted only for findings that break a graph (a rule on by default),
reports the break once at run time and raises `GraphBreakError` under fullgraph or
error_on_graph_break, naming the user's line.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.findings import Finding
from carve.rewriters.rules import rule
from carve.rewriters.templates import MarkOrigin, replace_statement


def eager_comment(finding: Finding) -> cst.EmptyLine:
    """`# carve: eager, CRV003 I/O or logging: print() performs I/O`"""
    text = f"# carve: eager, {finding.code} {rule(finding.code).title}: {_one_line(finding.message)}"
    return cst.EmptyLine(comment=cst.Comment(text))


def checkpoint(finding: Finding, regions_var: str, line: int, origin: MarkOrigin | None = None) -> cst.BaseStatement:
    """`_carve_f.graph_break(<the finding's line, else line>, "<code>")`; `origin`: as in `templates.replace`."""
    return replace_statement(
        "regions.graph_break(line, code)",
        regions=regions_var, line=finding.line or line, code=cst.SimpleString(f'"{finding.code}"'), origin=origin,
    )


def _one_line(text: str) -> str:
    return " ".join(text.split())
