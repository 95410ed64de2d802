"""Cut a function body into graph regions and eager statements.

    def f(x, xs):                      partition of the body:
        y = x * 2                      GraphRun [y = x * 2, z = y + 1]
        z = y + 1
        print(z)                       EagerStatement (CRV003)
        for i in range(n):             Compound(for) with its body partitioned again:
            z = z * 3                      GraphRun [z = z * 3]
            xs.append(z)                   EagerStatement (CRV019)
        return z - 1                   GraphRun [return z - 1]

A graph run is a maximal run of statements that a trace captures whole:
simple statements without findings (assignments to local names, expression
calls, a final `return`), and `if` statements, `for` loops over containers
(`for b in self.blocks`, `d.items()`) or short constant ranges, and `with`
blocks of torch's own context managers (`no_grad`, `autocast`) whose every
nested statement is such a statement. Everything else stays Python: statements with
findings run eagerly, and compound statements that hold a finding (or are
`while`/`try`/`with`) keep their control flow in Python with their bodies
partitioned again, so the tensor work inside a loop or a try body is still
compiled. Control flow (`return`/`break`/`continue`) therefore never crosses a
region boundary: regions are straight-line code, and a `return` can only end
one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, child_blocks
from carve.rewriters.findings import Finding
from carve.rewriters.names import dotted_name
from carve.rewriters.rules import rule

# `for` loops over range() are unrolled into the graph only up to this many iterations.
MAX_UNROLLED_ITERATIONS = 32
# Builtins whose result is a Python object a graph cannot return anew on each call
# (`it = iter(xs)`): assignments of their result stay Python.
PYTHON_OBJECT_BUILTINS = frozenset({"iter", "enumerate", "zip", "map", "filter", "reversed", "range", "object"})


@dataclass
class GraphRun:
    statements: list[cst.BaseStatement]

    @property
    def ends_with_return(self) -> bool:
        last = self.statements[-1]
        return is_simple(last) and isinstance(last.body[-1], cst.Return)


@dataclass
class EagerStatement:
    statement: cst.BaseStatement
    findings: list[Finding]

    @property
    def breaks(self) -> list[Finding]:
        return [f for f in self.findings if rule(f.code).lint_default]


@dataclass
class Compound:
    """A compound statement kept as Python control flow; `blocks[i]` partitions its i-th body."""

    statement: cst.BaseCompoundStatement
    header_findings: list[Finding]
    blocks: list[list["Item"]] = field(default_factory=list)

    @property
    def header_breaks(self) -> list[Finding]:
        return [f for f in self.header_findings if rule(f.code).lint_default and f.code not in ("CRV006", "CRV007", "CRV008")]


Item = GraphRun | EagerStatement | Compound


def partition_block(
    block: cst.BaseSuite, analysis: FunctionAnalysis, guarded: bool = False, closures: "_Closures | None" = None
) -> list[Item]:
    """`guarded`: the block runs under a try or with, which may catch an exception raised
    mid-run; then each statement is its own region, so the statements before the one that
    raised have bound their names, as in eager."""
    items: list[Item] = []
    run: list[cst.BaseStatement] = []
    if closures is None:
        closures = _Closures()
        analysis.func.visit(closures)

    def flush() -> None:
        if run:
            items.append(GraphRun(list(run)))
            run.clear()

    for statement in _statements(block):
        if _graph_statement(statement, analysis, loop_depth=0, nested=False) and not closures.touched_by(statement):
            run.append(statement)
            if guarded or is_simple(statement) and isinstance(statement.body[-1], cst.Return):
                flush()
        elif is_simple(statement) or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            flush()
            items.append(EagerStatement(statement, analysis.findings_of(statement)))
        else:
            flush()
            compound = Compound(statement, analysis.findings_of(statement))
            catches = guarded or isinstance(statement, (cst.Try, cst.With)) or type(statement).__name__ == "TryStar"
            compound.blocks = [partition_block(child, analysis, catches, closures) for child in child_blocks(statement)]
            items.append(compound)
    flush()
    return items


def _statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def is_simple(statement: cst.CSTNode) -> bool:
    """A line of small statements: `a = 1; b = 2`, or the `return x` of `def f(x): return x`."""
    return isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))


def as_statement_line(statement: cst.CSTNode) -> cst.CSTNode:
    """One-line suites (`if c: return x`) as ordinary statement lines, to place in indented blocks."""
    if isinstance(statement, cst.SimpleStatementSuite):
        return cst.SimpleStatementLine(body=statement.body)
    return statement


def _graph_statement(statement: cst.CSTNode, analysis: FunctionAnalysis, loop_depth: int, nested: bool) -> bool:
    """Can the trace capture `statement` whole? `nested`: it sits inside an if/for of the region."""
    if analysis.findings_of(statement):
        return False
    if is_simple(statement):
        return all(_graph_small(small, loop_depth, nested) for small in statement.body)
    if isinstance(statement, cst.If):
        return all(
            _graph_statement(s, analysis, loop_depth, nested=True) or _break_in_branch(s, analysis, loop_depth)
            for child in child_blocks(statement) for s in _statements(child)
        )
    if isinstance(statement, cst.For) and statement.orelse is None and _name_target(statement.target) and (
            _short_loop(statement) or _container_loop(statement)):
        return all(_graph_statement(s, analysis, loop_depth + 1, nested=True) for s in _statements(statement.body))
    if isinstance(statement, cst.With) and id(statement) in analysis.torch_context_managers:
        # torch's own context managers (no_grad, autocast, ...): the capture records their state
        # changes, so the block is part of the graph.
        return all(_graph_statement(s, analysis, loop_depth, nested=True) for s in _statements(statement.body))
    return False


def _break_in_branch(statement: cst.CSTNode, analysis: FunctionAnalysis, loop_depth: int) -> bool:
    """A breaking statement in a branch of a Python-valued `if` (`if verbose: print(...)`,
    `if labels is not None: loss = ...item()`), outside any loop of the region: the region keeps
    it. When the branch is not taken (the guards pin the test's value), the graph is whole;
    when it is, the capture breaks there and resumes after it, as torch.compile does."""
    if loop_depth or not is_simple(statement):
        return False
    findings = analysis.findings_of(statement)
    if not findings or not all(f.code in BRANCH_RESUMABLE_RULES for f in findings):
        return False
    if any(isinstance(small, (cst.Return, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Raise))
           for small in statement.body):
        return False
    # Dynamo 2.13 resumes wrongly inside an f-string after a break in it (`f"{loss.item():.4f}"`
    # with a symbolic int beside it rebuilds the string from the wrong stack): keep those Python.
    return not _contains(statement, cst.FormattedString)


# Breaks a capture resumes after (Dynamo splits the graph there and carries on).
BRANCH_RESUMABLE_RULES = frozenset({"CRV001", "CRV003", "CRV004", "CRV013", "CRV014", "CRV015", "CRV016", "CRV019",
                                    "CRV021"})


def _container_loop(statement: cst.For) -> bool:
    """`for b in self.blocks`, `for k, v in d.items()`, `for i, t in enumerate(xs)`: unrolled in the
    trace over the container the guards pin down. A `range` with computed bounds stays Python (a
    new bound each call would mean a new graph each call)."""
    iterator = statement.iter
    return not (isinstance(iterator, cst.Call) and dotted_name(iterator.func) == "range")


def _graph_small(small: cst.BaseSmallStatement, loop_depth: int, nested: bool) -> bool:
    if _contains_lambda(small):
        # A lambda made in a region would close over the region function's variables,
        # not the compiled function's: later rebinding would not be seen.
        return False
    if isinstance(small, cst.Expr):
        # Docstrings and bare names are harmless; a bare call is kept in the graph.
        return not isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
    if isinstance(small, (cst.Assign, cst.AugAssign)):
        return _assigns_names_only(small) and not _makes_python_object(small.value)
    if isinstance(small, cst.AnnAssign):
        return small.value is not None and isinstance(small.target, cst.Name)
    if isinstance(small, cst.Return):
        # Only a region's own last statement may return: the call site returns its result.
        return not nested and small.value is not None
    if isinstance(small, (cst.Break, cst.Continue)):
        return loop_depth > 0  # only inside a loop that is itself in the graph
    return isinstance(small, cst.Pass)


class _Closures(cst.CSTVisitor):
    """Names the function's nested lambdas and defs capture (its cells), and their names.

        s = x * 2
        g = lambda t: t + s      # `s` is a cell, `g` a nested function
        s = x * 3                # must write the cell: stays Python, not a region local
        y = g(x)                 # calls a closure that may read or write cells: stays Python
    """

    def __init__(self) -> None:
        self.cells: set[str] = set()
        self.functions: set[str] = set()
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if self.depth:
            self.functions.add(node.name.value)
        self.depth += 1
        return True

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.depth += 2  # inside a lambda: a nested scope even at the top level
        return True

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.depth -= 2

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.depth == 1 and isinstance(node.value, cst.Lambda):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.functions.add(target.target.value)

    def visit_Name(self, node: cst.Name) -> None:
        if self.depth > 1:
            self.cells.add(node.value)

    def touched_by(self, statement: cst.CSTNode) -> bool:
        if not self.cells and not self.functions:
            return False
        from carve.rewriters.liveness import reads_and_writes

        reads, writes = reads_and_writes(statement)
        return bool(writes & self.cells) or bool(set(reads) & self.functions)


class _LambdaFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.found = True
        return False


class _TypeFinder(cst.CSTVisitor):
    def __init__(self, kind: type) -> None:
        self.kind = kind
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, self.kind):
            self.found = True
        return not self.found


def _contains(node: cst.CSTNode, kind: type) -> bool:
    finder = _TypeFinder(kind)
    node.visit(finder)
    return finder.found


def _contains_lambda(node: cst.CSTNode) -> bool:
    finder = _LambdaFinder()
    node.visit(finder)
    return finder.found


def _makes_python_object(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and dotted_name(value.func) in PYTHON_OBJECT_BUILTINS


def _assigns_names_only(small: cst.Assign | cst.AugAssign) -> bool:
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    return all(_name_target(t) for t in targets)


def _name_target(target: cst.BaseExpression) -> bool:
    if isinstance(target, cst.Name):
        return True
    if isinstance(target, (cst.Tuple, cst.List)):
        return all(_name_target(e.value) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return _name_target(target.value)
    return False


def _short_loop(statement: cst.For) -> bool:
    """`for i in range(<small literal>)`: unrolled in the trace; any other loop stays Python."""
    iterator = statement.iter
    if not (isinstance(iterator, cst.Call) and dotted_name(iterator.func) == "range"):
        return False
    bounds = []
    for arg in iterator.args:
        value = arg.value
        if isinstance(value, cst.Integer):
            bounds.append(int(value.value))
        elif isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus) and isinstance(value.expression, cst.Integer):
            bounds.append(-int(value.expression.value))
        else:
            return False
    if not bounds:
        return False
    count = len(range(*bounds))
    return count <= MAX_UNROLLED_ITERATIONS
