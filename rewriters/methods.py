"""Make a method's body mean the same outside its class body.

carve compiles a method's outlined code outside the class statement, where
two things a class body gives for free are missing: private-name mangling and
the `__class__` cell of zero-argument `super()`. This pass spells both out:

    class Model(Base):                          def forward(self, x):
        def forward(self, x):           ->          y = super(__class__, self).forward(x)
            y = super().forward(x)                  return y * self._Model__scale
            return y * self.__scale

`carve rewrite` places the outlined code at module level, where no `__class__` cell
exists at all: there `super_class` is the class's name, for `super()` and for an explicit
`__class__` alike (`__class__.factor` -> `Model.factor`).

Nested functions keep the mangling (Python mangles everything in a class
body) but their `super()` is their own business and is left alone.
"""

from __future__ import annotations

import libcst as cst


def mangle(identifier: str, class_name: str) -> str:
    """Python's rule: `__x` (not `__x__`) inside class `_Model` becomes `_Model__x`."""
    stripped = class_name.lstrip("_")
    if identifier.startswith("__") and not identifier.endswith("__") and stripped:
        return f"_{stripped}{identifier}"
    return identifier


class MethodBodyOutsideClass(cst.CSTTransformer):
    def __init__(self, class_name: str | None, first_param: str | None, super_class: str = "__class__") -> None:
        self.class_name = class_name
        self.first_param = first_param
        self.super_class = super_class
        self.depth = 0  # functions and lambdas entered below the method itself
        # id() of Name nodes that name an attribute or a keyword, not a variable (`x.__class__`).
        self._not_variables: set[int] = set()

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._not_variables.add(id(node.attr))
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        if node.keyword is not None:
            self._not_variables.add(id(node.keyword))
        return True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.depth += 1
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self.depth -= 1
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.depth += 1
        return True

    def leave_Lambda(self, original: cst.Lambda, updated: cst.Lambda) -> cst.Lambda:
        self.depth -= 1
        return updated

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False  # a class inside the method mangles with its own name

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        if (original.value == "__class__" and self.super_class != "__class__"
                and id(original) not in self._not_variables):
            return updated.with_changes(value=self.super_class)  # the cell a class body gives
        if self.class_name:
            return updated.with_changes(value=mangle(updated.value, self.class_name))
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        # depth 1 is the method itself (its FunctionDef was entered).
        if self.depth != 1 or updated.args or not self.first_param:
            return updated
        if isinstance(updated.func, cst.Name) and updated.func.value == "super":
            return updated.with_changes(args=[cst.Arg(cst.Name(self.super_class)), cst.Arg(cst.Name(self.first_param))])
        return updated
