"""Which graph breaks of a compiled function come before any of its tensor operations.

    @torch.compile
    def step(model, x, i):
        t0 = time.time()                # leading: nothing before it made a graph operation
        if i % 100 == 0:
            log.info("step %d", i)      # leading: still no tensor work on any path to it
        y = model(x)                    # tensor work: the graph starts here
        print(y.sum())                  # not leading: it ends a graph
        return y

Dynamo meets a leading break while its graph is empty: it runs the statement and starts the
graph after it, so no graph is split (`torch._dynamo.explain` counts no break; only
`fullgraph=True` refuses it). `carve lint` reports those as CRV027
(rules/crv027_break_before_graph.py) instead of the rule they fall under.

    leading = LeadingBreaks(imports, callee_is_leading).of(func, analysis)   # the leading findings

Read from the source, statement by statement in execution order: a statement does tensor work
when it calls a torch function that returns a tensor, a tensor method of a tensor, a submodule
or a parameter with arguments (`self.fc(x)`, `model(x)`), or applies an operator to a tensor
(`TensorInference` says what is a tensor). A break is leading when no statement before it on
any path does tensor work, and its own statement does none besides the breaking call (`.item()`
of an input is leading, `print(y.mean())` is not). Breaks inside loops, try blocks and
non-resumable `with` blocks are never leading (Dynamo skips the whole frame for those), nor are
the rules that skip the frame by themselves. A call to a user function with a break inside
(CRV016) is leading when the callee's breaks are all leading in the callee, or when Dynamo skips the
callee's whole frame (a break in a loop of it: it runs eagerly and makes no graph of its own).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from libcst.metadata import CodeRange

from carve.rewriters.analysis import FunctionAnalysis, child_blocks
from carve.rewriters.callees import CalleeInfo
from carve.rewriters.checks.tensor_work import TensorWork
from carve.rewriters.findings import Finding
from carve.rewriters.names import ImportTable
from carve.rewriters.rules import rule
from carve.rewriters.rules import crv016_callee_graph_break as callee_graph_break
from carve.rewriters.scopes import OwnScopeVisitor



class LeadingBreaks:
    """`of(func, analysis)`: the breaking findings of `func` no tensor operation can precede.

    `callee_is_leading(info)` says whether a user function called here has only leading breaks:
    "no-work" (and no tensor work at all), "work" (tensor work after them), None (a break that
    counts, or a callee that cannot be read)."""

    def __init__(self, imports: ImportTable, callee_is_leading: Callable[[CalleeInfo], str | None],
                 position: Callable[[cst.CSTNode, cst.CSTNode], CodeRange | None], line_offset: int = 0,
                 function_work: Callable[[str], bool | None] | None = None) -> None:
        self.function_work = function_work
        self.imports = imports
        self.callee_is_leading = callee_is_leading
        self.position = position
        self.line_offset = line_offset

    def of(self, func: cst.FunctionDef, analysis: FunctionAnalysis) -> list[Finding]:
        if analysis.whole_function is not None or not analysis.breaks:
            return []
        tensors = TensorWork(func, self.imports, self.function_work)
        walk = _Walk(analysis, tensors, self.callee_is_leading, self.position, self.line_offset)
        walk.block(func.body, seen_work=False)
        return walk.leading + [finding for finding, _ in walk.pending]


class _Walk:
    def __init__(self, analysis: FunctionAnalysis, tensors: TensorWork, callee_is_leading, position,
                 line_offset: int) -> None:
        self.line_offset = line_offset
        self.analysis = analysis
        self.tensors = tensors
        self.callee_is_leading = callee_is_leading
        self.position = position
        self.leading: list[Finding] = []
        # Calls of user functions whose breaks are leading in them but which do tensor work: Dynamo
        # runs such a callee as its own frame (its graph), so the call costs a graph when the caller
        # does tensor work after it. Leading unless a later statement does.
        self.pending: list[tuple[Finding, cst.CSTNode]] = []

    def block(self, block: cst.BaseSuite, seen_work: bool) -> bool:
        """Walk a block reached with (`seen_work`) or without tensor work before it; whether any
        path through it has done tensor work by its end."""
        body = block.body if isinstance(block, cst.IndentedBlock) else [block]
        for statement in body:
            pending = list(self.pending)
            seen_work = self.statement(statement, seen_work)
            if pending and self.tensors.does_work([statement]):
                # tensor work after a call that ran its callee as a frame of its own: a second graph
                self.pending = [entry for entry in self.pending if entry not in pending]
        return seen_work

    def statement(self, statement: cst.CSTNode, seen_work: bool) -> bool:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return seen_work
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            self._consider(statement, [statement], seen_work)
            return seen_work or self.tensors.does_work([statement])
        if isinstance(statement, cst.If):
            tests: list[cst.CSTNode] = [statement.test]
            orelse = statement.orelse
            while isinstance(orelse, cst.If):
                tests.append(orelse.test)
                orelse = orelse.orelse
            self._consider(statement, tests, seen_work)
            after_tests = seen_work or self.tensors.does_work(tests)
            outcomes = [self.block(child, after_tests) for child in child_blocks(statement)]
            if not isinstance(orelse, cst.Else):
                outcomes.append(after_tests)  # no branch taken
            return any(outcomes)
        if isinstance(statement, cst.With) and id(statement) in self.analysis.resumable_context_managers:
            # torch's own managers (no_grad, autocast): Dynamo resumes a break inside them.
            entered = seen_work or self.tensors.does_work([item.item for item in statement.items])
            return self.block(statement.body, entered)
        # Loops, try blocks, other context managers, match: a break inside skips the frame.
        return seen_work or self.tensors.does_work([statement])

    def _consider(self, owner: cst.CSTNode, evaluated: list[cst.CSTNode], seen_work: bool) -> None:
        """The breaking findings of `owner` are leading when nothing before did tensor work and nothing
        the statement evaluates before the breaking expression does (`print(y.mean())` computes the
        mean first; `torch.bincount(y).float()` converts after the break)."""
        if seen_work:
            return
        findings = [f for f in self.analysis.findings_of(owner)
                    if rule(f.code).lint_default and not rule(f.code).skips_frame]
        for finding in findings:
            if self.tensors.does_work(self._evaluated_before(finding, owner, evaluated)):
                continue
            if finding.code == callee_graph_break.RULE.code:
                verdict = self._callees_leading(evaluated)
                if verdict == "work" and _value_of_statement(owner):
                    self.pending.append((finding, owner))
                if verdict != "no-work":
                    continue
            self.leading.append(finding)

    def _evaluated_before(self, finding: Finding, owner: cst.CSTNode, evaluated: list[cst.CSTNode]) -> list[cst.CSTNode]:
        """What `owner` evaluates before the expression `finding` is at: that expression's operands
        (a call's receiver and arguments) and the expressions left of it; all of `evaluated` when
        the expression cannot be found."""
        located = _Located(lambda node: self.position(node, owner), finding.line - self.line_offset, finding.column,
                           (finding.end_line - self.line_offset, finding.end_column) if finding.end_line else None)
        for node in evaluated:
            node.visit(located)
        if located.node is None:
            return evaluated
        target = located.node
        # `[x.item() for x in torch.linspace(0, 1, n)]`: what a comprehension iterates is evaluated
        # before its element, though written after it.
        sources = _ComprehensionSources(target)
        for node in evaluated:
            node.visit(sources)
        if isinstance(target, cst.Call):
            operands: list[cst.CSTNode] = [arg.value for arg in target.args]
            if isinstance(target.func, cst.Attribute):
                operands.append(target.func.value)
        elif isinstance(target, cst.Subscript):
            operands = [target.value, *target.slice]
        else:
            operands = [target]
        return operands + located.before + sources.found

    def _callees_leading(self, evaluated: list[cst.CSTNode]) -> str | None:
        """"no-work" when the breaking callees called here break only before any tensor work of theirs
        and do none after; "work" when they break only there but do tensor work after; else None."""
        calls = _Calls()
        for node in evaluated:
            node.visit(calls)
        infos = [self.analysis.user_calls[id(call)] for call in calls.found if id(call) in self.analysis.user_calls]
        verdicts = [self.callee_is_leading(info) for info in infos if info.breaks]
        if not verdicts or None in verdicts:
            return None
        return "work" if "work" in verdicts else "no-work"


def _value_of_statement(statement: cst.CSTNode) -> bool:
    """`y = helper(x)`, `return helper(x)`, `helper(x)`: the call's result is not computed on further
    within the statement (`return helper(x) + 1` is)."""
    if not isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    value = getattr(small, "value", None)
    return isinstance(small, (cst.Expr, cst.Assign, cst.AnnAssign, cst.Return)) and isinstance(value, cst.Call)


class _Located(OwnScopeVisitor):
    """The outermost expression starting at (line, column) (0-based column) and, when given, ending at
    `end`, and the expressions that end before it starts (evaluated earlier, left to right)."""

    def __init__(self, position, line: int, column: int, end: tuple[int, int] | None = None) -> None:
        self.position = position
        self.line, self.column = line, column
        self.end = end
        self.node: cst.CSTNode | None = None
        self.before: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not super().on_visit(node) or self.node is not None:
            return False
        if not isinstance(node, cst.BaseExpression):
            return True
        where = self.position(node)
        if where is None:
            return True
        start, end = (where.start.line, where.start.column), (where.end.line, where.end.column)
        if start == (self.line, self.column) and (self.end is None or end == self.end) and isinstance(
                node, (cst.Call, cst.Subscript, cst.IfExp, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation,
                       cst.Name, cst.Attribute)):
            self.node = node
            return False
        if end <= (self.line, self.column):
            self.before.append(node)
            return False
        return True


class _ComprehensionSources(OwnScopeVisitor):
    """The iterables and conditions of the comprehensions whose element (`elt`, a dict's key and value)
    holds `target`."""

    COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)

    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        elements = [node.key, node.value] if isinstance(node, cst.DictComp) else [getattr(node, "elt", None)]
        if isinstance(node, self.COMPREHENSIONS) and any(e is not None and _contains(e, self.target) for e in elements):
            clause: cst.CompFor | None = node.for_in
            while clause is not None:
                # iterating a tensor selects its rows: `values[0]`, ... (graph operations)
                iterated = cst.Subscript(clause.iter, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
                self.found += [iterated, *(condition.test for condition in clause.ifs)]
                clause = clause.inner_for_in
        return super().on_visit(node)


def _contains(node: cst.CSTNode, target: cst.CSTNode) -> bool:
    finder = _Finds(target)
    node.visit(finder)
    return finder.found


class _Finds(cst.CSTVisitor):
    def __init__(self, target: cst.CSTNode) -> None:
        self.target = target
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.target:
            self.found = True
        return not self.found


class _Calls(OwnScopeVisitor):
    def __init__(self) -> None:
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.found.append(node)


