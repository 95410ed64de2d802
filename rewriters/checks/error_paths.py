"""The statements of a function that run only on its way to raising: lint reports no break there.

    def squared_distances(x, y):
        if x.dim() == 2:
            return x @ y.T
        else:
            print("x.shape : ", x.shape)     # on an error path: not reported
            raise ValueError("Incorrect number of dimensions")

A block that ends with an unconditional `raise` (the branch of an `if`, an `else`, a loop's body
after which nothing else runs) leaves the function by an exception whenever it is entered, so a
graph break in it never splits a graph of a call that returns: the compiled call fails, as the
eager one does. Such a path is never a graph break `torch._dynamo.explain` can count on a call
that completes, which is what a compiled function's breaks cost.

Not an error path: a block inside a `try` of the function (the exception may be caught and the
function go on), a block ending in a bare re-`raise` inside an `except` handler (also inside a
try), and the function's own body (a function that always raises is the caller's concern).
Used by the analysis for lint only (`ModuleContext.for_lint`): carve's compiler still runs such a
statement eagerly.
"""

from __future__ import annotations

import libcst as cst


def _ends_in_raise(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    small = last.body if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else ()
    return any(isinstance(statement, cst.Raise) for statement in small)


class _ErrorPaths(cst.CSTVisitor):
    def __init__(self, func: cst.FunctionDef) -> None:
        self.func = func
        self.try_depth = 0
        self.nodes: set[int] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return node is self.func  # a nested function is analysed on its own

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Try(self, node: cst.Try) -> bool:
        self.try_depth += 1
        return True

    def leave_Try(self, node: cst.Try) -> None:
        self.try_depth -= 1

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        if node is self.func.body or self.try_depth or not _ends_in_raise(node):
            return True
        collector = _AllNodes()
        node.visit(collector)
        self.nodes |= collector.nodes
        return False


class _AllNodes(cst.CSTVisitor):
    def __init__(self) -> None:
        self.nodes: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.nodes.add(id(node))
        return True


def error_path_nodes(func: cst.FunctionDef) -> set[int]:
    """The ids of the nodes (statements and everything in them) on the error paths of `func`."""
    paths = _ErrorPaths(func)
    func.visit(paths)
    return paths.nodes


def drop_error_paths(analysis, func: cst.FunctionDef) -> None:
    """Removes from `analysis` (a FunctionAnalysis) the findings of statements on error paths."""
    nodes = error_path_nodes(func)
    if not nodes:
        return
    dropped = {id(f) for key, found in analysis.statement_findings.items() if key in nodes for f in found}
    if not dropped:
        return
    analysis.findings[:] = [f for f in analysis.findings if id(f) not in dropped]
    for key in [key for key in analysis.statement_findings if key in nodes]:
        del analysis.statement_findings[key]
    if analysis.whole_function is not None and id(analysis.whole_function) in dropped:
        analysis.whole_function = None
