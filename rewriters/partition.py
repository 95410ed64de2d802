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
one. In a function with two or more backward passes, a run also ends where the
backward passes reaching its statements change (rewriters/backward_roots.py), so
that each backward frees only the regions it reaches, as in eager.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeGuard, cast

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, child_blocks
from carve.rewriters.backward_roots import BackwardRoots
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.findings import Finding
from carve.rewriters.liveness import bound_names, target_names
from carve.rewriters.loop_trip_counts import first_parameter, loops_in, trip_count_may_vary
from carve.rewriters.names import dotted_name, integer_value
from carve.rewriters.rules import RULES, rule
from carve.rewriters.rules import crv006_break_in_loop as break_in_loop
from carve.rewriters.rules import crv019_python_side_effect as python_side_effect

# `for` loops over range() are unrolled into the graph only up to this many iterations.
MAX_UNROLLED_ITERATIONS = 32
# Builtins whose result is a Python object a graph cannot return anew on each call
# (`it = iter(xs)`): assignments of their result stay Python.
PYTHON_OBJECT_BUILTINS = frozenset({"iter", "enumerate", "zip", "map", "filter", "reversed", "range", "object"})

# A statement of a block. The body of `if c: return x` is a one-line suite, which stands for its
# line (see `_statements`); `as_statement_line` makes it a line where it is emitted.
Statement = cst.BaseStatement | cst.SimpleStatementSuite


@dataclass
class GraphRun:
    statements: list[Statement]

    def __str__(self) -> str:
        return f"GraphRun [{'; '.join(_source_line(statement) for statement in self.statements)}]"

    @property
    def ends_with_return(self) -> bool:
        return _returns_at_end(self.statements[-1])


@dataclass
class EagerStatement:
    statement: Statement
    findings: list[Finding]
    # A container update whose computed arguments go to the graph before it, whatever they call
    # (`preds.append(model(x))`): see `_loop_carried_update`.
    arguments_to_graph: bool = False

    def __str__(self) -> str:
        codes = ", ".join(sorted({finding.code for finding in self.findings}))
        return f"EagerStatement ({codes}): {_source_line(self.statement)}"

    @property
    def breaks(self) -> list[Finding]:
        return [f for f in self.findings if rule(f.code).lint_default]


@dataclass
class Compound:
    """A compound statement kept as Python control flow; `blocks[i]` partitions its i-th body."""

    statement: cst.BaseCompoundStatement
    header_findings: list[Finding]
    blocks: list[list["Item"]] = field(default_factory=list)

    def __str__(self) -> str:
        blocks = "\n".join(format_partition(block, indent=1) for block in self.blocks)
        return f"Compound({_source_line(self.statement)}):\n{blocks}"

    @property
    def header_breaks(self) -> list[Finding]:
        # A loop, try or with reporting that its body breaks (the frame torch.compile would skip)
        # is not a break of the header itself.
        return [f for f in self.header_findings if rule(f.code).lint_default and not rule(f.code).skips_frame]


Item = GraphRun | EagerStatement | Compound


def format_partition(items: list[Item], indent: int = 0) -> str:
    """The partition as text, one item a line, a compound's blocks indented under it:

        GraphRun [y = x * 2; z = y + 1]
        EagerStatement (CRV003): print(z)
        Compound(for i in range(n):):
            GraphRun [z = z * 3]
            EagerStatement (CRV019): xs.append(z)
        GraphRun [return z - 1]
    """
    pad = "    " * indent
    return "\n".join(pad + str(item).replace("\n", "\n" + pad) for item in items)


def _source_line(statement: cst.CSTNode) -> str:
    """A statement's first line of source, without comments or indentation."""
    lines = [line.strip() for line in cst.Module([]).code_for_node(statement).splitlines()]
    return next((line for line in lines if line and not line.startswith("#")), "")


def partition_block(
    block: cst.BaseSuite, analysis: FunctionAnalysis, guarded: bool = False, closures: "_Closures | None" = None,
    dataflow: Dataflow | None = None, loop_targets: frozenset[str] = frozenset(), in_loop: bool = False,
    backward: BackwardRoots | None = None, growing: "GrowingContainers | None" = None,
) -> list[Item]:
    """`guarded`: the block runs under a try or with, which may catch an exception raised
    mid-run; then each statement is its own region, so the statements before the one that
    raised have bound their names, as in eager. `dataflow`: the function's (built here if not
    given), which says what each statement reads and writes. `loop_targets`: the names the
    Python `for` loops around the block bind (see `_loop_indexed_load`). `in_loop`: the block
    runs once per iteration of a Python loop (see `_loop_carried_update`). `backward`: which
    backward passes reach each statement (built here if not given); a run ends where they
    change, so each backward frees only the regions it reaches (rewriters/backward_roots.py).
    `growing`: the function's lists whose length may change from call to call (built here if
    not given); a statement reading one stays Python (see `GrowingContainers`)."""
    items: list[Item] = []
    run: list[Statement] = []
    if dataflow is None:
        dataflow = Dataflow(analysis.func)
    if closures is None:
        closures = _Closures(dataflow)
        analysis.func.visit(closures)
    if backward is None:
        backward = BackwardRoots(analysis, dataflow)
    if growing is None:
        growing = GrowingContainers(analysis.func, dataflow)
    # The backward passes reaching the run's statements (the same for all that any reaches).
    run_roots: frozenset[int] = frozenset()

    def flush() -> None:
        nonlocal run_roots
        if run:
            items.append(GraphRun(list(run)))
            run.clear()
        run_roots = frozenset()

    for statement in _statements(block):
        if not run and _loop_indexed_load(statement, loop_targets) and not analysis.findings_of(statement):
            items.append(EagerStatement(statement, []))
        elif in_loop and _loop_carried_update(statement, block, analysis, dataflow):
            flush()
            items.append(EagerStatement(statement, analysis.findings_of(statement), arguments_to_graph=True))
        elif _graph_statement(statement, analysis, dataflow, loop_depth=0, nested=False) \
                and not closures.touched_by(statement) and not growing.read_by(statement):
            roots = backward.roots_of(statement)
            if roots and run_roots and roots != run_roots:
                flush()
            run_roots = roots or run_roots
            run.append(statement)
            if guarded or _returns_at_end(statement):
                flush()
        elif is_simple(statement) or isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            flush()
            items.append(EagerStatement(statement, analysis.findings_of(statement)))
        else:
            flush()
            # Neither a line nor a one-line suite: a compound statement.
            compound = Compound(cast(cst.BaseCompoundStatement, statement), analysis.findings_of(statement))
            catches = guarded or isinstance(statement, (cst.Try, cst.With)) or type(statement).__name__ == "TryStar"
            whole_body = not guarded and try_body_is_one_region(statement, analysis, closures, dataflow)
            targets = loop_targets | target_names(statement.target) if isinstance(statement, cst.For) else loop_targets
            loops = in_loop or isinstance(statement, (cst.For, cst.While))
            compound.blocks = [
                partition_block(
                    child, analysis, catches and not (whole_body and child is compound.statement.body), closures,
                    dataflow, targets, loops, backward, growing)
                for child in child_blocks(statement)
            ]
            items.append(compound)
    flush()
    return items


class GrowingContainers:
    """The lists (and deques) a function makes empty and grows in a loop whose trip count may
    change from call to call: their length is new on each call. A statement reading one stays
    Python; in a region, Dynamo would guard the length, compiling a graph per length until its
    recompile limit (and a list of floats, each value):

        policy_losses = []                              policy_losses = []
        for log_prob, R in zip(saved, returns):         for log_prob, R in zip(saved, returns):
            policy_losses.append(-log_prob * R)  ->         policy_losses.append(_region_0(log_prob, R))
        loss = torch.stack(policy_losses).sum()         loss = torch.stack(policy_losses).sum()   # Python
        loss.backward()                                 loss.backward()

    A read sees such a list when the list's empty binding reaches it (the function's dataflow):
    after `returns = torch.tensor(returns)`, `returns` is a tensor again. Loops whose trip count
    is fixed (`range(4)`, `self.blocks`, a shape) grow lists of one length: those are graph work.
    """

    def __init__(self, func: cst.FunctionDef, dataflow: Dataflow) -> None:
        self.dataflow = dataflow
        self_name = first_parameter(func)
        growers: dict[int, set[str]] = {}
        for loop in loops_in(func):
            if trip_count_may_vary(loop, self_name):
                growers[id(loop)] = _grown_names(loop.body)
        empty_lines = _lines_binding_empty_containers(func, set().union(*growers.values()))
        # ids of the lines binding a grown name to an empty container (`returns = []`)
        self.empty_bindings = {id(line) for line in empty_lines}
        made_empty = set().union(*(bound_names(line) for line in empty_lines))
        # ids of the loops that grow such a list, a new number of times on each call
        self.growing_loops = {loop for loop, names in growers.items() if names & made_empty}

    def read_by(self, statement: cst.CSTNode) -> bool:
        """Whether `statement` may read such a list other than to grow it (`outputs += [y]` in a
        loop the region unrolls reads no length), or holds a loop that grows one (unrolled, it
        would be a graph per trip count)."""
        if not self.empty_bindings or not self.dataflow.knows(statement):
            return False
        if _loops_within(statement) & self.growing_loops:
            return True
        reads = set(self.dataflow.reads_and_writes(statement)[0])
        return any(definition.name in reads and definition.node_id in self.empty_bindings
                   and not _only_grown(statement, definition.name)
                   for definition in self.dataflow.reaching_definitions(statement))


# Methods that add items to a list or deque, and the empty containers a function starts one as.
GROWING_METHODS = frozenset({"append", "extend", "insert", "appendleft", "extendleft"})
EMPTY_CONTAINER_CALLS = frozenset({"list", "deque", "collections.deque"})


def _grown_names(block: cst.CSTNode) -> set[str]:
    """Names `block` grows: `xs.append(...)`, `xs.insert(0, ...)`, `xs += [...]`."""

    class Growth(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: set[str] = set()

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False  # a nested def grows its lists when it is called

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in GROWING_METHODS and isinstance(func.value, cst.Name):
                self.names.add(func.value.value)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.operator, cst.AddAssign) and isinstance(node.target, cst.Name) \
                    and isinstance(node.value, (cst.List, cst.ListComp)):
                self.names.add(node.target.value)

    growth = Growth()
    block.visit(growth)
    return growth.names


def _loops_within(statement: cst.CSTNode) -> set[int]:
    """ids of `statement` itself if it is a loop, and of the loops inside it."""

    class Loops(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: set[int] = set()

        def visit_For(self, loop: cst.For) -> None:
            self.found.add(id(loop))

        def visit_While(self, loop: cst.While) -> None:
            self.found.add(id(loop))

    loops = Loops()
    statement.visit(loops)
    return loops.found


def _only_grown(statement: cst.CSTNode, name: str) -> bool:
    """Every mention of `name` in `statement` is a list growing (`name.append(...)`, `name += [...]`)."""

    class Mentions(cst.CSTVisitor):
        def __init__(self) -> None:
            self.growing = 0
            self.all = 0

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                self.all += 1

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in GROWING_METHODS \
                    and isinstance(func.value, cst.Name) and func.value.value == name:
                self.growing += 1

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            if isinstance(node.target, cst.Name) and node.target.value == name:
                self.growing += 1

    mentions = Mentions()
    statement.visit(mentions)
    return mentions.all == mentions.growing


def _lines_binding_empty_containers(func: cst.FunctionDef, names: set[str]) -> list[cst.SimpleStatementLine]:
    """The lines of `func` that bind one of `names` to an empty list or deque (`xs = []`)."""

    class EmptyBindings(cst.CSTVisitor):
        def __init__(self) -> None:
            self.lines: list[cst.SimpleStatementLine] = []

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> None:
            for small in line.body:
                if isinstance(small, cst.Assign) and _empty_container(small.value) and any(
                        isinstance(target.target, cst.Name) and target.target.value in names
                        for target in small.targets):
                    self.lines.append(line)

    bindings = EmptyBindings()
    func.visit(bindings)
    return bindings.lines


def _empty_container(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.List):
        return not value.elements
    return isinstance(value, cst.Call) and not value.args and dotted_name(value.func) in EMPTY_CONTAINER_CALLS


def _loop_indexed_load(statement: Statement, loop_targets: frozenset[str]) -> bool:
    """`x = batches[step]` (or `batches[it * accum + step]`) opening a block of a Python loop over
    `step`: runs as Python before the region, which receives the item. In the region, Dynamo would guard the index's value
    (a list item is chosen by it), compiling one graph per step until its recompile limit.

        for micro in range(accum):          for micro in range(accum):
            x = batches[micro]                  x = batches[micro]          # Python
            loss = model(x).mean()   ->         loss = _region_0(model, x)  # one graph for every step
    """
    if not (loop_targets and is_simple(statement) and len(statement.body) == 1):
        return False
    small = statement.body[0]
    if not (isinstance(small, cst.Assign) and all(_name_target(t.target) for t in small.targets)):
        return False
    value = small.value
    if not (isinstance(value, cst.Subscript) and len(value.slice) == 1 and dotted_name(value.value) is not None):
        return False
    index = value.slice[0].slice
    names = _counter_arithmetic(index.value) if isinstance(index, cst.Index) else None
    return names is not None and bool(names & loop_targets)


def _loop_carried_update(statement: Statement, block: cst.BaseSuite, analysis: FunctionAnalysis,
                         dataflow: Dataflow) -> bool:
    """`preds.append(out.argmax(-1))` in the body of a Python loop, on a container the body does
    not make: the update runs as Python after the region, which computes its argument. In the
    region, Dynamo would guard the container's length, which grows on every iteration: a graph
    per step until its recompile limit, then the region (the model call with it) runs eagerly.

        preds = []                              preds = []
        for batch in batches:                   for batch in batches:
            out = model(batch)                      out, _carve_t0 = _region_0(model, batch)
            preds.append(out.argmax(-1))   ->       preds.append(_carve_t0)     # Python
            print("done", batch.shape[0])           print("done", batch.shape[0])
    """
    if not _container_update(statement, analysis):
        return False
    # None for `stats["loss"] = ...`: the same key on every step guards no length.
    container = updated_container(statement)
    return container is not None and container not in _bound_at_top(block, dataflow)


def updated_container(statement: Statement) -> str | None:
    """`preds` of the line `preds.append(...)`; None for any other statement."""
    if not (is_simple(statement) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)):
        return None
    call = statement.body[0].value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
            and call.func.attr.value in CONTAINER_UPDATES and isinstance(call.func.value, cst.Name)):
        return None
    return call.func.value.value


def _counter_arithmetic(node: cst.BaseExpression) -> frozenset[str] | None:
    """The names `node` reads if it is integer arithmetic on names (`micro`, `it * accum + micro`);
    None for anything else (a call, an attribute, a tensor index)."""
    if isinstance(node, cst.Name):
        return frozenset({node.value})
    if isinstance(node, cst.Integer):
        return frozenset()
    if isinstance(node, cst.UnaryOperation):
        return _counter_arithmetic(node.expression)
    if isinstance(node, cst.BinaryOperation):
        left, right = _counter_arithmetic(node.left), _counter_arithmetic(node.right)
        return None if left is None or right is None else left | right
    return None


def _statements(block: cst.BaseSuite) -> list[Statement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [cast(cst.SimpleStatementSuite, block)]


def _returns_at_end(statement: Statement) -> bool:
    """`return y`, or a `with` block whose last statement returns (`with torch.no_grad(): return y`):
    every run of the statement that does not raise returns."""
    if is_simple(statement):
        return isinstance(statement.body[-1], cst.Return)
    return isinstance(statement, cst.With) and _returns_at_end(_statements(statement.body)[-1])


def is_simple(statement: cst.CSTNode) -> TypeGuard[cst.SimpleStatementLine | cst.SimpleStatementSuite]:
    """A line of small statements: `a = 1; b = 2`, or the `return x` of `def f(x): return x`."""
    return isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite))


def as_statement_line(statement: Statement) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
    """One-line suites (`if c: return x`) as ordinary statement lines, to place in indented blocks."""
    if isinstance(statement, cst.SimpleStatementSuite):
        return cst.SimpleStatementLine(body=statement.body)
    return cast("cst.SimpleStatementLine | cst.BaseCompoundStatement", statement)  # BaseStatement's two kinds


def _graph_statement(
    statement: cst.CSTNode, analysis: FunctionAnalysis, dataflow: Dataflow, loop_depth: int, nested: bool,
    in_fixed_loop: bool = False,
) -> bool:
    """Can the trace capture `statement` whole? `nested`: it sits inside an if/for of the region;
    `in_fixed_loop`: inside a loop of the region whose trip count is fixed (see `_container_update`)."""
    if isinstance(statement, cst.For) and _only_untaken_breaks_inside(statement, analysis, dataflow):
        pass  # its body is judged below: breaks only in branches the guards usually skip
    elif _container_update(statement, analysis, plain_values=in_fixed_loop):
        return True
    elif analysis.findings_of(statement):
        return False
    if is_simple(statement):
        return all(_graph_small(small, loop_depth, nested) for small in statement.body)
    if isinstance(statement, cst.If):
        blocks = child_blocks(statement)
        breaking = [any(not _graph_statement(s, analysis, dataflow, loop_depth, True, in_fixed_loop)
                            for s in _statements(block)) for block in blocks]
        if all(breaking) and _has_else(statement):
            return False  # some branch is taken on every run, and each breaks: see _has_else
        return all(
            _graph_statement(s, analysis, dataflow, loop_depth, True, in_fixed_loop)
            or _break_in_branch(s, analysis, loop_depth)
            for block in blocks for s in _statements(block)
        )
    if isinstance(statement, cst.For) and statement.orelse is None and _name_target(statement.target) and (
            _short_loop(statement) or _container_loop(statement)):
        fixed = not trip_count_may_vary(statement, first_parameter(analysis.func))
        return all(_graph_statement(s, analysis, dataflow, loop_depth + 1, True, fixed) for s in _statements(statement.body))
    if isinstance(statement, cst.Try) and not nested and _try_captured_whole(statement, analysis, dataflow, loop_depth):
        return True
    if isinstance(statement, cst.With) and id(statement) in analysis.torch_context_managers:
        # torch's own context managers (no_grad, autocast, ...): the capture records their state
        # changes, so the block is part of the graph. Of those Dynamo resumes a graph break inside
        # (re-entering the manager after the break), the block keeps its breaking statements too.
        # A block that ends the region may end with its `return` (the region returns from inside it).
        resumable = id(statement) in analysis.resumable_context_managers
        body = _statements(statement.body)
        last_returns = not nested and is_simple(body[-1]) and _returns_at_end(body[-1])
        return all(
            _graph_statement(s, analysis, dataflow, loop_depth, not (last_returns and s is body[-1]), in_fixed_loop)
            or resumable and _break_in_branch(s, analysis, loop_depth)
            for s in body
        )
    return False


def _try_captured_whole(statement: cst.Try, analysis: FunctionAnalysis, dataflow: Dataflow, loop_depth: int) -> bool:
    """A `try` whose every part is graph work is part of the region, as Dynamo traces it inside
    one frame (torch.compile's one graph): an exception met while tracing is Dynamo's to model,
    and one it cannot is a break in the region, which then runs as written.

        try:                                # one graph with what comes before and after
            y = x.sin()
        except ValueError:
            y = torch.zeros(3)

    A handler for what an operation raises on a later call's data (`except IndexError`, a
    failed factorization's RuntimeError) is a CRV022 finding on the `try`, which keeps it out:
    a graph raises when it runs, after the trace has left the `try`.
    """
    handlers_simple = all(handler.type is None or dotted_name(handler.type) is not None for handler in statement.handlers)
    return handlers_simple and all(
        _graph_statement(s, analysis, dataflow, loop_depth, nested=True)
        for child in child_blocks(statement) for s in _statements(child))


def try_body_is_one_region(
    statement: cst.CSTNode, analysis: FunctionAnalysis, closures: "_Closures", dataflow: Dataflow
) -> bool:
    """May the body of this `try` be one graph region instead of one region per statement?

        try:                                try:
            a = x.sin()                         c = _region_0(x)      # one graph
            b = a * 2               ->      except ValueError:
            c = b + a                           c = x
        except ValueError:
            c = x

    Yes when every statement of the body is graph work and an exception raised part way through
    the body cannot show that the names bound before it were not bound: no name the body binds
    is read by a handler before the handler binds it, or by the `finally` block, and every name
    the body binds that is read anywhere else in the function is bound again by each handler
    that carries on past the `try`. A body that mutates in place (`t.add_(1)`) keeps one
    region per statement: only the statements before the raising one must have run.
    """
    if not isinstance(statement, cst.Try):
        return False
    body = _statements(statement.body)
    if not body or not all(_graph_statement(s, analysis, dataflow, loop_depth=0, nested=False) and not closures.touched_by(s)
                           for s in body):
        return False
    if contains_in_place_call(statement.body):
        return False
    bound = dataflow.block_reads_and_writes(body)[1]
    finally_names = loaded_names(statement.finalbody) if statement.finalbody is not None else set()
    if bound & finally_names:
        return False
    seen_elsewhere = bound & loaded_names(analysis.func, skip=statement.body)
    for handler in statement.handlers:
        handler_reads = set(dataflow.block_reads_and_writes(_statements(handler.body))[0])
        if handler.type is not None:
            handler_reads |= loaded_names(handler.type)
        if bound & handler_reads:
            return False
        if _falls_through(handler.body) and not seen_elsewhere <= _bound_at_top(handler.body, dataflow):
            return False
    return True


def loaded_names(node: cst.CSTNode, skip: cst.CSTNode | None = None) -> set[str]:
    """Every identifier in `node` outside `skip` (an over-approximation of the names it reads)."""

    class Names(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: set[str] = set()

        def on_visit(self, visited: cst.CSTNode) -> bool:
            if visited is skip:
                return False
            if isinstance(visited, cst.Name):
                self.names.add(visited.value)
            return True

    names = Names()
    node.visit(names)
    return names.names


def _bound_at_top(block: cst.BaseSuite, dataflow: Dataflow) -> set[str]:
    """Names every run of `block` binds: targets of its top-level assignments."""
    bound: set[str] = set()
    for statement in _statements(block):
        if is_simple(statement):
            bound |= dataflow.writes(statement)
    return bound


def _falls_through(block: cst.BaseSuite) -> bool:
    last = _statements(block)[-1]
    return not (is_simple(last) and isinstance(last.body[-1], (cst.Raise, cst.Return)))


def contains_in_place_call(node: cst.CSTNode, also: frozenset[str] = frozenset()) -> bool:
    """A call of a method named like torch's in-place methods (`add_`, `copy_`, `zero_`), or of
    one of the methods `also` names (a container's `pop`, `append`)."""

    class InPlace(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found = False

        def visit_Call(self, call: cst.Call) -> None:
            func = call.func
            if isinstance(func, cst.Attribute):
                name = func.attr.value
                if (name.endswith("_") and not name.startswith("__")) or name in also:
                    self.found = True

    finder = InPlace()
    node.visit(finder)
    return finder.found


# Methods that update a list, dict or set in place: Dynamo records them and replays them on the
# real object after the graph runs, as torch.compile does.
CONTAINER_UPDATES = frozenset({"append", "extend", "insert", "update", "setdefault"})


def _container_update(statement: cst.CSTNode, analysis: FunctionAnalysis, plain_values: bool = False) -> bool:
    """`acc.append(x.sum())`, `stats["loss"] = (y ** 2).mean()`: a graph statement. A region that
    updates a Python container takes it as an argument (or reads it as a global), and Dynamo, which
    captures the region, applies the update on every call; a container the region makes itself is rebuilt from the graph's outputs on each call.

    `plain_values`: the statement is in the body of a loop the region unrolls a fixed number of
    times (a shape, a constant range, `self`'s layers), where an update with nothing to compute
    is graph work too (the loop is whole only if its body is):

        outputs = []                            # one region, as torch.compile's one graph:
        for input_t in input.split(1, dim=1):   # the loop unrolled over the tensor's pieces
            output = self.cell(input_t)
            outputs += [output]
        return torch.cat(outputs, dim=1)
    """
    if not is_simple(statement) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if plain_values and isinstance(small, cst.AugAssign) and isinstance(small.operator, cst.AddAssign) \
            and isinstance(small.target, cst.Name) and isinstance(small.value, (cst.List, cst.Tuple)):
        values: list[cst.BaseExpression] = [small.value]  # `outputs += [output]`, as outputs.extend([output])
    elif isinstance(small, cst.Expr):
        call = small.value
        if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name) and call.func.attr.value in CONTAINER_UPDATES):
            return False
        values = [arg.value for arg in call.args]
    elif isinstance(small, cst.Assign) and len(small.targets) == 1 and _item_of_a_name(small.targets[0].target):
        values = [small.value]
    else:
        return False
    if not plain_values and not any(isinstance(value, COMPUTED) for value in values):
        return False  # `log.append("done")`, `seen[k] = True`: nothing for a graph to compute; stays Python
    findings = analysis.findings_of(statement)
    return (bool(findings) and all(f.code == python_side_effect.RULE.code for f in findings)
            and not _contains_lambda(small))


def _item_of_a_name(target: cst.BaseAssignTargetExpression) -> bool:
    """`stats["loss"]`, `row[i]`: one item of a container held in a local or global name."""
    return isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name)


# Argument expressions that compute something (`x.sum()`, `y * 2`, `t[0]`), unlike names and literals.
COMPUTED = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison)


def _only_untaken_breaks_inside(loop: cst.For, analysis: FunctionAnalysis, dataflow: Dataflow) -> bool:
    """The loop's only findings say that its body breaks (CRV006), and no run has made it Python.

        for block in self.blocks:           # one graph over every block while verbose is False;
            x = block(x)
            if verbose:                     # a call with verbose=True makes Dynamo skip the
                print(x.norm())             # region (a break in a loop), and carve re-splits with
                                            # this loop kept as Python (forced_lines)
    """
    own = analysis.findings_of(loop)
    if not own or not all(f.code == break_in_loop.RULE.code and f.line not in analysis.forced_lines for f in own):
        return False
    return _breaking_branches_are_loop_invariant(loop, analysis, dataflow)


def _breaking_branches_are_loop_invariant(loop: cst.For, analysis: FunctionAnalysis, dataflow: Dataflow) -> bool:
    """Every `if` in the loop that guards a break tests only names the loop does not rebind.

        for i, block in enumerate(blocks):
            if verbose: print(...)          # invariant: not taken while verbose is False
            if i % 4 == 0: print(...)       # varies with i: taken on some iteration of every call
    """
    rebound = dataflow.writes(loop)

    class BreakingBranches(cst.CSTVisitor):
        def __init__(self) -> None:
            self.invariant = True

        def visit_If(self, branch: cst.If) -> None:
            guarded = [s for block in child_blocks(branch) for s in _statements(block)]
            if any(analysis.findings_of(s) for s in guarded) and loaded_names(branch.test) & rebound:
                self.invariant = False

    visitor = BreakingBranches()
    loop.body.visit(visitor)
    return visitor.invariant


def _has_else(statement: cst.If) -> bool:
    """`if`/`elif` chain ending in `else`: one branch runs on every run of the statement.

    A breaking statement in a branch stays in a region on the bet that the branch is not taken
    (`_break_in_branch`). When every branch of an `if` with an `else` breaks, the bet is lost on
    every call: the region would always split there, and a value the branches choose between
    would make Dynamo compile it again and again. Such an `if` keeps its control flow in Python:

        if loss_ema is None:                    # stays Python, its branches eager:
            loss_ema = loss.item()              # one of the two .item() runs on every call
        else:
            loss_ema = 0.95 * loss_ema + 0.05 * loss.item()
    """
    orelse = statement.orelse
    while isinstance(orelse, cst.If):
        orelse = orelse.orelse
    return isinstance(orelse, cst.Else)


def _break_in_branch(statement: cst.CSTNode, analysis: FunctionAnalysis, loop_depth: int) -> bool:
    """A breaking statement in a branch of a Python-valued `if` (`if verbose: print(...)`,
    `if labels is not None: loss = ...item()`): the region keeps it. When the branch is not taken
    (the guards pin the test's value), the graph is whole; when it is, the capture breaks there
    and resumes after it, as torch.compile does. Inside a loop of the region Dynamo cannot resume:
    it runs the region eagerly, and carve re-splits the function with the branch as Python."""
    if not is_simple(statement):
        return False
    findings = analysis.findings_of(statement)
    if not findings or not all(f.code in BRANCH_RESUMABLE_RULES for f in findings):
        return False
    if any(f.line in analysis.forced_lines for f in findings):
        return False  # a run took this branch inside a loop: it stays Python (see _only_untaken_breaks_inside)
    if any(isinstance(small, (cst.Return, cst.Break, cst.Continue, cst.Global, cst.Nonlocal, cst.Raise))
           for small in statement.body):
        return False
    # Dynamo 2.13 resumes wrongly inside an f-string after a break in it (`f"{loss.item():.4f}"`
    # with a symbolic int beside it rebuilds the string from the wrong stack): keep those Python.
    # Inside a loop Dynamo never resumes (it runs the region eagerly and carve re-splits).
    return loop_depth > 0 or not _contains(statement, cst.FormattedString)


# Breaks a capture resumes after (Dynamo splits the graph there and carries on): each rule
# says whether it is one (`Rule.resumable_in_branch`, rewriters/rules.py).
BRANCH_RESUMABLE_RULES = frozenset(code for code, rule in RULES.items() if rule.resumable_in_branch)


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
        y = g(x)                 # calls a closure: stays Python if some closure writes a cell
                                 # (`nonlocal`), else graph work Dynamo traces
    """

    def __init__(self, dataflow: Dataflow) -> None:
        self.dataflow = dataflow
        self.cells: set[str] = set()
        self.functions: set[str] = set()
        # A nested def rebinds a cell (`nonlocal`): a region holding a cell's value would miss it.
        self.closures_write_cells = False
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

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if self.depth > 1:
            self.closures_write_cells = True

    def touched_by(self, statement: cst.CSTNode) -> bool:
        if not self.cells and not self.functions:
            return False
        reads, writes = self.dataflow.reads_and_writes(statement)
        # A call of a closure that only reads cells is Dynamo's to trace inside the region.
        return bool(writes & self.cells) or (self.closures_write_cells and bool(set(reads) & self.functions))


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
    return _contains(node, cst.Lambda)


def _makes_python_object(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and dotted_name(value.func) in PYTHON_OBJECT_BUILTINS


def _assigns_names_only(small: cst.Assign | cst.AugAssign) -> bool:
    """Names, or items of a tensor (`logits[mask] = -inf`: the analysis gives an item store into
    anything but a tensor a CRV019 finding, which keeps the statement out of graph runs)."""
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
    return all(_name_target(t) or (isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name)) for t in targets)


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
    bounds = [integer_value(arg.value) for arg in iterator.args]
    if not bounds or None in bounds:
        return False
    count = len(range(*cast("list[int]", bounds)))  # no None: checked above
    return count <= MAX_UNROLLED_ITERATIONS
