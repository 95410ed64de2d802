"""Dotted names of expressions, resolved through the module's imports.

    import torch._dynamo as dynamo        dynamo.graph_break()   -> "torch._dynamo.graph_break"
    from carve import graph_break as gb   gb()                   -> "carve.graph_break"
    import numpy as np                    np.exp(x)              -> "numpy.exp"

A hand-rolled import table instead of libcst's QualifiedNameProvider: the
linter resolves every call of a million-line tree, and scope analysis of
whole modules is the slowest part of libcst; module-level imports are all
the resolution the rules need.
"""

from __future__ import annotations

import libcst as cst


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for Name/Attribute chains, None for anything else (calls, subscripts...)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def _module_name(node: cst.BaseExpression) -> str:
    return dotted_name(node) or ""


class ImportTable:
    """Local alias -> fully qualified name, from the import statements of a module."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}

    @classmethod
    def from_module(cls, module: cst.Module) -> "ImportTable":
        table = cls()
        collector = _ImportCollector(table)
        module.visit(collector)
        return table

    def add_import(self, node: cst.Import) -> None:
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.aliases[alias.asname.name.value] = full
            else:
                head = full.split(".")[0]
                self.aliases.setdefault(head, head)

    def add_import_from(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
            return
        base = _module_name(node.module)
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    def qualify(self, dotted: str | None) -> str | None:
        """Replace the head of `dotted` by what it was imported as; unknown heads stay as they are."""
        if not dotted:
            return dotted
        head, _, rest = dotted.partition(".")
        full = self.aliases.get(head)
        if full is None:
            return dotted
        return f"{full}.{rest}" if rest else full

    def resolve(self, node: cst.BaseExpression) -> str | None:
        return self.qualify(dotted_name(node))


class _ImportCollector(cst.CSTVisitor):
    """Imports anywhere in the module (function-local imports included: names rarely clash)."""

    def __init__(self, table: ImportTable) -> None:
        self.table = table

    def visit_Import(self, node: cst.Import) -> None:
        self.table.add_import(node)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.table.add_import_from(node)


def integer_value(node: cst.CSTNode) -> int | None:
    """The value of an integer literal, negative ones included (`3`, `-1`); None for anything else."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None
