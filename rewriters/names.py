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
    """Local alias -> fully qualified name, from the import statements of a module, and from its
    module-level assignments of an imported name (`nn_Module = nn.Module`: `nn_Module` is
    `torch.nn.Module`). A name bound to the module itself (`d2l = sys.modules[__name__]`, in
    `self_aliases`) is a second spelling of the module's own names: `d2l.accuracy` is `accuracy`."""

    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}
        self.self_aliases: set[str] = set()

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
        if node.relative or node.module is None:
            return
        base = _module_name(node.module)
        if isinstance(node.names, cst.ImportStar):
            # `from random import *`: the public names of a standard-library module the rules know
            for name in star_names(base):
                self.aliases.setdefault(name, f"{base}.{name}")
            return
        for alias in node.names:
            name = _module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.aliases[local] = f"{base}.{name}"

    def add_module_assignment(self, node: cst.Assign) -> None:
        """`nn_Module = nn.Module` (an imported name under another name), `d2l = sys.modules[__name__]`
        (the module itself), at module level."""
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        name = node.targets[0].target.value
        if is_module_itself(node.value, self):
            self.self_aliases.add(name)
            return
        dotted = dotted_name(node.value)
        if dotted and "." in dotted and dotted.split(".", 1)[0] in self.aliases and name not in self.aliases:
            self.aliases[name] = self.qualify(dotted) or dotted

    def local_name(self, dotted: str | None) -> str | None:
        """`accuracy` for `d2l.accuracy` when `d2l` is the module itself; `dotted` otherwise."""
        if not dotted or not self.self_aliases:
            return dotted
        head, _, rest = dotted.partition(".")
        return self.local_name(rest) if head in self.self_aliases and rest else dotted

    def qualify(self, dotted: str | None) -> str | None:
        """Replace the head of `dotted` by what it was imported as; unknown heads stay as they are."""
        dotted = self.local_name(dotted)
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


# Standard-library modules whose star imports are resolved (`from random import *` then `shuffle(xs)` is
# random.shuffle): those whose functions the rules name. Their public names are read from the module's
# `__all__` (importing these modules has no effect beyond defining them).
STAR_IMPORTED_MODULES = frozenset({"random", "math", "time", "copy", "re"})
_STAR_NAMES: dict[str, tuple[str, ...]] = {}


def star_names(module: str) -> tuple[str, ...]:
    """The names `from module import *` binds, for the modules of STAR_IMPORTED_MODULES; () for others."""
    if module not in STAR_IMPORTED_MODULES:
        return ()
    if module not in _STAR_NAMES:
        import importlib

        imported = importlib.import_module(module)
        _STAR_NAMES[module] = tuple(getattr(imported, "__all__", None) or (
            name for name in vars(imported) if not name.startswith("_")))
    return _STAR_NAMES[module]


def is_module_itself(node: cst.BaseExpression, imports: ImportTable | None = None) -> bool:
    """`sys.modules[__name__]`: the module object of the module being defined."""
    if not (isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)):
        return False
    index = node.slice[0].slice.value
    modules = dotted_name(node.value)
    return ((imports.qualify(modules) if imports is not None else modules) == "sys.modules"
            and isinstance(index, cst.Name) and index.value == "__name__")


def module_self_aliases(module: cst.Module) -> set[str]:
    """The module-level names bound to the module itself (`d2l = sys.modules[__name__]`)."""
    found = set()
    for line in module.body:
        if isinstance(line, cst.SimpleStatementLine):
            for small in line.body:
                if (isinstance(small, cst.Assign) and len(small.targets) == 1
                        and isinstance(small.targets[0].target, cst.Name) and is_module_itself(small.value)):
                    found.add(small.targets[0].target.value)
    return found


def integer_value(node: cst.CSTNode) -> int | None:
    """The value of an integer literal, negative ones included (`3`, `-1`); None for anything else."""
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None
