"""A fast read-only traversal for libcst visitors, shared by the analysis, its checks and lint.

    collector = _MutatingCalls(ctx)
    stmt.visit(collector)           # libcst: rebuilds and re-validates every node it passes
    walk(stmt, collector)           # same visit_X / leave_X calls, nothing rebuilt

`CSTNode.visit` is written for transformers: it reconstructs each node from
its visited children, which makes a read-only pass about ten times slower
than reading the fields. The analysis only reads, and `carve lint` runs it
over millions of lines, so it walks the dataclass fields directly. Children
come in field order (source order for almost every node); whitespace,
comments, commas and brackets are skipped, since no check looks at them.
"""

from __future__ import annotations

import dataclasses

import libcst as cst

from carve.rewriters.names import ImportTable

# Node types that only carry formatting; a visitor never needs them.
_FORMATTING = (
    cst.BaseParenthesizableWhitespace, cst.TrailingWhitespace, cst.EmptyLine, cst.Newline, cst.Comment,
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace, cst.Comma, cst.Semicolon, cst.Colon, cst.Dot, cst.AssignEqual,
    cst.ImportStar, cst.Asynchronous,
)
_FORMATTING_FIELD_PREFIXES = (
    "whitespace", "lpar", "rpar", "lbrace", "rbrace", "lbracket", "rbracket", "comma", "semicolon",
    "leading_lines", "lines_after_decorators", "header", "footer", "trailing_whitespace", "equal",
)

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
# type -> is it a node a visitor should see; cached because libcst's node classes are ABCs,
# and isinstance on an ABC costs more than the rest of the walk.
_MEANINGFUL: dict[type, bool] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        fields = tuple(
            f.name for f in dataclasses.fields(node_type)
            if not f.name.startswith(_FORMATTING_FIELD_PREFIXES)
        )
        _CHILD_FIELDS[node_type] = fields
    return fields


def _meaningful(value_type: type) -> bool:
    meaningful = _MEANINGFUL.get(value_type)
    if meaningful is None:
        meaningful = issubclass(value_type, cst.CSTNode) and not issubclass(value_type, _FORMATTING)
        _MEANINGFUL[value_type] = meaningful
    return meaningful


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The direct child nodes of `node` that carry meaning (no formatting nodes)."""
    found: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        value_type = type(value)
        if value_type is list or value_type is tuple:
            found.extend(item for item in value if _meaningful(type(item)))
        elif _meaningful(value_type):
            found.append(value)
    return found


_HANDLERS: dict[tuple[type, type], tuple] = {}


def _handlers(visitor: cst.CSTVisitor, node_type: type):
    key = (type(visitor), node_type)
    found = _HANDLERS.get(key)
    if found is None:
        name = node_type.__name__
        found = (getattr(type(visitor), f"visit_{name}", None), getattr(type(visitor), f"leave_{name}", None))
        _HANDLERS[key] = found
    return found


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """`node.visit(visitor)` for a read-only visitor: visit_X may return False to skip children."""
    visit, leave = _handlers(visitor, type(node))
    if visit is not None and visit(visitor, node) is False:
        if leave is not None:
            leave(visitor, node)
        return
    for child in children(node):
        walk(child, visitor)
    if leave is not None:
        leave(visitor, node)


_STATEMENT_CONTAINERS = tuple(
    t for t in (
        cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler,
        getattr(cst, "ExceptStarHandler", None), cst.Finally, getattr(cst, "MatchCase", None),
    ) if t is not None
)


def statements(node: cst.CSTNode):
    """Every small statement (`x = 1`, `import os`) under `node`, nested blocks included; no expressions."""
    if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        yield from node.body
        return
    for child in children(node):
        if isinstance(child, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            yield from child.body
        elif isinstance(child, _STATEMENT_CONTAINERS):
            yield from statements(child)


def import_table(module: cst.Module) -> ImportTable:
    """`ImportTable.from_module(module)`, reading statements only (imports are never inside expressions)."""
    table = ImportTable()
    for statement in statements(module):
        if isinstance(statement, cst.Import):
            table.add_import(statement)
        elif isinstance(statement, cst.ImportFrom):
            table.add_import_from(statement)
    for line in module.body:  # module-level aliases, once every import is known
        if isinstance(line, cst.SimpleStatementLine):
            for small in line.body:
                if isinstance(small, cst.Assign):
                    table.add_module_assignment(small)
    return table
