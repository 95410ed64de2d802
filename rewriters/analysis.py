"""Static analysis of one function: the findings that decide what stays eager.

    @carve.compile
    def step(model, x, i):
        y = model(x)                    # graph
        if i % 10 == 0:
            print(i, y.sum().item())    # CRV003 + CRV004: eager
        for _ in range(3):              # CRV006 if its body broke the graph
            y = y * 2
        return y

`analyze_function` walks the function's statements (not nested functions)
and reports, per simple statement, the findings that make it eager; per
compound statement, the findings of its header (`if x.sum() > 0:`) and the
frame-skip findings torch.compile would hit (a break inside a loop, try or
with: CRV006-CRV008); and findings that make the whole function eager
(generators, async, skip_frame).

The findings are the rule modules' (rewriters/rules/): the walk runs their checks on each
call, subscript and conditional expression, hands each call's `CalleeInfo` (what a callee
resolver found its target to be, rewriters/callees.py) to their callee checks, and calls the
structural rules' checks where it knows the facts (a loop whose body broke, the first
`yield`). It decides where a finding belongs and positions it, never what it says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from carve.rewriters.callees import CalleeInfo, CalleeKind, CallResolver, ModuleResolver
from carve.rewriters.checks import CheckContext
from carve.rewriters.walk import import_table, walk
from carve.rewriters.findings import Finding, Violation
from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.rules import (
    CALL_CHECKS, CALLEE_CHECKS, IF_EXPRESSION_CHECKS, LOOP_TARGET_HOOKS, STATEMENT_CHECKS, SUBSCRIPT_CHECKS,
    USER_CALLEE_CHECKS, rule,
)
from carve.rewriters.rules import crv002_skip_frame as skip_frame
from carve.rewriters.rules import crv005_data_dependent_branch as data_dependent_branch
from carve.rewriters.rules import crv006_break_in_loop as break_in_loop
from carve.rewriters.rules import crv007_break_in_try as break_in_try
from carve.rewriters.rules import crv008_break_in_with as break_in_with
from carve.rewriters.rules import crv010_generator as generator_rule
from carve.rewriters.rules import crv011_async as async_rule
from carve.rewriters.rules import crv012_autograd_in_compiled as autograd_rule
from carve.rewriters.rules import crv013_disabled_callee as disabled_callee
from carve.rewriters.rules import crv019_python_side_effect as side_effects
from carve.rewriters.rules import crv022_handler_misses_graph_error as handler_misses_graph_error
from carve.rewriters.scopes import OwnScopeVisitor
from carve.rewriters.tensors import TensorInference

# torch's profiler context managers: Dynamo treats them as no-ops inside a graph (it warns that
# the profiler is ignored) and resumes a graph break inside them. Only without `as`: the profiler
# object itself cannot leave a graph.
PROFILER_CONTEXT_MANAGERS = frozenset({
    "torch.profiler.profile", "torch.profiler.record_function", "torch.profiler.profiler.profile",
    "torch.autograd.profiler.profile", "torch.autograd.profiler.record_function",
})
# Context managers Dynamo can resume a graph break inside: no CRV008 for these.
RESUMABLE_CONTEXT_MANAGERS = frozenset({
    "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode",
    "torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.autocast",
    "contextlib.nullcontext", "torch.device", "torch.autograd.graph.disable_saved_tensors_hooks",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.set_grad_enabled",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad",
    "torch.autograd.grad_mode.set_grad_enabled", "torch.autograd.grad_mode.inference_mode",
}) | PROFILER_CONTEXT_MANAGERS
# Context managers under which nothing computed records an autograd graph.
GRAD_DISABLING_CONTEXT_MANAGERS = frozenset({
    "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.autograd.grad_mode.inference_mode",
})
# torch's context managers Dynamo records in a graph (its state changes become graph nodes), so a
# `with` block of theirs can be one graph region even where a break inside it is not resumable.
TRACEABLE_CONTEXT_MANAGERS = RESUMABLE_CONTEXT_MANAGERS | frozenset({
    "torch.nn.attention.sdpa_kernel",
})
# A compound statement whose body breaks the graph: a loop, a try or a with (each rule's module
# says which statements it covers and what it reports).
CONTAINMENT_CHECKS = (
    break_in_loop.check_containment, break_in_try.check_containment, break_in_with.check_containment,
)


@dataclass
class FunctionAnalysis:
    func: cst.FunctionDef
    findings: list[Finding] = field(default_factory=list)
    # id(statement node) -> findings: for a SimpleStatementLine they make it eager; for a
    # compound statement they belong to its header (or to what its body does to torch.compile).
    statement_findings: dict[int, list[Finding]] = field(default_factory=dict)
    # A finding that makes the whole function eager (generator, async, skip_frame).
    whole_function: Finding | None = None
    # id(Call) -> callee, for the calls to user functions (compiled on their own when eager).
    user_calls: dict[int, CalleeInfo] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    # id(With) of `with` statements entering only torch's own context managers (no_grad,
    # autocast, ...): a graph region may hold them whole (Dynamo records their state changes).
    torch_context_managers: set[int] = field(default_factory=set)
    # The subset of those Dynamo resumes a graph break inside (grad mode, autocast, ...): a region
    # may hold such a `with` block together with a breaking statement of its body.
    resumable_context_managers: set[int] = field(default_factory=set)
    # Lines a run found must run as Python (a break met while tracing, a loop Dynamo skipped):
    # the partition never keeps them inside a region on the bet that they are not reached.
    forced_lines: set[int] = field(default_factory=set)
    # The calls CRV012 reports (`.backward()`, `torch.autograd.grad`, ...), each with its qualified
    # name (`torch.autograd.grad`; `loss.backward` for the method): what the backward passes
    # among them back-propagate from decides where graph regions end (rewriters/backward_roots.py).
    autograd_calls: list[tuple[cst.Call, str | None]] = field(default_factory=list)
    # id(With) of `with torch.no_grad():` blocks (and inference_mode): what they compute carries no
    # autograd graph.
    grad_disabled_blocks: set[int] = field(default_factory=set)
    # The module's imports, to resolve what the function's calls call (`F.relu` -> torch.nn.functional.relu).
    imports: ImportTable = field(default_factory=ImportTable)

    def findings_of(self, node: cst.CSTNode) -> list[Finding]:
        return self.statement_findings.get(id(node), [])

    @property
    def breaks(self) -> list[Finding]:
        """Findings that are graph breaks (not the CRV019 side effects)."""
        return [f for f in self.findings if rule(f.code).lint_default]


class ModuleContext:
    """A parsed module with the metadata every function analysis of it shares."""

    # Whether the functions analysed are traced as under fullgraph=True, where torch.compile gives
    # `nonzero` an unbacked size (CheckContext.dynamic_output_sizes_traced): carve's compiler asks so;
    # `carve lint` asks for a function compiled without fullgraph, where it is a break.
    dynamic_output_sizes_traced = True
    # `carve lint` analyses (CheckContext.for_lint); carve's compiler does not.
    for_lint = False

    def __init__(self, module: cst.Module, filename: str = "<unknown>", line_offset: int = 0) -> None:
        self.module = module
        self.filename = filename
        self.line_offset = line_offset
        self.imports = import_table(module)
        self.positions = self._module_positions()
        self.static_resolver = ModuleResolver(module, self.imports, filename)
        self.static_resolver.analyse_callee = lambda func, _resolver: analyze_function(func, self).findings

    def _module_positions(self):
        """Positions of every node; `carve lint` overrides this to compute them only where it reports."""
        return MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider)

    def position(self, node: cst.CSTNode) -> CodeRange | None:
        return self.positions.get(node)

    def position_within(self, node: cst.CSTNode, statement: cst.CSTNode) -> CodeRange | None:
        """`position(node)` for a node of `statement` (`carve lint` then generates only that statement)."""
        return self.position(node)

    def line_of(self, node: cst.CSTNode) -> int:
        position = self.positions.get(node)
        return position.start.line + self.line_offset if position else 0

    def line_range(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.positions[node]
        return position.start.line + self.line_offset, position.end.line + self.line_offset


def analyze_function(
    func: cst.FunctionDef,
    module: ModuleContext,
    resolver: CallResolver | None = None,
    forced_breaks: dict[int, tuple[str, str]] | None = None,
) -> FunctionAnalysis:
    """Findings of `func`. `forced_breaks` maps a line to (code, message) found while tracing."""
    analysis = FunctionAnalysis(func, forced_lines=set(forced_breaks or ()), imports=module.imports)
    oracles: list[Callable[[str], bool | None]] = [
        oracle for r in (resolver, module.static_resolver) if (oracle := getattr(r, "returns_tensor", None))]

    def returns_tensor(dotted: str) -> bool:
        """A call to a user function the resolvers can read gives a tensor when the function returns one."""
        for oracle in oracles:
            answer = oracle(dotted)
            if answer is not None:
                return answer
        return False

    # the attributes of `self` the resolver (the lint's, which knows the method's class) says hold tensors
    tensor_attributes = getattr(resolver, "tensor_attributes", None) or frozenset()
    ctx = CheckContext(module.imports, TensorInference(func, module.imports, returns_tensor if oracles else None,
                                                       tensor_attributes),
                       module.dynamic_output_sizes_traced, module.for_lint)
    walker = _FunctionWalker(analysis, module, ctx, resolver, forced_breaks or {})
    walker.run()
    if module.for_lint:  # lint reports no break on a path that only raises (rewriters/checks/error_paths.py)
        from carve.rewriters.checks.error_paths import drop_error_paths

        drop_error_paths(analysis, func)
    analysis.findings.sort(key=lambda f: (f.line, f.column, f.code))
    return analysis


class _FunctionWalker:
    def __init__(self, analysis, module, ctx, resolver, forced_breaks) -> None:
        self.analysis = analysis
        self.module = module
        self.ctx = ctx
        self.resolvers = [r for r in (resolver, module.static_resolver) if r is not None]
        self.forced_breaks = forced_breaks

    def run(self) -> None:
        func = self.analysis.func
        generator = _BodyFacts()
        walk(func.body, generator)
        self.analysis.global_names = generator.names
        for violation in async_rule.check_function(func):
            self._whole(violation, func)
        for violation in generator_rule.check_function(generator.found):
            self._whole(violation, cast(cst.CSTNode, generator.found))
        self._block(func.body)
        skip = next((f for f in self.analysis.findings if f.code == skip_frame.RULE.code), None)
        if skip is not None and self.analysis.whole_function is None:
            self.analysis.whole_function = skip

    # -- recording -------------------------------------------------------------------------
    def _finding(self, violation: Violation, node: cst.CSTNode, owner: cst.CSTNode | None = None) -> Finding:
        position = self.module.position(node) if owner is None else self.module.position_within(node, owner)
        offset = self.module.line_offset
        code, message, subject, callee_stack, frozen_by_tracing = violation
        if position is None:
            return Finding(code, message, offset + 1, callee_stack=callee_stack,
                           frozen_by_tracing=frozen_by_tracing, subject=subject)
        return Finding(
            code, message, position.start.line + offset, position.start.column,
            position.end.line + offset, position.end.column, callee_stack, frozen_by_tracing, subject,
        )

    def _record(self, owner: cst.CSTNode, finding: Finding) -> None:
        self.analysis.findings.append(finding)
        self.analysis.statement_findings.setdefault(id(owner), []).append(finding)

    def _whole(self, violation: Violation, node: cst.CSTNode) -> None:
        finding = self._finding(violation, node)
        self.analysis.findings.append(finding)
        if self.analysis.whole_function is None:
            self.analysis.whole_function = finding

    # -- statements ------------------------------------------------------------------------
    def _block(self, block: cst.BaseSuite) -> bool:
        """Analyse a block; True when something in it breaks the graph."""
        broke = False
        body = block.body if isinstance(block, cst.IndentedBlock) else [block]
        for statement in body:
            if isinstance(statement, cst.SimpleStatementLine) or isinstance(statement, cst.SimpleStatementSuite):
                broke |= self._simple(statement)
            else:
                broke |= self._compound(statement)
        return broke

    def _simple(self, statement: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> bool:
        for small in statement.body:
            for violation in side_effects.check_statement(small, self.ctx, self.analysis.global_names):
                self._record(statement, self._finding(violation, small, owner=statement))
            for check in STATEMENT_CHECKS:
                for violation in check(small, self.ctx):
                    self._record(statement, self._finding(violation, small, owner=statement))
            self._expressions(statement, small)
        self._forced(statement)
        return any(rule(f.code).lint_default for f in self.analysis.findings_of(statement))

    def _forced(self, statement: cst.CSTNode) -> None:
        if not self.forced_breaks:
            return
        first, last = self.module.line_range(statement)
        for line, (code, message) in self.forced_breaks.items():
            if first <= line <= last and not any(f.line == line and f.code == code for f in self.analysis.findings_of(statement)):
                self._record(statement, Finding(code, message, line))

    def _compound(self, statement: cst.CSTNode) -> bool:
        broke = False
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return False  # a definition: its body runs when called, and is compiled then
        if isinstance(statement, (cst.If, cst.While)):
            # The header of an if is its condition and those of its elif clauses: all are evaluated
            # before a branch runs, so they belong to the statement itself.
            tests = [(statement.test, "if" if isinstance(statement, cst.If) else "while")]
            orelse = statement.orelse if isinstance(statement, cst.If) else None
            while isinstance(orelse, cst.If):
                tests.append((orelse.test, "elif"))
                orelse = orelse.orelse
            for test, keyword in tests:
                self._expressions(statement, test)
                for violation in data_dependent_branch.check_condition(test, keyword, self.ctx):
                    self._record(statement, self._finding(violation, test, owner=statement))
        elif isinstance(statement, cst.For):
            self._expressions(statement, statement.iter)
            for violation in disabled_callee.check_iteration(statement.iter, self.ctx):
                self._record(statement, self._finding(violation, statement.iter, owner=statement))
            for hook in LOOP_TARGET_HOOKS:
                hook(statement.target, statement.iter, self.ctx)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                self._expressions(statement, item.item)
                # `with torch.autocast("cpu") as ac:` binds an object a traced `with` binds to None.
                for violation in side_effects.check_with_item(item, self.ctx):
                    self._record(statement, self._finding(violation, item, owner=statement))
            if self._entered_all_in(statement, TRACEABLE_CONTEXT_MANAGERS):
                self.analysis.torch_context_managers.add(id(statement))
            if self._resumable(statement):
                self.analysis.resumable_context_managers.add(id(statement))
            if self._entered_all_in(statement, GRAD_DISABLING_CONTEXT_MANAGERS):
                self.analysis.grad_disabled_blocks.add(id(statement))
        elif isinstance(statement, handler_misses_graph_error.STATEMENTS):
            # A handler that must see what the body's tensor operations raise on data: the try
            # stays Python, so a graph of its body raises inside it.
            for violation in handler_misses_graph_error.check_try(statement):
                self._record(statement, self._finding(violation, _header_node(statement), owner=statement))
        self._forced_header(statement)
        header_broke = any(rule(f.code).lint_default for f in self.analysis.findings_of(statement))
        for child in child_blocks(statement):
            broke |= self._block(child)
        # Dynamo resumes after a break inside torch's own managers (no_grad, autocast, ...): no finding.
        if broke and id(statement) not in self.analysis.resumable_context_managers:
            for check in CONTAINMENT_CHECKS:
                for violation in check(statement):
                    self._record(statement, self._finding(violation, _header_node(statement), owner=statement))
        return broke or header_broke

    def _forced_header(self, statement: cst.CSTNode) -> None:
        if not self.forced_breaks:
            return
        header_line = self.module.line_of(statement)
        if header_line in self.forced_breaks:
            code, message = self.forced_breaks[header_line]
            self._record(statement, Finding(code, message, header_line))

    def _resumable(self, statement: cst.With) -> bool:
        return self._entered_all_in(statement, RESUMABLE_CONTEXT_MANAGERS)

    def _entered_all_in(self, statement: cst.With, managers: frozenset) -> bool:
        for item in statement.items:
            expression = item.item.func if isinstance(item.item, cst.Call) else item.item
            manager = self.ctx.qualified(expression)
            if manager not in managers or manager in PROFILER_CONTEXT_MANAGERS and item.asname is not None:
                return False
        return True

    # -- expressions -----------------------------------------------------------------------
    def _expressions(self, owner: cst.CSTNode, node: cst.CSTNode) -> None:
        visitor = _ExpressionVisitor(self, owner)
        walk(node, visitor)

    def check_call(self, owner: cst.CSTNode, call: cst.Call) -> None:
        qualified = self.ctx.qualified(call.func)
        for check in CALL_CHECKS:
            for violation in check(call, self.ctx):
                self._record(owner, self._finding(violation, call, owner=owner))
                if violation.code == autograd_rule.RULE.code:
                    self.analysis.autograd_calls.append((call, qualified))
        dotted = dotted_name(call.func)
        for resolver in self.resolvers:
            info = resolver.resolve(call, dotted, qualified)
            if info is not None:
                self._callee(owner, call, info)
                return

    def check_subscript(self, owner: cst.CSTNode, node: cst.Subscript) -> None:
        for check in SUBSCRIPT_CHECKS:
            for violation in check(node, self.ctx):
                self._record(owner, self._finding(violation, node, owner=owner))

    def check_if_expression(self, owner: cst.CSTNode, node: cst.IfExp) -> None:
        for check in IF_EXPRESSION_CHECKS:
            for violation in check(node, self.ctx):
                self._record(owner, self._finding(violation, node.test, owner=owner))

    def _callee(self, owner: cst.CSTNode, call: cst.Call, info: CalleeInfo) -> None:
        """What the resolver found the call's target to be, reported by the rules' callee checks."""
        if info.kind is CalleeKind.USER_FUNCTION:
            self.analysis.user_calls[id(call)] = info
        for check in CALLEE_CHECKS:
            for violation in check(info):
                # A call check may have reported the rule at this line already (a marker by its name).
                position = self.module.position_within(call, owner)
                line = position.start.line + self.module.line_offset if position else 0
                if not any(f.code == violation.code and f.line == line for f in self.analysis.findings_of(owner)):
                    self._record(owner, self._finding(violation, call, owner=owner))
        for check in USER_CALLEE_CHECKS:
            for violation in check(info):
                self._record(owner, self._finding(violation, call, owner=owner))


class _ExpressionVisitor(OwnScopeVisitor):
    """Calls and subscripts of one statement, not entering lambdas or nested definitions."""

    def __init__(self, walker: _FunctionWalker, owner: cst.CSTNode) -> None:
        self.walker = walker
        self.owner = owner
        self._stored: set[int] = set()  # id() of assignment targets

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return False  # compound statements' bodies are walked statement by statement

    def visit_Call(self, node: cst.Call) -> None:
        self.walker.check_call(self.owner, node)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._stored.add(id(node.target))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._stored.add(id(node.target))

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if id(node) in self._stored:
            return  # `x[x < 0] = 0`: a masked store keeps x's shape (its index is still checked)
        self.walker.check_subscript(self.owner, node)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.walker.check_if_expression(self.owner, node)


class _BodyFacts(OwnScopeVisitor):
    """In one walk of a function body (not nested definitions): its global/nonlocal names, its first yield.

    A lambda holds no statements, and a yield there is the lambda's.
    """

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.found: cst.CSTNode | None = None

    def visit_Global(self, node: cst.Global) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.names.update(n.name.value for n in node.names)

    def visit_Yield(self, node: cst.Yield) -> None:
        if self.found is None:
            self.found = node


def child_blocks(statement: cst.CSTNode) -> list[cst.BaseSuite]:
    """The statement blocks directly inside a compound statement, in source order."""
    blocks: list[cst.BaseSuite] = []
    if isinstance(statement, (cst.If,)):
        blocks.append(statement.body)
        orelse = statement.orelse
        if isinstance(orelse, cst.If):
            blocks.extend(child_blocks(orelse))
        elif isinstance(orelse, cst.Else):
            blocks.append(orelse.body)
        return blocks
    body = getattr(statement, "body", None)
    if isinstance(body, cst.BaseSuite):
        blocks.append(body)
    for handler in getattr(statement, "handlers", ()) or ():
        blocks.append(handler.body)
    for attribute in ("orelse", "finalbody"):
        extra = getattr(statement, attribute, None)
        if extra is not None and isinstance(getattr(extra, "body", None), cst.BaseSuite):
            blocks.append(extra.body)
    if hasattr(cst, "Match") and isinstance(statement, cst.Match):
        blocks.extend(case.body for case in statement.cases)
    return blocks


def _header_node(statement: cst.CSTNode) -> cst.CSTNode:
    for attribute in ("target", "test", "items"):
        value = getattr(statement, attribute, None)
        if isinstance(value, cst.CSTNode):
            return value
        if isinstance(value, (list, tuple)) and value:
            return value[0]
    return statement
