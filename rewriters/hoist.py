"""Hoist the tensor work out of statements that break the graph, into the graph before them.

    y = model(x)                                y = model(x)
    print("mean", y.mean())          ->         _carve_t0 = y.mean()        # joins the graph above
                                                print("mean", _carve_t0)    # only the print is eager

    acc.append(y.sum() * 2)          ->         _carve_t1 = y.sum() * 2
                                                acc.append(_carve_t1)       # the list effect stays eager

    if y.abs().max() > 1:            ->         _carve_t1 = y.abs().max() > 1
        ...                                     if _carve_t1:               # only bool() is eager

A subexpression is hoisted when it is pure tensor work (torch functions,
tensor methods that are not in-place, arithmetic and comparisons on tensors)
over names, constants and attribute reads, and when everything else the
statement calls is I/O, a conversion or a container method, none of which
can change a tensor: evaluating the hoisted work first then gives the same
values. `elif` and `while` conditions are never hoisted (they are not always
evaluated, or evaluated more than once).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
from typing import TypeGuard, cast

import libcst as cst

from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.naming import Namer
from carve.rewriters.partition import COMPUTED, contains_in_place_call
from carve.rewriters.rules import RULES
from carve.rewriters.templates import replace_statement
from carve.rewriters.tensors import NON_TENSOR_METHODS, TORCH_NON_TENSOR, TensorInference

# I/O, conversions, data-dependent tests, and Python side effects (`acc.append(t.mean())`,
# `stats["loss"] = loss.detach()`, `self.last = y.norm()`): only the Python effect stays eager.
# Each rule says whether it is one (`Rule.hoistable`, rewriters/rules.py).
HOISTABLE_CODES = frozenset(code for code, rule in RULES.items() if rule.hoistable)
# Calls that may stay around hoisted work: they cannot change a tensor's value.
SAFE_FUNCTIONS = frozenset({
    "print", "round", "float", "int", "bool", "str", "repr", "len", "format", "abs", "min", "max", "tuple", "list",
})
SAFE_METHODS = frozenset({
    "item", "tolist", "numpy", "format", "debug", "info", "warning", "warn", "error", "critical", "log",
    "append", "extend", "write",
})
TEMP_PREFIX = "_carve_t"
# Methods of Python's containers, which tensors do not have: `returns.insert(0, R)` changes a
# list, even where a later `returns = torch.tensor(returns)` makes the name a tensor.
CONTAINER_METHODS = frozenset({
    "append", "extend", "insert", "appendleft", "extendleft", "pop", "popleft", "remove", "clear", "update",
    "setdefault",
})


@dataclass
class Hoisted:
    assignments: list[cst.SimpleStatementLine]
    statement: cst.CSTNode
    temps: list[str]


class Hoister:
    def __init__(self, tensors: TensorInference, imports: ImportTable, namer: Namer | None = None) -> None:
        """`namer`: the function's namer; temporaries never take a name the user's code spells."""
        self.tensors = tensors
        self.imports = imports
        self.namer = namer if namer is not None else Namer()

    def hoist_statement(self, statement: cst.CSTNode) -> Hoisted | None:
        """For a simple statement line with one small statement."""
        if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) or len(statement.body) != 1:
            return None
        return self._hoist(statement, statement.body[0])

    def hoist_arguments(self, statement: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> Hoisted | None:
        """`acc.append(model(x))` -> `_carve_t0 = model(x)`, `acc.append(_carve_t0)`: each computed
        argument of a container update, whatever it calls. Python evaluates a call's arguments
        before the call, so the update sees the same values (partition._loop_carried_update)."""
        small = statement.body[0]
        call = small.value if isinstance(small, cst.Expr) else None
        if not isinstance(call, cst.Call) or _contains(call, (cst.NamedExpr, cst.Lambda, cst.Yield, cst.Await)):
            return None
        computed = [arg.value for arg in call.args if not arg.star and isinstance(arg.value, COMPUTED)]
        return self._into_temps(statement, computed) if computed else None

    def hoist_assigned_value(self, statement: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> Hoisted | None:
        """`logits, self.loss = model(x, y)` -> `_carve_t0 = model(x, y)`, `logits, self.loss = _carve_t0`:
        the value of an assignment whose only Python effect is storing into an attribute or an item,
        whatever it calls. Python evaluates the value before any store, so the stores see the same
        value, and the model call joins the graph instead of running eagerly with the store.
        Not when the value mutates a container or a tensor in place itself (that is its own effect)."""
        small = statement.body[0] if len(statement.body) == 1 else None
        if not isinstance(small, cst.Assign) or not isinstance(small.value, COMPUTED) \
                or not any(_stores_into_an_object(target.target) for target in small.targets) \
                or _contains(small.value, (cst.NamedExpr, cst.Lambda, cst.Yield, cst.Await, cst.ListComp,
                                           cst.GeneratorExp, cst.DictComp, cst.SetComp)) \
                or contains_in_place_call(small.value, also=CONTAINER_METHODS):
            return None
        return self._into_temps(statement, [small.value])

    def hoist_if_test(self, statement: cst.If) -> Hoisted | None:
        hoisted = self._hoist(statement.test, statement.test, whole=True)
        if hoisted is None:
            return None
        return Hoisted(hoisted.assignments, statement.with_changes(test=hoisted.statement), hoisted.temps)

    def _hoist(self, owner: cst.CSTNode, scope: cst.CSTNode, whole: bool = False) -> Hoisted | None:
        if _contains(scope, (cst.NamedExpr, cst.Lambda, cst.Yield, cst.Await, cst.ListComp, cst.GeneratorExp,
                             cst.DictComp, cst.SetComp)):
            return None
        finder = _HoistableFinder(self)
        if whole and self.pure(scope):
            finder.found.append(scope)
        else:
            scope.visit(finder)
        if not finder.found or not finder.safe:
            return None
        return self._into_temps(owner, finder.found)

    def _into_temps(self, owner: cst.CSTNode, expressions: Sequence[cst.BaseExpression]) -> Hoisted:
        """`temp = expression` for each expression, and `owner` reading the temps instead."""
        replacements: dict[int, cst.Name] = {}
        assignments, temps = [], []
        for expression in expressions:
            name = self.namer.numbered(TEMP_PREFIX)
            temps.append(name)
            replacements[id(expression)] = cst.Name(name)
            # The user's expression itself, not a copy: what the analysis knows of its nodes still holds.
            assignments.append(cast(cst.SimpleStatementLine,
                                    replace_statement("temp = expression", temp=name, expression=expression)))
        # _Replace also replaces `owner` itself when the whole of it was hoisted. It only swaps
        # expressions for names, so the result is a node, never a removal.
        return Hoisted(assignments, cast(cst.CSTNode, owner.visit(_Replace(replacements))), temps)

    # -- purity ---------------------------------------------------------------------------
    def pure(self, node: cst.CSTNode) -> TypeGuard[cst.BaseExpression]:
        """Pure tensor work with at least one operation (a bare name is not worth hoisting)."""
        return not isinstance(node, cst.Name) and self._pure_tensor(node)

    def _pure_tensor(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name):
            return node.value in self.tensors.tensor_names
        if isinstance(node, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation)):
            if not self.tensors.is_tensor(node):
                return False
            return all(self._operand(child) for child in _operands(node))
        if isinstance(node, cst.Call):
            if any(arg.star for arg in node.args):
                return False
            if not all(self._operand(arg.value) for arg in node.args):
                return False
            func = node.func
            qualified = self.imports.resolve(func) or ""
            if qualified.startswith("torch.") and not qualified.startswith(("torch.nn.", "torch._", "torch.compiler")):
                return qualified not in TORCH_NON_TENSOR and not qualified.split(".")[-1].endswith("_")
            if qualified.startswith("torch.nn.functional."):
                return not any(arg.keyword and arg.keyword.value == "inplace" for arg in node.args)
            if isinstance(func, cst.Attribute):
                method = func.attr.value
                if method in NON_TENSOR_METHODS or method in CONTAINER_METHODS or method.endswith("_") \
                        or method.startswith("_"):
                    return False
                return self._pure_tensor(func.value)
        return False

    def _operand(self, node: cst.CSTNode) -> bool:
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
            return True
        if isinstance(node, cst.Attribute):
            return dotted_name(node) is not None  # self.scale, torch.float32
        if isinstance(node, cst.UnaryOperation) and isinstance(node.expression, (cst.Integer, cst.Float)):
            return True
        if isinstance(node, cst.Tuple):
            return all(self._operand(e.value) for e in node.elements)
        return self._pure_tensor(node)


class _HoistableFinder(cst.CSTVisitor):
    """Maximal pure tensor subexpressions; `safe` turns False at any other kind of call."""

    def __init__(self, hoister: Hoister) -> None:
        self.hoister = hoister
        self.found: list[cst.BaseExpression] = []
        self.safe = True

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.BaseExpression) and self.hoister.pure(node):
            self.found.append(node)
            return False
        if isinstance(node, (cst.BooleanOperation, cst.IfExp)):
            # `y is not None and y.sum() > 0`: the right side may not run at all; hoisting
            # it would evaluate it unconditionally.
            self.safe = False
            return False
        if isinstance(node, cst.Call) and not _safe_call(node):
            self.safe = False
        return True


def _stores_into_an_object(target: cst.BaseExpression) -> bool:
    """`self.loss`, `stats["loss"]`, or a tuple holding one."""
    if isinstance(target, (cst.Attribute, cst.Subscript)):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_stores_into_an_object(element.value) for element in target.elements)
    return False


def _safe_call(call: cst.Call) -> bool:
    if isinstance(call.func, cst.Name):
        return call.func.value in SAFE_FUNCTIONS
    if isinstance(call.func, cst.Attribute):
        return call.func.attr.value in SAFE_METHODS
    return False


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.Name]) -> None:
        self.replacements = replacements

    def on_leave(self, original, updated):
        replacement = self.replacements.get(id(original))
        return replacement if replacement is not None else updated


def _operands(node: cst.BinaryOperation | cst.UnaryOperation | cst.Comparison) -> list[cst.BaseExpression]:
    if isinstance(node, cst.BinaryOperation):
        return [node.left, node.right]
    if isinstance(node, cst.UnaryOperation):
        return [node.expression]
    return [node.left, *(c.comparator for c in node.comparisons)]


class _Contains(cst.CSTVisitor):
    def __init__(self, kinds) -> None:
        self.kinds = kinds
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kinds):
            self.found = True
        return not self.found


def _contains(node: cst.CSTNode, kinds) -> bool:
    visitor = _Contains(kinds)
    node.visit(visitor)
    return visitor.found
