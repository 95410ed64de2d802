"""Templates: generated code written as the Python text it becomes, as AutoGraph's `templates.replace`.

    replace_statement(
        "@regions.graph(first, last)\\n"          ->      @_carve_f.graph(2, 3)
        "def name(params):\\n"                             def _f_graph_region_0(x):
        "    body",                                            y = x * 2       # the user's nodes,
        regions="_carve_f", first=2, last=3,                   return y        # not copies
        name="_f_graph_region_0", params=["x"], body=[line, ret],
        origin=glue,    # called with each statement the template made: here the def
    )

A placeholder is a plain identifier of the template; each keyword names one
and gives what takes its place:

- a string is a name (`regions="_carve_f"`), an int a number (`first=2`);
- a libcst expression goes where the placeholder stands as an expression, a
  statement (or a list of statements) where it stands as a statement of its
  own (`body`);
- a list goes where the placeholder is a parameter (`def name(params):`, of
  names or `cst.Param`s), an argument (`name(args)`, of names, expressions or
  `cst.Arg`s) or a statement (`body`); as the whole value of a `return` or
  the whole target or value of an assignment it is the tuple of its items
  (`return outputs` -> `return a, b`, and `return a` for one item).

Attribute names (`x.graph`), keywords of calls (`f(k=v)`) and imported names
are never placeholders.

Nodes are inserted as they are, never copied (libcst's `parse_template_*`
deep-clone them): a node keeps its identity, so what the outliner recorded
about it (its origin in the line table, keyed by identity) still holds. A
node replacing a placeholder that occurs twice is inserted at its first place
and copied for the others (one node never stands at two places of a tree;
a copy counts as made by the template).

`origin`, when given, is called with each statement the template itself
made (not with the inserted ones, which keep their own origins); statements
are what own lines in the line table and in the outline's invariants. The
result is a statement list; `replace_statement` and `replace_expression`
are its one-statement and one-expression forms. A keyword that names no
placeholder of the template, or a replacement of a kind its place cannot
take, raises `TemplateError`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any

import libcst as cst

__all__ = [
    "BodyStatement", "MarkOrigin", "Replacement", "TemplateError", "replace", "replace_expression", "replace_statement",
]

Replacement = str | int | cst.CSTNode | Sequence[str | cst.CSTNode]
# `origin=`: called with each statement a template made, to record what lines it stands for.
MarkOrigin = Callable[[cst.BaseStatement], object]
# What a module's or a block's body holds: a line of small statements or a compound statement (a def, an if, ...).
BodyStatement = cst.SimpleStatementLine | cst.BaseCompoundStatement


class TemplateError(ValueError):
    """A template and its replacements do not fit together (a bug in the code that fills it)."""


def replace(template: str, *, origin: MarkOrigin | None = None, **replacements: Replacement) -> list[BodyStatement]:
    """The statements of `template` with its placeholders replaced (see the module docstring)."""
    try:
        module = cst.parse_module(textwrap.dedent(template))
    except cst.ParserSyntaxError as error:
        raise TemplateError(f"template is not Python: {error.message}\n{template}") from None
    filler = _Filler(template, replacements)
    statements: list[BodyStatement] = list(module.visit(filler).body)
    filler.check_all_used()
    if origin is not None:
        marker = _MarkMade(filler.inserted, origin)
        for statement in statements:
            statement.visit(marker)
    return statements


def replace_statement(template: str, *, origin: MarkOrigin | None = None, **replacements: Replacement) -> BodyStatement:
    """`replace` for a template that makes one statement."""
    statements = replace(template, origin=origin, **replacements)
    if len(statements) != 1:
        raise TemplateError(f"template makes {len(statements)} statements, not one:\n{template}")
    return statements[0]


def replace_expression(template: str, **replacements: Replacement) -> cst.BaseExpression:
    """The expression `template` with its placeholders replaced."""
    try:
        expression = cst.parse_expression(template)
    except cst.ParserSyntaxError as error:
        raise TemplateError(f"template is not a Python expression: {error.message}\n{template}") from None
    filler = _Filler(template, replacements)
    filled = expression.visit(filler)
    filler.check_all_used()
    assert isinstance(filled, cst.BaseExpression)  # a placeholder at the root takes an expression, nothing else
    return filled


class _Filler(cst.CSTTransformer):
    """Replaces placeholders bottom-up. A place that takes a whole node or list (a statement, a
    parameter, an argument) is filled as a whole: `on_visit` does not enter it."""

    def __init__(self, template: str, replacements: dict[str, Replacement]) -> None:
        self.template = template
        self.replacements = replacements
        self.used: set[str] = set()
        self.inserted: set[int] = set()    # ids of the nodes placed as they are
        self.fixed: set[int] = set()       # Names that are never placeholders (x.attr, f(k=v))
        self.names_only: set[int] = set()  # Names where only a name can go (def name, params, `as name`)
        self.tuples: set[int] = set()      # Names where a list is a tuple (return / assignment)

    def check_all_used(self) -> None:
        unused = sorted(set(self.replacements) - self.used)
        if unused:
            raise TemplateError(f"no placeholder {', '.join(unused)} in template:\n{self.template}")

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Attribute):
            self.fixed.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            self.fixed.add(id(node.keyword))
        elif isinstance(node, cst.ImportAlias):
            self.fixed.update(id(n) for n in _names_in(node.name))
        elif isinstance(node, cst.ImportFrom) and node.module is not None:
            self.fixed.update(id(n) for n in _names_in(node.module))
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Param)):
            self.names_only.add(id(node.name))
        elif isinstance(node, cst.AsName) and isinstance(node.name, cst.Name):
            self.names_only.add(id(node.name))
        elif isinstance(node, cst.Return) and node.value is not None:
            self.tuples.add(id(node.value))
        elif isinstance(node, cst.Assign):
            self.tuples.add(id(node.value))
        elif isinstance(node, cst.AssignTarget):
            self.tuples.add(id(node.target))
        return self._whole_place(node) is None

    def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> Any:
        place = self._whole_place(original)
        if place is not None:
            return self._fill_whole(original, place)
        if isinstance(original, cst.Name) and id(original) not in self.fixed:
            name = self._placeholder(original)
            if name is not None:
                if id(original) in self.names_only:
                    return self._name(name)
                return self._expression(name, tuple_allowed=id(original) in self.tuples)
        if isinstance(updated, cst.Parameters):
            return updated.with_changes(params=self._no_trailing_comma(updated.params))
        if isinstance(updated, cst.Call):
            return updated.with_changes(args=self._no_trailing_comma(updated.args))
        return updated

    # -- places ------------------------------------------------------------------------------
    def _placeholder(self, node: cst.CSTNode | None) -> str | None:
        if isinstance(node, cst.Name) and node.value in self.replacements:
            return node.value
        return None

    def _whole_place(self, node: cst.CSTNode) -> str | None:
        """The placeholder `node` stands for as a whole statement, parameter or argument, when its
        replacement is one (or a list): e.g. the line `body`, not the name `body` in `return body`."""
        if isinstance(node, cst.SimpleStatementLine) and len(node.body) == 1 and isinstance(node.body[0], cst.Expr):
            name = self._placeholder(node.body[0].value)
            if name is not None and isinstance(self.replacements[name], (list, tuple, cst.BaseStatement,
                                                                          cst.BaseSmallStatement)):
                return name
        elif isinstance(node, cst.Param) and node.star in ("", cst.MaybeSentinel.DEFAULT) \
                and node.annotation is None and node.default is None:
            name = self._placeholder(node.name)
            if name is not None and isinstance(self.replacements[name], (list, tuple, cst.Param)):
                return name
        elif isinstance(node, cst.Arg) and node.keyword is None and node.star == "":
            name = self._placeholder(node.value)
            if name is not None and isinstance(self.replacements[name], (list, tuple, cst.Arg)):
                return name
        return None

    def _fill_whole(self, original: cst.CSTNode, name: str) -> Any:
        value = self.replacements[name]
        self.used.add(name)
        items = list(value) if isinstance(value, (list, tuple)) else [value]
        if isinstance(original, cst.SimpleStatementLine):
            filled: list[cst.CSTNode] = []
            for item in items:
                if isinstance(item, cst.BaseStatement):
                    filled.append(self._insert(item))
                elif isinstance(item, cst.BaseSmallStatement):
                    filled.append(original.with_changes(body=[self._insert(item)]))
                else:
                    raise self._wrong_kind(name, item, "a statement")
        elif isinstance(original, cst.Param):
            filled = [self._param(name, item) for item in items]
        else:
            filled = [self._arg(name, item) for item in items]
        return cst.FlattenSentinel(filled) if filled else cst.RemovalSentinel.REMOVE

    def _param(self, name: str, item: Any) -> cst.Param:
        if isinstance(item, cst.Param):
            return self._insert(item)
        if isinstance(item, (str, cst.Name)):
            return cst.Param(self._as_name(name, item))
        raise self._wrong_kind(name, item, "a parameter (a name or a cst.Param)")

    def _arg(self, name: str, item: Any) -> cst.Arg:
        if isinstance(item, cst.Arg):
            return self._insert(item)
        return cst.Arg(self._as_expression(name, item))

    def _name(self, name: str) -> cst.Name:
        self.used.add(name)
        return self._as_name(name, self.replacements[name])

    def _expression(self, name: str, tuple_allowed: bool) -> cst.BaseExpression:
        self.used.add(name)
        value = self.replacements[name]
        if not isinstance(value, (list, tuple)):
            return self._as_expression(name, value)
        if not tuple_allowed:
            raise TemplateError(f"{name} stands for one expression here, but its replacement is a list "
                                f"(a list goes in parameters, arguments, statements, or a whole return "
                                f"value or assignment target):\n{self.template}")
        if not value:
            raise TemplateError(f"{name} stands for a tuple of no items, which `return` and `=` cannot "
                                f"spell without parentheses:\n{self.template}")
        items = [self._as_expression(name, item) for item in value]
        if len(items) == 1:
            return items[0]
        return cst.Tuple([cst.Element(item) for item in items], lpar=[], rpar=[])

    # -- kinds of replacement ------------------------------------------------------------------
    def _as_name(self, name: str, item: Any) -> cst.Name:
        if isinstance(item, cst.Name):
            return self._insert(item)
        if isinstance(item, str) and item.isidentifier():
            return cst.Name(item)
        raise self._wrong_kind(name, item, "a name (an identifier or a cst.Name)")

    def _as_expression(self, name: str, item: Any) -> cst.BaseExpression:
        if isinstance(item, cst.BaseExpression):
            return self._insert(item)
        if isinstance(item, str) and item.isidentifier():
            return cst.Name(item)
        if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
            return cst.Integer(str(item))
        raise self._wrong_kind(name, item, "an expression (a name, a non-negative int or a libcst expression)")

    def _insert(self, node: Any) -> Any:
        """`node` itself the first time, a copy after: one node is never at two places of a tree."""
        if id(node) in self.inserted:
            return node.deep_clone()
        self.inserted.add(id(node))
        return node

    def _no_trailing_comma(self, items: Sequence[Any]) -> Sequence[Any]:
        """The template's own last parameter or argument drops its comma when what followed it
        was an empty list (`f(a, args)` with no args is `f(a)`)."""
        if items and id(items[-1]) not in self.inserted and isinstance(items[-1].comma, cst.Comma):
            return [*items[:-1], items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
        return items

    def _wrong_kind(self, name: str, item: Any, expected: str) -> TemplateError:
        return TemplateError(f"{name} takes {expected} where it stands, not {type(item).__name__} "
                             f"{_shown(item)}:\n{self.template}")


class _MarkMade(cst.CSTVisitor):
    """Calls `origin` with each statement the template made; inserted nodes are not entered."""

    def __init__(self, inserted: set[int], origin: MarkOrigin) -> None:
        self.inserted = inserted
        self.origin = origin

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) in self.inserted:
            return False
        if isinstance(node, cst.BaseStatement):
            self.origin(node)
        return True


def _names_in(node: cst.CSTNode) -> list[cst.Name]:
    """The Names of a dotted name (`a.b.c`)."""
    if isinstance(node, cst.Attribute):
        return [*_names_in(node.value), node.attr]
    return [node] if isinstance(node, cst.Name) else []


def _shown(item: Any) -> str:
    if isinstance(item, cst.CSTNode):
        return repr(cst.Module([]).code_for_node(item).strip()[:60])
    return repr(item)[:60]
