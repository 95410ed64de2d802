"""Outline graph regions into functions and rewrite the function to call them.

    def f(x, xs):                               @_carve_f.graph(2, 3)
        y = x * 2                               def _f_graph_region_0(x):
        z = y + 1                                   y = x * 2
        print(z)                                    z = y + 1
        return z - 1                                return z

                                                @_carve_f.graph(5, 5)
                                                def _f_graph_region_1(z):
                                                    return z - 1

                                                def f(x, xs):
                                                    z = _f_graph_region_0(x)
                                                    # carve: eager, CRV003 I/O or logging: print() performs I/O
                                                    _carve_f.graph_break(4, "CRV003")
                                                    print(z)
                                                    return _f_graph_region_1(z)

`_carve_f` is the function's `carve.RegionSet`: `.graph(first, last)` makes
a region a compiled graph, `.graph_break(line, code)` raises under fullgraph /
error_on_graph_break and reports the break, `.compiled(g)` compiles a callee
that breaks the graph on its own (as torch.compile compiles nested frames),
`.compiled_definition(g)` a nested `def` where it is defined (whoever calls it,
a library too, runs it compiled).

Every generated name (`_carve_f`, `_f_graph_region_0`, `_carve_t0`) comes
from one `Namer` that reserves every name the function and its module use.

A name bound on some paths only may be unbound where a region is called or
returns (`carve.rewriters.bindings` says where): the call passes `UNBOUND`
for it, and the unbound local is restored on the other side (see
`carve.rewriters.unbound`). A region that reads such a name runs as Python
(the function its decorator wraps) on a call where the name is unbound, so
a compiled graph never sees `UNBOUND` as a value:

    def f(x, n):                            def _f_graph_region_0(last):
        for i in range(n):                      if last is _carve_unbound: del last
            last = x * i                        return last + 1
        print(n)                 ->
        return last + 1                     def f(x, n):
                                                for i in range(n):
                                                    last = _f_graph_region_1(x, i)
                                                print(n)
                                                _carve_a0 = locals().get("last", _carve_unbound)
                                                if _carve_a0 is _carve_unbound:
                                                    return _f_graph_region_0.__wrapped__(_carve_a0)
                                                else:
                                                    return _f_graph_region_0(_carve_a0)

so `f(x, 0)` raises eager's UnboundLocalError at the user's `return` line.
A name surely unbound where a region starts is no parameter of a region
that binds it (it starts unbound there too); a region never both receives
`UNBOUND` for a name and reads it where it may be unbound, nor reads a name
it can only find unbound: the run is split there, or the statement runs as
Python.

Every emitted statement is recorded in `origins` with the original lines it
stands for, so the compiled code's line table points into the user's file.
The user's statements are recorded where they enter the generated code; the
glue around them (the region function, its call, `return` of the outputs,
the checkpoints) is written as templates (`carve.rewriters.templates`) that
insert the user's nodes as they are, and each template use says once which
lines the statements it makes stand for:

    replace("return outputs", outputs=["y", "z"], origin=self._glue(last, last))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, ModuleContext, child_blocks
from carve.rewriters.backward_roots import BackwardRoots
from carve.rewriters.bindings import Bindings, State
from carve.rewriters.call_conversion import convert_calls
from carve.rewriters.checks.tensor_work import TensorWork
from carve.rewriters.checkpoints import checkpoint, eager_comment
from carve.rewriters.findings import Finding
from carve.rewriters.hoist import HOISTABLE_CODES, Hoisted, Hoister
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.liveness import bound_names, declarations, local_names, region_inputs, region_outputs
from carve.rewriters.naming import CLOSURE_NAME, COMPILED_FUNCTION_NAME, FACTORY_NAME, UNBOUND_VAR, Namer
from carve.rewriters.partition import (
    Compound, EagerStatement, GraphRun, Item, Statement, as_statement_line, is_simple as is_simple_line, loaded_names,
    partition_block, updated_container,
)
from carve.rewriters.names import integer_value
from carve.rewriters.rules import crv019_python_side_effect as side_effect
from carve.rewriters.rules import crv035_differentiated_twice as differentiated_twice
from carve.rewriters.templates import BodyStatement, MarkOrigin, replace, replace_expression, replace_statement
from carve.rewriters.tensors import NON_TENSOR_ATTRIBUTES, NON_TENSOR_METHODS, TensorInference

N = TypeVar("N", bound=cst.CSTNode)


@dataclass
class RegionInfo:
    name: str
    first_line: int
    last_line: int
    inputs: list[str]
    outputs: list[str]


@dataclass
class EagerInfo:
    line: int
    findings: list[Finding]


@dataclass(frozen=True)
class Origin:
    first_line: int
    last_line: int
    # True: the node is the user's statement verbatim, line for line; False: generated glue.
    verbatim: bool


@dataclass
class OutlinedFunction:
    function: cst.FunctionDef
    region_defs: list[cst.FunctionDef]
    regions: list[RegionInfo]
    eager: list[EagerInfo]
    regions_var: str
    origins: dict[int, tuple[cst.CSTNode, Origin]] = field(default_factory=dict)
    # The name the generated code gives `carve.rewriters.unbound.UNBOUND`; `uses_unbound` when it needs it.
    unbound_var: str = UNBOUND_VAR
    uses_unbound: bool = False


def outline_function(
    func: cst.FunctionDef,
    analysis: FunctionAnalysis,
    module: ModuleContext,
    *,
    regions_var: str,
    region_prefix: str,
    namer: Namer | None = None,
    unbound_var: str | None = None,
    dataflow: Dataflow | None = None,
) -> OutlinedFunction:
    """`regions_var` is the preferred name of the RegionSet variable; `namer` (by default one
    reserving every name of `module`) makes it and every other generated name collision-free.
    `unbound_var`: the module's name for UNBOUND, when the caller chose it already.
    `dataflow`: the function's, when the caller built it already."""
    if namer is None:
        namer = Namer.for_nodes(module.module, func)
        namer.reserve(CLOSURE_NAME, FACTORY_NAME, COMPILED_FUNCTION_NAME)
    regions_var = namer.new(regions_var)
    if unbound_var is None:
        unbound_var = namer.new(UNBOUND_VAR)
    if dataflow is None:
        dataflow = Dataflow(func)
    return _Outliner(func, analysis, dataflow, module, regions_var, region_prefix, namer, unbound_var).run()


class _Outliner:
    def __init__(self, func, analysis, dataflow, module, regions_var, region_prefix, namer, unbound_var) -> None:
        self.func = func
        self.analysis = analysis
        self.dataflow: Dataflow = dataflow
        # Which backward passes reach each statement: where the partition ends graph runs.
        self.backward = BackwardRoots(analysis, dataflow)
        self._record_differentiated_twice(func, analysis, module)
        self.module = module
        self.regions_var = regions_var
        self.region_prefix = region_prefix
        self.namer = namer
        self.temps = namer.scope()  # the function's own temporaries: counters restart at 0
        self.unbound_var = unbound_var
        self.locals = local_names(func, analysis.global_names)
        # `global calls` / `nonlocal total` of the function: a region that binds such a name
        # declares it too, so it writes the user's variable, not a local of its own.
        self.declarations = declarations(func)
        self.result = OutlinedFunction(func, [], [], [], regions_var, unbound_var=unbound_var)
        self.hoister = Hoister(TensorInference(func, module.imports), module.imports, self.temps)
        self.bindings = Bindings(self.locals, module.imports.resolve)
        # `locals` rebound by the user: the call sites read maybe-unbound names with try/except.
        self.locals_shadowed = "locals" in self.locals or "locals" in bound_names(module.module)
        # Statements made here (hoisted assignments, rewritten statements) -> original lines.
        self.synthetic_lines: dict[int, tuple[int, int]] = {}
        self.hoisted_temps: set[str] = set()
        self._tensor_work: TensorWork | None = None  # made on first use (_does_tensor_work)

    def _record_differentiated_twice(self, func: cst.FunctionDef, analysis: FunctionAnalysis,
                                     module: ModuleContext) -> None:
        """CRV035 on each statement a `create_graph=True` backward differentiates again: a finding
        keeps the statement Python (AOT autograd's backward cannot be differentiated)."""
        for statement in _simple_statements(func.body):
            if self.backward.differentiated_twice(statement) and not any(
                    f.code == differentiated_twice.RULE.code for f in analysis.findings_of(statement)):
                line = module.line_range(statement)[0]
                finding = Finding(differentiated_twice.RULE.code, "a create_graph=True backward reaches it, and a "
                                  "compiled graph's backward cannot be differentiated again", line)
                analysis.findings.append(finding)
                analysis.statement_findings.setdefault(id(statement), []).append(finding)

    def run(self) -> OutlinedFunction:
        if self.analysis.whole_function is not None:
            items: list[Item] = [EagerStatement(s, self.analysis.findings_of(s)) for s in _statements(self.func.body)]
            whole = self.analysis.whole_function
            self.result.eager.append(EagerInfo(whole.line, [whole]))
        else:
            items = partition_block(self.func.body, self.analysis, dataflow=self.dataflow, backward=self.backward)
        body = self._block(items, state=Bindings.entry(self.func, self.locals))
        new_func = self.func.with_changes(body=self.func.body.with_changes(body=body) if isinstance(self.func.body, cst.IndentedBlock) else cst.IndentedBlock(body=body))
        self.result.function = new_func
        first, last = self.module.line_range(self.func)
        self._origin(new_func, first, last, verbatim=False)
        return self.result

    # -- bookkeeping -----------------------------------------------------------------------
    def _origin(self, node: N, first: int, last: int, verbatim: bool) -> N:
        self.result.origins[id(node)] = (node, Origin(first, last, verbatim))
        return node

    def _glue(self, first: int, last: int) -> MarkOrigin:
        """A template's `origin`: each statement it makes is glue standing for lines `first`-`last`."""
        return lambda statement: self._origin(statement, first, last, verbatim=False)

    def _with_leading_lines(self, node: N, leading_lines: Sequence[cst.EmptyLine]) -> N:
        """`node` with other comments and blank lines above it, standing for the lines it stood for."""
        moved = node.with_changes(leading_lines=leading_lines)
        recorded = self.result.origins.pop(id(node), None)
        if recorded is not None:
            self.result.origins[id(moved)] = (moved, recorded[1])
        return moved

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        synthetic = self.synthetic_lines.get(id(node))
        return synthetic if synthetic is not None else self.module.line_range(node)

    # -- hoisting tensor work out of eager statements ------------------------------------------
    def _hoist(self, items: list[Item]) -> list[Item]:
        out: list[Item] = []
        for item in items:
            hoisted = None
            if isinstance(item, EagerStatement) and item.arguments_to_graph and is_simple_line(item.statement):
                hoisted = self.hoister.hoist_arguments(item.statement)
            elif isinstance(item, EagerStatement) and _only_stores(item.findings) and is_simple_line(item.statement) \
                    and self._does_tensor_work(item.statement):
                hoisted = self.hoister.hoist_assigned_value(item.statement) or self.hoister.hoist_statement(item.statement)
            elif isinstance(item, EagerStatement) and _hoistable(item.findings):
                hoisted = self.hoister.hoist_statement(item.statement)
            elif isinstance(item, Compound) and isinstance(item.statement, cst.If) and _hoistable(item.header_breaks):
                hoisted = self.hoister.hoist_if_test(item.statement)
            if hoisted is None:
                out.append(item)
                continue
            assert not isinstance(item, GraphRun)  # only statements and compounds are hoisted
            lines = self._lines(item.statement)
            self.synthetic_lines[id(hoisted.statement)] = lines
            header = lines if isinstance(item, EagerStatement) else (lines[0], lines[0])
            for node in hoisted.assignments:
                self.synthetic_lines[id(node)] = header
            self.hoisted_temps.update(hoisted.temps)
            self.locals.update(hoisted.temps)
            previous = out[self._graph_before(out, item, hoisted)] if out else None
            if (isinstance(previous, GraphRun) and not previous.ends_with_return
                    and self._same_backward(previous, item.statement)):
                previous.statements.extend(hoisted.assignments)
            else:
                out.append(GraphRun(list(hoisted.assignments)))
            # Hoisting keeps the statement's kind: a line stays a line, an `if` an `if`.
            if isinstance(item, EagerStatement):
                out.append(EagerStatement(cast(Statement, hoisted.statement), item.findings, item.arguments_to_graph))
            else:
                out.append(Compound(cast(cst.If, hoisted.statement), item.header_findings, item.blocks))
        return out

    def _does_tensor_work(self, statement: cst.CSTNode) -> bool:
        """Whether `statement` runs a tensor operation (`self.loss = model(x, y)`, not `self.opt =
        torch.optim.SGD(...)` nor `self.dt = now - self.t0`): only such work is worth a graph."""
        if self._tensor_work is None:
            self._tensor_work = TensorWork(self.func, self.module.imports)
        return self._tensor_work.does_work([statement])

    def _same_backward(self, run: GraphRun, statement: cst.CSTNode) -> bool:
        """May work hoisted out of `statement` join `run`? Not when different backward passes
        reach them (a backward through one would free the other's graph: see partition)."""
        roots = self.backward.roots_of(statement)
        run_roots = frozenset().union(*(self.backward.roots_of(s) for s in run.statements))
        return not roots or not run_roots or roots == run_roots

    @staticmethod
    def _graph_before(out: list[Item], item: Item, hoisted: Hoisted) -> int:
        """Where hoisted work joins a graph: the last item, or for a container update's arguments,
        the graph before the updates just above it that the arguments do not read:

            out = _region_0(...)                  out, _carve_t0, _carve_t1 = _region_0(...)
            preds.append(head(out).argmax(-1)) -> preds.append(_carve_t0)
            logits.append(head(out))              logits.append(_carve_t1)
        """
        index = len(out) - 1
        if not (isinstance(item, EagerStatement) and item.arguments_to_graph):
            return index
        reads = set().union(*(loaded_names(node) for node in hoisted.assignments))
        while index > 0:
            before = out[index]
            if not (isinstance(before, EagerStatement) and before.arguments_to_graph
                    and updated_container(before.statement) not in reads):
                break
            index -= 1
        return index

    # -- blocks ----------------------------------------------------------------------------
    def _block(self, items: list[Item], state: State) -> list[cst.BaseStatement]:
        """`state`: which names are bound where the block starts."""
        out: list[cst.BaseStatement] = []
        if self.analysis.whole_function is None:
            items = self._hoist(items)
        for item in items:
            if isinstance(item, GraphRun):
                out.extend(self._graph_run(item, state))
                state = self.bindings.block(item.statements, state)
            elif isinstance(item, EagerStatement):
                out.extend(self._eager(item))
                state = self.bindings.statement(item.statement, state)
            else:
                out.extend(self._compound(item, state))
                state = self.bindings.statement(item.statement, state)
        return out or [cst.SimpleStatementLine([cst.Pass()])]

    def _graph_run(self, run: GraphRun, state: State) -> list[cst.BaseStatement]:
        if not any(_has_operation(statement) for statement in run.statements):
            # `total = 0.0`, `return total`: nothing a graph could compute; stays inline.
            return [self._inline(statement) for statement in run.statements]
        # Cut the run where one region would have to carry UNBOUND for a name it also reads
        # where that name may be unbound (it would read UNBOUND instead of raising).
        plan = self._plan(run.statements, state)
        if not plan.conflicts:
            return self._region(run.statements, state, plan)  # the common case: one region
        out: list[cst.BaseStatement] = []
        segment: list[Statement] = []
        segment_state = state
        for statement in run.statements:
            if self._plan(segment + [statement], segment_state).conflicts:
                if segment:
                    out.extend(self._region(segment, segment_state))
                    segment_state = self.bindings.block(segment, segment_state)
                    segment = []
                if self._plan([statement], segment_state).conflicts:
                    out.extend(self._as_python(statement, segment_state))
                    segment_state = self.bindings.statement(statement, segment_state)
                    continue
            segment.append(statement)
        if segment:
            out.extend(self._region(segment, segment_state))
        return out

    def _plan(self, statements: list[Statement], state: State) -> "_Plan":
        """Inputs and outputs of a region made of `statements`, entered at `state`."""
        ends_with_return = GraphRun(statements).ends_with_return
        uses = self.dataflow.reads_and_writes
        inputs = region_inputs(statements, self.locals, uses)
        outputs = [] if ends_with_return else region_outputs(statements, self._live_after(statements), self.locals, uses)
        # Hoisted temporaries are read by the eager statement right after the region.
        written = self.dataflow.block_reads_and_writes(statements)[1]
        outputs += sorted(t for t in self.hoisted_temps & written if t not in outputs and not ends_with_return)
        # A name the region reads where its own code may not have written it yet (after an
        # `if` that did not run), or returns where it may have left it unwritten, keeps the value
        # it had before the region: pass it in (UNBOUND when it had none).
        maybe_unbound_reads: set[str] = set()
        reader = self.bindings.reporting(lambda name, node: maybe_unbound_reads.add(name))
        end = reader.block(statements, state)
        outside: list[str] = []
        own = self.bindings.reporting(lambda name, node: outside.append(name))
        surely_written = own.block(statements, State(frozenset(), frozenset()))
        params = list(inputs)
        for name in [*outside, *(n for n in outputs if not surely_written.surely_bound(n))]:
            if name in self.locals and name not in params:
                params.append(name)
        # A name the region must hand back possibly still UNBOUND passes through it untouched:
        # no read of it may see UNBOUND.
        unbound_outputs = [n for n in outputs if not end.surely_bound(n)]
        conflicts = set(unbound_outputs) & maybe_unbound_reads
        # A name surely unbound where the region starts is no parameter when the region binds it:
        # it starts as an unbound local of the region function, as it was in the user's.
        binds = set().union(*(bound_names(statement) for statement in statements))
        surely_unbound = [n for n in params if state.surely_unbound(n) and n not in unbound_outputs]
        params = [n for n in params if n not in surely_unbound or n not in binds]
        # One the region reads but never binds can only raise: that statement runs as Python.
        conflicts |= {n for n in surely_unbound if n not in binds and n in maybe_unbound_reads}
        return _Plan(
            inputs=params,
            outputs=outputs,
            unbound_reads=[n for n in params if not state.surely_bound(n) and n not in unbound_outputs
                           and n in maybe_unbound_reads],
            unbound_outputs=unbound_outputs,
            conflicts=conflicts,
        )

    def _live_after(self, statements: list[Statement]) -> frozenset[str] | set[str]:
        """Names read after the region before being bound again, and those a closure may read.

        Hoisted assignments (made by this pass, after the user's statements of the run) are not
        in the function's dataflow: what is live after the last of the user's statements is
        live after them, since they only bind temporaries."""
        closures = self.dataflow.closure_reads_outside(statements)
        own = [s for s in statements if self.dataflow.knows(s)]
        return self.dataflow.live_out(own[-1]) | closures if own else frozenset(closures)

    def _as_python(self, statement: Statement, state: State) -> list[cst.BaseStatement]:
        """A statement of a graph run that no region can hold (see `_graph_run`) runs as Python."""
        if is_simple_line(statement):
            return self._eager(EagerStatement(statement, []))
        catches = isinstance(statement, (cst.Try, cst.With))
        # Not a line: a compound statement.
        compound = Compound(cast(cst.BaseCompoundStatement, statement), [],
                            [partition_block(child, self.analysis, catches, dataflow=self.dataflow,
                                             backward=self.backward)
                             for child in child_blocks(statement)])
        return self._compound(compound, state)

    def _region(self, statements: list[Statement], state: State, plan: "_Plan | None" = None) -> list[cst.BaseStatement]:
        if not any(_has_operation(statement) for statement in statements):
            return [self._inline(statement) for statement in statements]
        run = GraphRun(statements)
        plan = plan or self._plan(statements, state)
        first = self._lines(run.statements[0])[0]
        last = self._lines(run.statements[-1])[1]
        name = self.namer.numbered(f"_{self.region_prefix}_graph_region_")
        inputs, outputs = plan.inputs, plan.outputs
        self.result.regions.append(RegionInfo(name, first, last, inputs, outputs))
        unbound = self.unbound_var
        if plan.unbound_reads or plan.unbound_outputs or any(not state.surely_bound(n) for n in inputs):
            self.result.uses_unbound = True

        # The region function: the user's statements verbatim (their own nodes, each standing for its
        # lines), after restoring the inputs that came in UNBOUND, before returning the outputs.
        leading = getattr(run.statements[0], "leading_lines", ())
        statements = [as_statement_line(s) for s in run.statements]
        statements[0] = statements[0].with_changes(leading_lines=())
        for original, line in zip(run.statements, statements):
            self._origin(line, *self._lines(original), verbatim=True)
        # An input that came in UNBOUND is unbound again before the user's code reads it (this runs
        # as Python only: the call site never hands UNBOUND to the compiled region, see below).
        restore = [_delete_if_unbound(n, unbound, self._glue(first, first)) for n in plan.unbound_reads]
        declared = self._declarations(run.statements, self._glue(first, first))
        # The outputs go back to the call site, unless the run returns from the function itself.
        returns = [] if run.ends_with_return or not outputs else replace(
            "return outputs", outputs=outputs, origin=self._glue(last, last))
        region_def = cast(cst.FunctionDef, replace_statement(
            "@regions.graph(first, last)\n"
            "def name(inputs):\n"
            "    declared\n"
            "    restore\n"
            "    statements\n"
            "    returns\n",
            regions=self.regions_var, first=first, last=last, name=name, inputs=inputs, declared=declared,
            restore=restore, statements=statements, returns=returns, origin=self._glue(first, last),
        ))
        self.result.region_defs.append(self._with_leading_lines(region_def, [cst.EmptyLine(indent=False)]))

        # The call site, which keeps the user's comments that stood before the run.
        glue = self._glue(first, last)
        emitted: list[cst.BaseStatement] = []
        arguments = [self._argument(n, state, emitted, glue, in_temporary=n in plan.unbound_reads) for n in inputs]
        compiled_call = self._call(name, arguments, run, outputs, glue)
        if not plan.unbound_reads:
            emitted += compiled_call
        else:
            # A name the region reads may be unbound: then the region runs as Python (its own
            # function, which the decorator wraps), which raises eager's UnboundLocalError where
            # eager does. A compiled graph never sees UNBOUND as a value.
            temporaries = [cast(cst.Name, argument).value for n, argument in zip(inputs, arguments)
                           if n in plan.unbound_reads]
            test = replace_expression("temporary is unbound", temporary=temporaries[0], unbound=unbound)
            for temporary in temporaries[1:]:
                test = replace_expression("test or temporary is unbound", test=test, temporary=temporary,
                                          unbound=unbound)
            python = replace_expression("region.__wrapped__", region=name)
            python_call = self._call(python, [argument.deep_clone() for argument in arguments], run, outputs, glue)
            unbound_names = ", ".join(plan.unbound_reads)
            branch = replace_statement(
                """
                if test:
                    python_call
                else:
                    compiled_call
                """,
                test=test, python_call=python_call, compiled_call=compiled_call, origin=glue,
            )
            comment = cst.EmptyLine(comment=cst.Comment(
                f"# carve: {unbound_names} may be unbound: then the region runs as Python, which raises "
                "eager's UnboundLocalError"))
            emitted.append(self._with_leading_lines(branch, [comment]))
        # An output that came back UNBOUND is unbound again, as eager left it.
        emitted += [_delete_if_unbound(n, unbound, glue) for n in plan.unbound_outputs]
        emitted[0] = self._with_leading_lines(emitted[0], leading)
        return emitted

    def _declarations(self, statements: list[Statement], origin: MarkOrigin) -> list[BodyStatement]:
        """The user's `global` / `nonlocal` declarations of the names `statements` bind, for the
        region function that holds them:

            def step(x, log):                       @_carve_step.graph(3, 5)
                global calls                        def _step_graph_region_0(x, log):
                y = x.sin()                             global calls
                if log:                     ->          y = x.sin()
                    calls = calls + 1                   if log:
                return y                                    calls = calls + 1
                                                        return y

        Without it `calls` would be a local of the region function: eager's global would never
        change, and reading it before the assignment would raise UnboundLocalError."""
        bound = set().union(*(bound_names(statement) for statement in statements))
        declared: list[BodyStatement] = []
        for name in sorted(bound & set(self.declarations)):
            if self.declarations[name] == "global":
                declared += replace("global name", name=name, origin=origin)
            else:
                declared += replace("nonlocal name", name=name, origin=origin)
        return declared

    def _call(self, region: str | cst.BaseExpression, arguments: list[cst.BaseExpression], run: GraphRun,
              outputs: list[str], glue: MarkOrigin) -> list[BodyStatement]:
        """`outputs = region(arguments)`, `region(arguments)` or `return region(arguments)`."""
        call = replace_expression("region(arguments)", region=region, arguments=arguments)
        if run.ends_with_return:
            return replace("return call", call=call, origin=glue)
        if not outputs:
            return replace("call", call=call, origin=glue)
        return replace("outputs = call", outputs=outputs, call=call, origin=glue)

    def _argument(
        self, name: str, state: State, emitted: list[cst.BaseStatement], glue: MarkOrigin, in_temporary: bool = False
    ) -> cst.BaseExpression:
        """`name`, or UNBOUND where it is surely unbound, or whichever it is where it may be
        (`in_temporary`: a name the call site tests, in a temporary of its own)."""
        if state.surely_bound(name):
            return cst.Name(name)
        if state.surely_unbound(name):
            return cst.Name(self.unbound_var)
        if not self.locals_shadowed:
            value = replace_expression("locals().get(key, unbound)",
                                       key=cst.SimpleString(f'"{name}"'), unbound=self.unbound_var)
            if not in_temporary:
                return value
            temp = self.temps.numbered("_carve_a")
            emitted += replace("temp = value", temp=temp, value=value, origin=glue)
            return cst.Name(temp)
        temp = self.temps.numbered("_carve_a")
        emitted += replace(
            """
            try:
                temp = name
            except NameError:
                temp = unbound
            """,
            temp=temp, name=name, unbound=self.unbound_var, origin=glue,
        )
        return cst.Name(temp)

    def _inline(self, statement: Statement) -> cst.SimpleStatementLine | cst.BaseCompoundStatement:
        first, last = self._lines(statement)
        line = as_statement_line(statement)
        return self._origin(line, first, last, verbatim=True)

    def _eager(self, item: EagerStatement) -> list[cst.BaseStatement]:
        statement = item.statement
        first, last = self._lines(statement)
        # A statement a create_graph=True backward reaches calls its callees as written: compiled on
        # their own, their backward could not be differentiated again either (CRV035).
        twice = any(finding.code == differentiated_twice.RULE.code for finding in item.findings)
        converted = as_statement_line(statement if twice else self._convert_calls(statement))
        statement = as_statement_line(statement)
        emitted: list[cst.BaseStatement] = []
        if item.findings:
            self.result.eager.append(EagerInfo(first, item.findings))
            breaks = item.breaks
            shown = breaks[0] if breaks else item.findings[0]
            if breaks:
                line = shown.line or first
                marker = checkpoint(shown, self.regions_var, first, origin=self._glue(line, line))
                emitted.append(self._with_leading_lines(marker, [*statement.leading_lines, eager_comment(shown)]))
                converted = converted.with_changes(leading_lines=())
            else:
                converted = converted.with_changes(leading_lines=[*statement.leading_lines, eager_comment(shown)])
        emitted.append(self._origin(converted, first, last, verbatim=_same_line_count(statement, converted)))
        if isinstance(statement, cst.FunctionDef) and _compiled_where_defined(statement):
            # Compiled where it is defined: a library handed the function (`optimizer.step(closure)`)
            # calls the compiled version, as torch.compile traces a closure its frame calls.
            emitted += replace("name = regions.compiled_definition(name)", name=statement.name.value,
                               regions=self.regions_var, origin=self._glue(first, first))
        return emitted

    def _compound(self, item: Compound, state: State) -> list[cst.BaseStatement]:
        statement = item.statement
        first, last = self._lines(statement)
        entries = self.bindings.child_entries(statement, state)
        new_blocks = [self._block(block, entry) for block, entry in zip(item.blocks, entries)]
        replaced = _replace_blocks(statement, child_blocks(statement), new_blocks)
        replaced = self._convert_calls(replaced, headers_only=True)
        emitted: list[cst.BaseStatement] = []
        if item.header_breaks:
            self.result.eager.append(EagerInfo(first, item.header_findings))
            finding = item.header_breaks[0]
            marker = checkpoint(finding, self.regions_var, first, origin=self._glue(first, first))
            emitted.append(self._with_leading_lines(marker, [*statement.leading_lines, eager_comment(finding)]))
            replaced = replaced.with_changes(leading_lines=())
        # Glue: lines of the compound not covered by its (recorded) inner statements map to its header.
        emitted.append(self._origin(replaced, first, last, verbatim=False))
        return emitted

    def _convert_calls(self, node: N, headers_only: bool = False) -> N:
        return convert_calls(node, self.analysis.user_calls, self.regions_var, headers_only)


class _BlockReplacer(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, list[cst.BaseStatement]]) -> None:
        self.replacements = replacements

    def _replace(self, original, updated):
        new_body = self.replacements.get(id(original))
        if new_body is None:
            return updated
        if isinstance(original, cst.IndentedBlock):
            return updated.with_changes(body=new_body)
        return cst.IndentedBlock(body=new_body)

    def leave_IndentedBlock(self, original, updated):
        return self._replace(original, updated)

    def leave_SimpleStatementSuite(self, original, updated):
        return self._replace(original, updated)


def _replace_blocks(statement, originals, new_bodies):
    replacements = {id(block): body for block, body in zip(originals, new_bodies)}
    return statement.visit(_BlockReplacer(replacements))


def _statements(block: cst.BaseSuite) -> list[Statement]:
    return list(block.body) if isinstance(block, cst.IndentedBlock) else [cast(cst.SimpleStatementSuite, block)]


class _OperationFinder(cst.CSTVisitor):
    OPERATIONS = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.Subscript,
                  cst.BooleanOperation, cst.IfExp, cst.ListComp, cst.GeneratorExp, cst.DictComp, cst.SetComp,
                  cst.Attribute, cst.AugAssign, cst.For, cst.If)

    def __init__(self) -> None:
        self.found = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if _size_query(node):
            return False  # `b, t = idx.size()`: Python ints, nothing for a graph to compute
        if isinstance(node, self.OPERATIONS):
            self.found = True
        return not self.found


def _size_query(node: cst.CSTNode) -> bool:
    """`x.size()`, `x.size(-1)`, `x.dim()`, `x.shape`, `x.shape[1]`, `x.dtype` on a plain name:
    reads of a tensor's metadata, Python values and never graph work."""
    if isinstance(node, cst.Subscript):
        index = node.slice[0].slice if len(node.slice) == 1 else None
        return (isinstance(index, cst.Index) and integer_value(index.value) is not None
                and isinstance(node.value, cst.Attribute) and _size_query(node.value))
    if isinstance(node, cst.Attribute):
        return isinstance(node.value, cst.Name) and node.attr.value in NON_TENSOR_ATTRIBUTES
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        func = node.func
        return (isinstance(func.value, cst.Name) and func.attr.value in NON_TENSOR_METHODS
                and all(integer_value(arg.value) is not None and arg.keyword is None and not arg.star
                        for arg in node.args))
    return False


def _has_operation(statement: cst.CSTNode) -> bool:
    """Could tracing `statement` record anything? Not for `n = 0`, `return total` or
    `b, t = idx.size()`."""
    finder = _OperationFinder()
    statement.visit(finder)
    return finder.found


@dataclass
class _Plan:
    inputs: list[str]
    outputs: list[str]
    unbound_reads: list[str]      # inputs that may be unbound when the region is called, read where they may be
    unbound_outputs: list[str]    # outputs that may go out UNBOUND
    conflicts: set[str]           # names no one region can carry: the statements reading them run as Python


def _compiled_where_defined(node: cst.FunctionDef) -> bool:
    """Does a nested `def` get compiled where it is defined?

        def closure():                          def closure():
            loss = criterion(seq(x), y)             loss = criterion(seq(x), y)
            loss.backward()             ->          loss.backward()
            return loss                             return loss
                                                closure = _carve_f.compiled_definition(closure)

    Not a decorated def (its decorators made what the name holds), a generator or coroutine
    (calling one runs none of its body), nor one that rebinds its enclosing function's variables
    (`nonlocal`): those stay as written."""
    if node.decorators or node.asynchronous is not None:
        return False
    finder = _SuspendsOrRebindsCells()
    node.body.visit(finder)
    return not finder.found


class _SuspendsOrRebindsCells(cst.CSTVisitor):
    """`yield`, `await` or `nonlocal` in a function's own body (nested scopes are their own)."""

    def __init__(self) -> None:
        self.found = False

    def visit_Yield(self, node: cst.Yield) -> None:
        self.found = True

    def visit_Await(self, node: cst.Await) -> None:
        self.found = True

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.found = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False


def _delete_if_unbound(name: str, unbound: str, glue: MarkOrigin) -> cst.BaseStatement:
    return replace_statement("if name is unbound: del name", name=name, unbound=unbound, origin=glue)


def _only_stores(findings: list[Finding]) -> bool:
    """The statement's only findings are Python side effects (CRV019): an assignment into an
    attribute or an item keeps only the store eager (`Hoister.hoist_assigned_value`)."""
    return bool(findings) and all(f.code == side_effect.RULE.code for f in findings)


def _hoistable(findings: list[Finding]) -> bool:
    codes = {f.code for f in findings}
    return bool(codes) and codes <= HOISTABLE_CODES


def _same_line_count(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """Converting calls keeps a statement's line structure, so its lines still map one to one."""
    render = cst.Module(body=[]).code_for_node
    return render(a.with_changes(leading_lines=())).count("\n") == render(b.with_changes(leading_lines=())).count("\n")


def _simple_statements(block: cst.BaseSuite) -> list[cst.CSTNode]:
    """The one-line statements of `block` and of the blocks nested in it (not in nested functions)."""
    found: list[cst.CSTNode] = []
    for statement in _statements(block):
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            found.append(statement)
        elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            for child in child_blocks(statement):
                found.extend(_simple_statements(child))
    return found
