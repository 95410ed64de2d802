"""A visitor base that stays in one scope: nested defs, classes and lambdas are skipped whole.

What a nested scope binds, deletes or declares `global` is its own, and a
`return`, `yield` or `break` in it is not the enclosing function's:

    def f(x):
        y = x + 1               # visited
        def g():                # skipped (body, decorators and defaults)
            del y
        h = lambda: (yield)     # skipped
        class C:                # skipped
            z = 2
        return y                # visited

Before, each visitor spelled the rule out:

    class _Deleted(cst.CSTVisitor):
        def visit_FunctionDef(self, node) -> bool:
            return False
        def visit_ClassDef(self, node) -> bool:
            return False
        def visit_Lambda(self, node) -> bool:
            return False
        def visit_Del(self, node) -> None: ...

after, it inherits it:

    class _Deleted(OwnScopeVisitor):
        def visit_Del(self, node) -> None: ...

Visitors with another rule keep their own methods: those that read a closure's
free names or a lambda's body, walk class bodies, or count nesting depth.
"""

from __future__ import annotations

import libcst as cst


class OwnScopeVisitor(cst.CSTVisitor):
    """Visits one scope's code, not the nested functions, classes and lambdas in it."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
