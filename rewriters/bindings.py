"""Which local names are surely bound at each point of a function (definite assignment).

    def f(x, flag, n):              bound at entry of each statement (must / may):
        if flag:                        {x, flag, n}
            y = x * 2                   {x, flag, n}
        for i in range(n):              {x, flag, n}            may: + y
            z = x + i                   {x, flag, n, i}         may: + y, z
        print(x.sum())                  {x, flag, n}            may: + y, i, z
        return y                        y may be unbound here: eager raises UnboundLocalError

`must` is the set of names bound on every path to the point (None when the
point cannot be reached: after `return`, `raise`, `break`, `continue`);
`may` the names bound on some path. The outliner asks it where a region is
called: an input not in `must` may be unbound, so the call passes `UNBOUND`
for it (`carve.rewriters.unbound`) and the region turns that back into an
unbound local; an output not in `must` after the region is deleted again
when it comes back `UNBOUND`.

The analysis is conservative where Python is: a loop body may run zero times,
a `try` body may stop at any statement, an `except ... as e` target is
deleted when its handler ends, a `match` may match no case, and a `with`
body may stop early when its context manager suppresses the exception
(managers known not to suppress, such as `torch.no_grad()`, are trusted).
A walrus inside a conditional part of an expression (`a if c else (b := 1)`,
`c and (b := 1)`, a comprehension) only may bind.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable
from typing import cast

import libcst as cst

from carve.rewriters.liveness import bound_names, reads_and_writes, target_names
from carve.rewriters.scopes import OwnScopeVisitor

# Context managers that never swallow an exception: a `with` body under them ends early
# only by raising out of the `with` as well.
NON_SUPPRESSING_MANAGERS = frozenset({
    "open", "torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
    "torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.autocast",
    "torch.autograd.no_grad", "torch.autograd.enable_grad", "torch.autograd.set_grad_enabled",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.grad_mode.enable_grad",
    "torch.autograd.grad_mode.inference_mode", "torch.autograd.profiler.record_function",
    "torch.profiler.record_function", "torch.random.fork_rng", "torch.device",
    "torch.autograd.set_detect_anomaly", "torch.autograd.detect_anomaly",
})


@dataclass(frozen=True)
class State:
    must: frozenset[str] | None  # None: unreachable
    may: frozenset[str]

    def surely_bound(self, name: str) -> bool:
        return self.must is None or name in self.must

    def surely_unbound(self, name: str) -> bool:
        return self.must is not None and name not in self.may

    def join(self, other: "State") -> "State":
        if self.must is None:
            return State(other.must, self.may | other.may)
        if other.must is None:
            return State(self.must, self.may | other.may)
        return State(self.must & other.must, self.may | other.may)

    def bind(self, surely: set[str] | frozenset[str], maybe: set[str] | frozenset[str] = frozenset()) -> "State":
        must = None if self.must is None else self.must | surely
        return State(must, self.may | surely | maybe)

    def unbind(self, names: set[str] | frozenset[str]) -> "State":
        must = None if self.must is None else self.must - names
        return State(must, self.may - names)

    def forget(self, names: set[str] | frozenset[str]) -> "State":
        """`names` may have been deleted (on some path): no longer surely bound."""
        return State(None if self.must is None else self.must - names, self.may)

    def unreachable(self) -> "State":
        return State(None, self.may)


UNREACHABLE = State(None, frozenset())


# Called with (name, state) for every read of a local name that may be unbound there.
OnRead = Callable[[str, cst.CSTNode], None]


class Bindings:
    """Definite-assignment analysis over the statements of one function."""

    def __init__(self, locals_: set[str], manager_name: Callable[[cst.BaseExpression], str | None] | None = None,
                 on_read: OnRead | None = None, facts: dict | None = None) -> None:
        self.locals = locals_
        self.manager_name = manager_name or (lambda expression: None)
        self.on_read = on_read
        # id(node) -> (node, reads, writes, surely, maybe): analyses of one function share it.
        self.facts = facts if facts is not None else {}

    def reporting(self, on_read: OnRead | None) -> "Bindings":
        """The same analysis, reporting maybe-unbound reads to `on_read`."""
        return Bindings(self.locals, self.manager_name, on_read, self.facts)

    def _facts(self, node: cst.CSTNode):
        facts = self.facts.get(id(node))
        if facts is None:
            reads, writes = reads_and_writes(node)
            surely, maybe = _walrus_binds(node)
            facts = self.facts[id(node)] = (node, reads, writes, surely, maybe)
        return facts

    @staticmethod
    def entry(func: cst.FunctionDef, locals_: set[str]) -> State:
        params = func.params
        names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                names.add(star.name.value)
        names &= locals_
        return State(frozenset(names), frozenset(names))

    # -- blocks and statements ---------------------------------------------------------------
    def block(self, block: cst.BaseSuite | list, state: State) -> State:
        for statement in _statements(block):
            state = self.statement(statement, state)
        return state

    def statement(self, node: cst.CSTNode, state: State) -> State:
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in node.body:
                state = self.small(small, state)
            return state
        if isinstance(node, cst.BaseSmallStatement):
            return self.small(node, state)
        if isinstance(node, cst.If):
            return self._if(node, state)
        if isinstance(node, (cst.For, cst.While)):
            return self._loop(node, state)
        if isinstance(node, cst.With):
            return self._with(node, state)
        if isinstance(node, cst.Try) or type(node).__name__ == "TryStar":
            return self._try(node, state)
        if isinstance(node, cst.Match):
            return self._match(node, state)
        if isinstance(node, cst.FunctionDef):
            for decorator in node.decorators:
                state = self.expression(decorator.decorator, state)
            self._reads(node.params, state, defaults_only=True)
            return state.bind(self._local({node.name.value}))
        if isinstance(node, cst.ClassDef):
            self._reads(node, state)
            return state.bind(self._local({node.name.value}))
        # Anything else: reads checked, every binding only possible.
        self._reads(node, state)
        return state.bind(set(), self._local(bound_names(node)))

    def small(self, small: cst.BaseSmallStatement, state: State) -> State:
        if isinstance(small, (cst.Return, cst.Raise)):
            value = small.value if isinstance(small, cst.Return) else small.exc
            if value is not None:
                state = self.expression(value, state)
            if isinstance(small, cst.Raise) and small.cause is not None:
                state = self.expression(small.cause.item, state)
            return state.unreachable()
        if isinstance(small, (cst.Break, cst.Continue)):
            return state.unreachable()
        if isinstance(small, cst.Del):
            self._reads(small, state)
            return state.unbind(self._local(bound_names(small)))
        if isinstance(small, (cst.Global, cst.Nonlocal, cst.Pass)):
            return state
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            names = self._local(bound_names(small))
            return state.bind(names)
        _, reads, writes, surely, maybe = self._facts(small)
        surely = set(surely)
        for name in reads:
            self._check(name, state, small)
        if isinstance(small, (cst.Assign, cst.AugAssign)) or (isinstance(small, cst.AnnAssign) and small.value is not None):
            targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
            for target in targets:
                surely |= target_names(target)
        return state.bind(self._local(surely), self._local(maybe | writes))

    def expression(self, node: cst.CSTNode, state: State) -> State:
        """Check the reads of an expression evaluated at `state`; add its walrus bindings."""
        _, reads, writes, surely, maybe = self._facts(node)
        for name in reads:
            self._check(name, state, node)
        return state.bind(self._local(surely), self._local(maybe | writes))

    # -- compound statements -----------------------------------------------------------------
    def child_entries(self, node: cst.CSTNode, state: State) -> list[State]:
        """The state at the start of each block of `node`, in `analysis.child_blocks` order.

        Reads are not reported (the caller walks the blocks itself)."""
        return self.reporting(None)._entries(node, state)

    def _entries(self, node: cst.CSTNode, state: State) -> list[State]:
        if isinstance(node, cst.If):
            after_test = self.expression(node.test, state)
            entries = [after_test]
            if isinstance(node.orelse, cst.If):
                entries += self._entries(node.orelse, after_test)
            elif isinstance(node.orelse, cst.Else):
                entries.append(after_test)
            return entries
        if isinstance(node, (cst.For, cst.While)):
            head = self._loop_head(node, state)
            body = head.bind(self._local(target_names(node.target))) if isinstance(node, cst.For) else head
            entries = [body]
            if node.orelse is not None:
                entries.append(head)
            return entries
        if isinstance(node, cst.With):
            return [self._with_entry(node, state)]
        if isinstance(node, cst.Try) or type(node).__name__ == "TryStar":
            node = cast("cst.Try | cst.TryStar", node)
            entries = [state]
            handler_entry = self._handler_entry(node, state)
            body_end = self.block(node.body, state)
            ends = []
            for handler in node.handlers:
                entry = handler_entry
                if handler.type is not None:
                    entry = self.expression(handler.type, entry)
                entry = entry.bind(self._handler_names(handler))
                entries.append(entry)
                ends.append(self.block(handler.body, entry).unbind(self._handler_names(handler)))
            if node.orelse is not None:
                entries.append(body_end)
                body_end = self.block(node.orelse.body, body_end)
            if node.finalbody is not None:
                normal = body_end
                for end in ends:
                    normal = normal.join(end)
                entries.append(normal.join(self._interrupted(node, state)))
            return entries
        if isinstance(node, cst.Match):
            after_subject = self.expression(node.subject, state)
            captures: set[str] = set()
            for case in node.cases:
                captures |= self._local(bound_names(case.pattern))
            failed = after_subject.bind(set(), captures)
            entries = []
            for case in node.cases:
                entry = failed.bind(*self._pattern_binds(case.pattern, failed))
                if case.guard is not None:
                    entry = self.expression(case.guard, entry)
                entries.append(entry)
            return entries
        return [state for _ in range(_block_count(node))]

    def _if(self, node: cst.If, state: State) -> State:
        after_test = self.expression(node.test, state)
        body_end = self.block(node.body, after_test)
        if isinstance(node.orelse, cst.If):
            other = self._if(node.orelse, after_test)
        elif isinstance(node.orelse, cst.Else):
            other = self.block(node.orelse.body, after_test)
        else:
            other = after_test
        return body_end.join(other)

    def _loop_head(self, node: cst.For | cst.While, state: State) -> State:
        """Where each iteration starts: the state before the loop, less what the body may delete,
        plus what the body may bind (on a later iteration)."""
        if isinstance(node, cst.For):
            state = self.expression(node.iter, state)
        else:
            state = self.expression(node.test, state)
        body_binds = self._local(bound_names(node.body))
        if isinstance(node, cst.For):
            body_binds |= self._local(target_names(node.target))
        return state.forget(_deleted(node.body, self.locals)).bind(set(), body_binds)

    def _loop(self, node: cst.For | cst.While, state: State) -> State:
        head = self._loop_head(node, state)
        body_entry = head.bind(self._local(target_names(node.target))) if isinstance(node, cst.For) else head
        if isinstance(node, cst.While):
            self.expression(node.test, head)  # the test runs again at every iteration
        self.block(node.body, body_entry)  # reads inside the body
        after = head
        if node.orelse is not None:
            after = self.block(node.orelse.body, head)
        if _breaks(node.body):
            after = after.join(head)
        return after

    def _with_entry(self, node: cst.With, state: State) -> State:
        for item in node.items:
            state = self.expression(item.item, state)
            if item.asname is not None:
                state = state.bind(self._local(target_names(item.asname.name)))
        return state

    def _with(self, node: cst.With, state: State) -> State:
        entry = self._with_entry(node, state)
        end = self.block(node.body, entry)
        if all(self._never_suppresses(item.item) for item in node.items):
            return end
        # The manager may swallow an exception raised anywhere in the body.
        return end.join(entry.forget(_deleted(node.body, self.locals)).bind(set(), self._local(bound_names(node.body))))

    def _never_suppresses(self, expression: cst.BaseExpression) -> bool:
        if isinstance(expression, cst.Call):
            expression = expression.func
        return self.manager_name(expression) in NON_SUPPRESSING_MANAGERS

    def _handler_entry(self, node, state: State) -> State:
        """Where an exception raised anywhere in the try body lands."""
        return state.forget(_deleted(node.body, self.locals)).bind(set(), self._local(bound_names(node.body)))

    def _interrupted(self, node, state: State) -> State:
        """A finally block after an exception from anywhere in the try statement."""
        everything = set()
        deleted = set()
        for block in [node.body, *(h.body for h in node.handlers),
                      *([node.orelse.body] if node.orelse is not None else [])]:
            everything |= bound_names(block)
            deleted |= _deleted(block, self.locals)
        for handler in node.handlers:
            deleted |= self._handler_names(handler)
        return state.forget(deleted).bind(set(), self._local(everything))

    def _handler_names(self, handler) -> set[str]:
        if handler.name is not None:
            return self._local(target_names(handler.name.name))
        return set()

    def _try(self, node, state: State) -> State:
        handler_entry = self._handler_entry(node, state)
        end = self.block(node.body, state)
        if node.orelse is not None:
            end = self.block(node.orelse.body, end)
        for handler in node.handlers:
            entry = handler_entry
            if handler.type is not None:
                entry = self.expression(handler.type, entry)
            names = self._handler_names(handler)
            end = end.join(self.block(handler.body, entry.bind(names)).unbind(names))
        if node.finalbody is not None:
            self.block(node.finalbody.body, end.join(self._interrupted(node, state)))  # reads
            end = self.reporting(None).block(node.finalbody.body, end)
        return end

    def _match(self, node: cst.Match, state: State) -> State:
        after_subject = self.expression(node.subject, state)
        # A case that fails (or whose guard is false) may leave some of its captures bound.
        captures: set[str] = set()
        for case in node.cases:
            captures |= self._local(bound_names(case.pattern))
        failed = after_subject.bind(set(), captures)
        ends = UNREACHABLE
        for case in node.cases:
            surely, maybe = self._pattern_binds(case.pattern, failed)
            entry = failed.bind(surely, maybe)
            if case.guard is not None:
                entry = self.expression(case.guard, entry)
            ends = ends.join(self.block(case.body, entry))
            if case.guard is None and _irrefutable(case.pattern):
                return ends  # later cases never run, and no value leaves the match unmatched
        return ends.join(failed)

    def _pattern_binds(self, pattern: cst.MatchPattern, state: State) -> tuple[set[str], set[str]]:
        """(surely, maybe) bound when `pattern` matched; the pattern's value reads are checked."""
        self._reads(pattern, state)
        # Every alternative of an or-pattern binds the same names (Python requires it).
        return self._local(bound_names(pattern)), set()

    # -- helpers -----------------------------------------------------------------------------
    def _local(self, names) -> set[str]:
        return {name for name in names if name in self.locals}

    def _check(self, name: str, state: State, node: cst.CSTNode) -> None:
        if self.on_read is not None and name in self.locals and not state.surely_bound(name):
            self.on_read(name, node)

    def _reads(self, node: cst.CSTNode, state: State, defaults_only: bool = False) -> None:
        if self.on_read is None:
            return
        if defaults_only:
            params = cast(cst.Parameters, node)  # with defaults_only, a function's parameters
            for param in (*params.posonly_params, *params.params, *params.kwonly_params):
                if param.default is not None:
                    self.expression(param.default, state)
            return
        for name in reads_and_writes(node)[0]:
            self._check(name, state, node)


def _statements(block) -> list:
    if isinstance(block, list):
        return block
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]


def _block_count(node: cst.CSTNode) -> int:
    from carve.rewriters.analysis import child_blocks

    return len(child_blocks(node))


def _irrefutable(pattern: cst.MatchPattern) -> bool:
    if isinstance(pattern, cst.MatchAs):
        return pattern.pattern is None or _irrefutable(pattern.pattern)
    if isinstance(pattern, cst.MatchOr):
        return any(_irrefutable(element.pattern) for element in pattern.patterns)
    return False


class _Deleted(OwnScopeVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Del(self, node: cst.Del) -> None:
        self.names |= target_names(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.names |= target_names(node.name.name)  # deleted when the handler ends

    def visit_ExceptStarHandler(self, node) -> None:
        if node.name is not None:
            self.names |= target_names(node.name.name)


def _deleted(node: cst.CSTNode, locals_: set[str]) -> set[str]:
    visitor = _Deleted()
    node.visit(visitor)
    return visitor.names & locals_


class _Breaks(OwnScopeVisitor):
    """A `break` of this loop (not of a loop nested in it, nor of a nested def or class)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Break(self, node) -> None:
        self.found = True

    def visit_For(self, node: cst.For) -> bool:
        if node.orelse is not None:
            node.orelse.visit(self)  # an inner loop's else belongs to this loop's body
        return False

    def visit_While(self, node: cst.While) -> bool:
        if node.orelse is not None:
            node.orelse.visit(self)
        return False


def _breaks(body: cst.BaseSuite) -> bool:
    visitor = _Breaks()
    body.visit(visitor)
    return visitor.found


class _Walrus(cst.CSTVisitor):
    """Walrus targets of an expression: surely bound, or bound only on some evaluations."""

    def __init__(self) -> None:
        self.surely: set[str] = set()
        self.maybe: set[str] = set()
        self.conditional = 0

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        (self.maybe if self.conditional else self.surely).update(target_names(node.target))

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_IfExp(self, node: cst.IfExp) -> bool:
        node.test.visit(self)
        self.conditional += 1
        node.body.visit(self)
        node.orelse.visit(self)
        self.conditional -= 1
        return False

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> bool:
        node.left.visit(self)
        self.conditional += 1
        node.right.visit(self)
        self.conditional -= 1
        return False

    def _comprehension(self, node) -> bool:
        node.for_in.iter.visit(self)  # the first iterable is always evaluated
        self.conditional += 1
        for part in ("elt", "key", "value"):
            child = getattr(node, part, None)
            if child is not None:
                child.visit(self)
        generator = node.for_in
        for condition in generator.ifs:
            condition.visit(self)
        if generator.inner_for_in is not None:
            generator.inner_for_in.visit(self)
        self.conditional -= 1
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _walrus_binds(node: cst.CSTNode) -> tuple[set[str], set[str]]:
    visitor = _Walrus()
    node.visit(visitor)
    return visitor.surely, visitor.maybe
