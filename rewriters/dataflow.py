"""The control-flow graph of one function, and what flows along it: computed once per function.

    def f(x, n):                    reads    writes   live in     live out
        y = x * 2                   x        y        {x, n}      {y, n}
        for i in range(n):          n, y     i, y     {y, n}      {y}
            y = y + i               y, i     y        {y, i}      {y}       the next iteration reads y
        total = y.sum()             y        total    {y}         {total}
        y = 0                                y        {total}     {total}   this y is never read
        return total                total             {total}     {}

(globals and builtins such as `range` count as reads too; the passes keep the locals.)

`Dataflow(func)` builds the graph over the function's statements (if/elif/else,
for/while with else, break/continue, return/raise, try/except/else/finally, with,
match) and answers, per statement: the names it reads and writes (the whole
statement's, for a compound one, as `liveness.reads_and_writes` says), the names
live where it starts and where it ends normally (read later on some path before
being bound again), and the definitions reaching it. The passes ask it instead of
walking the same statements again: a graph region's outputs are the names it
writes that are live after its last statement.

The graph is conservative where Python is: any statement of a `try` body (or of a
`with` body, whose manager may swallow an exception) may jump to the handlers
before it binds anything; a `finally` block goes on to wherever the try statement
went (on, out with the exception, or to a `break`/`continue`/`return` passing
through it); a `for` or a `case` binds its targets only when it goes on into the
body; a walrus (`c and (n := f())`) may bind but never surely does. Nested
functions, lambdas and comprehensions are their own scopes: their reads of this
function's names are reads where they are defined. A closure or a generator may
run later than that, so `closure_reads_outside(statements)` names what those made
outside `statements` read; the outliner keeps those outputs whatever the liveness
says.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import libcst as cst

from carve.rewriters.liveness import Uses, param_names, reads_and_writes, target_names, target_uses

# The jumps a `finally` block may have to continue after it runs.
_BREAK, _CONTINUE, _RETURN = "break", "continue", "return"


@dataclass(frozen=True)
class Definition:
    """`name` bound by `node`: a statement line, a loop's target, a `with` item, an except
    handler, a `case`, or the function itself for a parameter."""

    name: str
    node: cst.CSTNode = field(compare=False, hash=False)
    node_id: int = field(repr=False)


class _Node:
    """One point of the graph: a statement line, a compound statement's header part, or a join."""

    __slots__ = ("code", "reads", "writes", "kills", "deletes", "definitions", "successors", "predecessors",
                 "live_in", "live_out", "reach_in", "reach_out")

    def __init__(self, code: cst.CSTNode | None, reads: Iterable[str], writes: Iterable[str],
                 kills: Iterable[str], deletes: Iterable[str]) -> None:
        self.code = code
        self.reads = frozenset(reads)
        self.writes = frozenset(writes)
        self.kills = frozenset(kills)        # surely bound when the node goes on: ends a value's life
        self.deletes = frozenset(deletes)    # `del x`: a read of x, and the end of its definitions
        self.definitions = frozenset(Definition(name, code, id(code)) for name in self.writes if code is not None)
        self.successors: list[_Node] = []
        self.predecessors: list[_Node] = []
        self.live_in: frozenset[str] = frozenset()
        self.live_out: frozenset[str] = frozenset()
        self.reach_in: frozenset[Definition] = frozenset()
        self.reach_out: frozenset[Definition] = frozenset()


@dataclass
class _Loop:
    break_to: _Node
    continue_to: _Node


@dataclass
class _Finally:
    entry: _Node
    pending: set[str] = field(default_factory=set)  # jumps that pass through the block


class Dataflow:
    """Reads, writes, liveness and reaching definitions of one function's statements."""

    def __init__(self, func: cst.FunctionDef) -> None:
        self.func = func
        # id(node) -> (node, reads, writes): the node is kept so its id stays its own.
        self._uses: dict[int, tuple[cst.CSTNode, list[str], set[str]]] = {}
        builder = _Builder(func, self.reads_and_writes)
        self._points = builder.points
        self._nodes = builder.nodes
        # Each nested function, lambda and generator expression, with the names it reads.
        self._closures = [(node, set(self.reads(node))) for node in _nested_scopes(func.body)]
        _solve_liveness(self._nodes)
        _solve_reaching_definitions(self._nodes)

    # -- per statement -------------------------------------------------------------------
    def reads_and_writes(self, node: cst.CSTNode) -> tuple[list[str], set[str]]:
        """`liveness.reads_and_writes(node)`, walked once per node (also for nodes made by a
        later pass, such as a hoisted assignment). Shared: callers must not change them."""
        known = self._uses.get(id(node))
        if known is None:
            reads, writes = reads_and_writes(node)
            known = self._uses[id(node)] = (node, reads, writes)
        return known[1], known[2]

    def reads(self, node: cst.CSTNode) -> list[str]:
        return self.reads_and_writes(node)[0]

    def writes(self, node: cst.CSTNode) -> set[str]:
        return self.reads_and_writes(node)[1]

    def block_reads_and_writes(self, statements: Iterable[cst.CSTNode]) -> tuple[list[str], set[str]]:
        """Of statements run in order: names read before the block binds them, and names bound."""
        reads: list[str] = []
        writes: set[str] = set()
        for statement in statements:
            statement_reads, statement_writes = self.reads_and_writes(statement)
            reads += [name for name in statement_reads if name not in writes and name not in reads]
            writes |= statement_writes
        return reads, writes

    def closure_reads_outside(self, statements: Iterable[cst.CSTNode]) -> set[str]:
        """Names read by the closures and generator expressions not made by `statements`: they
        may run after `statements` (a generator made before them, consumed after), and see what
        `statements` bound."""
        if not self._closures:
            return set()
        inside = {id(node) for statement in statements for node in _nested_scopes(statement)}
        return {name for node, reads in self._closures if id(node) not in inside for name in reads}

    def knows(self, statement: cst.CSTNode) -> bool:
        """Is `statement` one of the function's own (not one a pass made)?"""
        return id(statement) in self._points

    def live_in(self, statement: cst.CSTNode) -> frozenset[str]:
        """Names whose value where `statement` starts may be read later."""
        return self._point(statement)[0].live_in

    def live_out(self, statement: cst.CSTNode) -> frozenset[str]:
        """Names whose value where `statement` ends normally (goes on to the next) may be read later."""
        return self._point(statement)[1].live_in

    def reaching_definitions(self, statement: cst.CSTNode) -> frozenset[Definition]:
        """The bindings that may hold where `statement` starts."""
        return self._point(statement)[0].reach_out

    def _point(self, statement: cst.CSTNode) -> tuple[_Node, _Node]:
        return self._points[id(statement)][1:]


class _Builder:
    """Builds the graph; `points[id(statement)]` = (statement, its start, its normal end)."""

    def __init__(self, func: cst.FunctionDef, uses: Uses) -> None:
        self.uses = uses
        self.nodes: list[_Node] = []
        self.points: dict[int, tuple[cst.CSTNode, _Node, _Node]] = {}
        self.frames: list[_Loop | _Finally] = []
        self.exit = _Node(None, (), (), (), ())  # the function's end: a return, or an exception leaving it
        self.nodes.append(self.exit)
        # Where an exception goes from each point: innermost handlers (or finally, or with) last.
        self.raise_targets: list[list[_Node]] = [[self.exit]]
        params = param_names(func.params)
        entry = self._new(func, writes=params)
        _link(self._block(func.body, [entry]), [self.exit])

    # -- nodes ---------------------------------------------------------------------------
    def _new(self, code: cst.CSTNode | None = None, reads: Iterable[str] = (), writes: Iterable[str] = (),
             kills: Iterable[str] | None = None, deletes: Iterable[str] = ()) -> _Node:
        writes = set(writes)
        node = _Node(code, reads, writes, writes if kills is None else kills, deletes)
        self.nodes.append(node)
        if len(self.raise_targets) > 1:
            # Inside a try (or with) body: an exception may leave from this point.
            _link([node], self.raise_targets[-1])
        return node

    def _expression(self, code: cst.CSTNode) -> _Node:
        reads, writes = self.uses(code)
        return self._new(code, reads, writes, kills=writes - _walrus_targets(code))

    # -- blocks and statements -------------------------------------------------------------
    def _block(self, block: cst.BaseSuite, predecessors: list[_Node]) -> list[_Node]:
        """Links the block after `predecessors`; returns the nodes that go on after it."""
        ends = predecessors
        for statement in _statements(block):
            start = self._new()
            _link(ends, [start])
            end = self._new()
            _link(self._statement(statement, start), [end])
            self.points[id(statement)] = (statement, start, end)
            ends = [end]
        return ends

    def _statement(self, statement: cst.CSTNode, start: _Node) -> list[_Node]:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            return self._line(statement, start)
        if isinstance(statement, cst.If):
            return self._if(statement, [start])
        if isinstance(statement, cst.While):
            return self._while(statement, start)
        if isinstance(statement, cst.For):
            return self._for(statement, start)
        if isinstance(statement, cst.With):
            return self._with(statement, start)
        if isinstance(statement, (cst.Try, cst.TryStar)):
            return self._try(statement, start)
        if isinstance(statement, cst.Match):
            return self._match(statement, start)
        reads, writes = self.uses(statement)
        # A nested def or class binds its name; anything else only may bind.
        surely = writes if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) else set()
        node = self._new(statement, reads, writes, kills=surely)
        _link([start], [node])
        return [node]

    def _line(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite, start: _Node) -> list[_Node]:
        smalls = list(line.body)
        jump = next((i for i, small in enumerate(smalls)
                     if isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue))), None)
        # What follows a jump on the same line never runs.
        code = line if jump is None or jump == len(smalls) - 1 else cst.SimpleStatementLine(smalls[:jump + 1])
        reads, writes = self.uses(code)
        deletes = {name for small in smalls[:None if jump is None else jump + 1]
                   if isinstance(small, cst.Del) for name in target_names(small.target)}
        node = self._new(line, reads, writes, kills=writes - _walrus_targets(code), deletes=deletes)
        _link([start], [node])
        if jump is None:
            return [node]
        last = smalls[jump]
        if isinstance(last, cst.Raise):
            _link([node], self.raise_targets[-1])
        else:
            self._jump(node, _RETURN if isinstance(last, cst.Return) else _BREAK if isinstance(last, cst.Break)
                       else _CONTINUE)
        return []

    def _jump(self, source: _Node, kind: str) -> None:
        """A break, continue or return: to its loop's target or the exit, through each `finally`
        on the way (which then goes on to the same place)."""
        for frame in reversed(self.frames):
            if isinstance(frame, _Finally):
                _link([source], [frame.entry])
                frame.pending.add(kind)
                return
            if kind != _RETURN:
                _link([source], [frame.break_to if kind == _BREAK else frame.continue_to])
                return
        _link([source], [self.exit])

    def _if(self, statement: cst.If, predecessors: list[_Node]) -> list[_Node]:
        test = self._expression(statement.test)
        _link(predecessors, [test])
        ends = self._block(statement.body, [test])
        if isinstance(statement.orelse, cst.If):
            return ends + self._if(statement.orelse, [test])
        if isinstance(statement.orelse, cst.Else):
            return ends + self._block(statement.orelse.body, [test])
        return ends + [test]

    def _while(self, statement: cst.While, start: _Node) -> list[_Node]:
        test = self._expression(statement.test)
        _link([start], [test])
        after = self._new()
        self.frames.append(_Loop(break_to=after, continue_to=test))
        _link(self._block(statement.body, [test]), [test])
        self.frames.pop()
        self._else(statement.orelse, test, after)
        return [after]

    def _for(self, statement: cst.For, start: _Node) -> list[_Node]:
        iterate = self._expression(statement.iter)
        _link([start], [iterate])
        # Each step either binds the target and runs the body, or ends the loop leaving it as it was.
        step = self._new()
        _link([iterate], [step])
        reads, writes = target_uses(statement.target)
        target = self._new(statement.target, reads, writes)
        _link([step], [target])
        after = self._new()
        self.frames.append(_Loop(break_to=after, continue_to=step))
        _link(self._block(statement.body, [target]), [step])
        self.frames.pop()
        self._else(statement.orelse, step, after)
        return [after]

    def _else(self, orelse: cst.Else | None, exhausted: _Node, after: _Node) -> None:
        """A loop's `else` runs when it ends without a break."""
        _link(self._block(orelse.body, [exhausted]) if orelse is not None else [exhausted], [after])

    def _with(self, statement: cst.With, start: _Node) -> list[_Node]:
        ends = [start]
        for item in statement.items:
            reads, writes = self.uses(item)
            node = self._new(item, reads, writes)
            _link(ends, [node])
            ends = [node]
        after = self._new()
        # The manager may swallow an exception raised anywhere in the body and go on after it.
        self.raise_targets.append([after])
        ends = self._block(statement.body, ends)
        self.raise_targets.pop()
        _link(ends, [after])
        return [after]

    def _try(self, statement: cst.Try | cst.TryStar, start: _Node) -> list[_Node]:
        final = None
        finalbody = statement.finalbody
        if finalbody is not None:
            final = _Finally(self._new())
            self.frames.append(final)
            self.raise_targets.append([final.entry])
        handlers: list[cst.ExceptHandler | cst.ExceptStarHandler] = list(statement.handlers)
        # Each handler first tests its type; no match goes on to the next, then out.
        tests = [self._expression(h.type) if h.type is not None else self._new(h) for h in handlers]
        for test, next_test in zip(tests, tests[1:]):
            _link([test], [next_test])
        if tests:
            _link(tests[-1:], self.raise_targets[-1])
        self.raise_targets.append(tests[:1] or self.raise_targets[-1])
        body_start = self._new()  # an exception raised before the body binds anything leaves from here
        _link([start], [body_start])
        ends = self._block(statement.body, [body_start])
        self.raise_targets.pop()
        if statement.orelse is not None:
            ends = self._block(statement.orelse.body, ends)
        star = isinstance(statement, cst.TryStar)
        for index, (handler, test) in enumerate(zip(handlers, tests)):
            names = target_names(handler.name.name) if handler.name is not None else set()
            bind = self._new(handler, writes=names)
            _link([test], [bind])
            handler_ends = self._block(handler.body, [bind])
            ends = ends + handler_ends
            if star and index + 1 < len(tests):
                _link(handler_ends, [tests[index + 1]])  # `except*`: later groups may match too
        if final is None or finalbody is None:
            return ends
        self.raise_targets.pop()
        self.frames.pop()
        _link(ends, [final.entry])
        ends = self._block(finalbody.body, [final.entry])
        # After the block: on, or the exception goes on out, or a jump through it goes on.
        _link(ends, self.raise_targets[-1])
        for kind in sorted(final.pending):
            for end in ends:
                self._jump(end, kind)
        return ends

    def _match(self, statement: cst.Match, start: _Node) -> list[_Node]:
        subject = self._expression(statement.subject)
        _link([start], [subject])
        failed = [subject]
        ends: list[_Node] = []
        for case in statement.cases:
            # The pattern's values and classes are read first; its captures bound only on a match.
            reads, writes = self.uses(case.pattern)
            test = self._new(case.pattern, reads)
            _link(failed, [test])
            bind = self._new(case, writes=writes)
            _link([test], [bind])
            failed, entry = [test], bind
            if case.guard is not None:
                entry = self._expression(case.guard)
                _link([bind], [entry])
                failed.append(entry)
            ends += self._block(case.body, [entry])
            if case.guard is None and _irrefutable(case.pattern):
                return ends  # `case _:` or `case x:` matches whatever the earlier cases did not
        return ends + failed


def _irrefutable(pattern: cst.MatchPattern) -> bool:
    return isinstance(pattern, cst.MatchAs) and pattern.pattern is None


def _link(sources: Iterable[_Node], targets: Iterable[_Node]) -> None:
    targets = list(targets)
    for source in sources:
        for target in targets:
            if target not in source.successors:
                source.successors.append(target)
                target.predecessors.append(source)


def _solve_liveness(nodes: list[_Node]) -> None:
    """Backward: live in = reads, and what is live after unless surely bound here."""
    changed = True
    while changed:
        changed = False
        for node in reversed(nodes):
            live_out = frozenset().union(*(s.live_in for s in node.successors))
            live_in = node.reads | node.deletes | (live_out - node.kills)
            if live_in != node.live_in or live_out != node.live_out:
                node.live_in, node.live_out, changed = live_in, live_out, True


def _solve_reaching_definitions(nodes: list[_Node]) -> None:
    """Forward: a node's definitions replace those of the names it surely binds or deletes."""
    changed = True
    while changed:
        changed = False
        for node in nodes:
            reach_in = frozenset().union(*(p.reach_out for p in node.predecessors))
            ended = node.kills | node.deletes
            reach_out = node.definitions | frozenset(d for d in reach_in if d.name not in ended)
            if reach_in != node.reach_in or reach_out != node.reach_out:
                node.reach_in, node.reach_out, changed = reach_in, reach_out, True


def _nested_scopes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The outermost nested functions, lambdas and generator expressions in `node`: code that
    may run later than where it is made."""

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.CSTNode] = []

        def on_visit(self, visited: cst.CSTNode) -> bool:
            if isinstance(visited, (cst.FunctionDef, cst.Lambda, cst.GeneratorExp)):
                self.found.append(visited)
                return False
            return True

    finder = Finder()
    node.visit(finder)
    return finder.found


def _walrus_targets(node: cst.CSTNode) -> set[str]:
    """Names a walrus in `node` binds: only may-bind (`c and (n := f())`)."""

    class Walrus(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: set[str] = set()

        def visit_NamedExpr(self, expression: cst.NamedExpr) -> None:
            self.names |= target_names(expression.target)

    walrus = Walrus()
    node.visit(walrus)
    return walrus.names


def _statements(block: cst.BaseSuite) -> list[cst.CSTNode]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [block]
