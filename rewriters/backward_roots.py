"""Which backward passes reach each statement: where a graph region must end so that each
backward frees only what it frees in eager.

A compiled region is one autograd node for all of its outputs: a backward through any output
runs (and frees) the region's whole backward graph. Eager code that back-propagates
separately from values whose autograd graphs are disjoint, as a GAN step does, then fails
the second time ("Trying to backward through the graph a second time"). So in a function
with two or more backward sites, a graph run ends wherever the backward passes reaching
consecutive statements change:

    def step(z):                            backward passes reaching it     regions
        fake = G(z)                         {errG.backward()}               region 0
        errD = D(fake.detach()).mean()      {errD.backward()}               region 1
        errD.backward()                                                     eager
        print(errD.item())                                                  eager
        errG = D(fake).mean()               {errG.backward()}               region 2
        errG.backward()                                                     eager

Before, `fake` and `errD` came out of one region, and `errD.backward()` freed the node that
`errG.backward()` reaches through `fake`. After, each backward runs through the regions
holding what it reaches in eager.

A backward site is `X.backward(...)`, `torch.autograd.backward(X, ...)` or
`torch.autograd.grad(X, ...)`. It reaches a statement when a value the statement binds may
require grad and flows into X through autograd: along def-use chains (the dataflow's
reaching definitions, so a name rebound between two backward passes, as DCGAN's `output`,
is two values), through in-place and container updates of a bound value (`h.add_(b)`,
`losses.append(l)`), but not through `.detach()`, `.item()`, `.data`, shape and dtype
reads, conversions (`float(t)`, `len(t)`), the callee of a call (`D` in `D(fake)`), out of a
`torch.no_grad()` block, nor through values that cannot require grad (`torch.full(...)`,
`t.size(0)`, literals, and what is computed from those only), so that a label or a batch
size read by every loss keeps no two statements apart. A statement no site reaches joins
either side. A function with one site is never cut: every statement is reached by it or by
none.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.liveness import local_names
from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.op_tables import AUTOGRAD_FUNCTIONS, AUTOGRAD_METHODS, CONVERTING_BUILTINS
from carve.rewriters.walk import children, walk

# A value read through these carries no autograd graph into what is computed from it.
DETACHING_METHODS = frozenset({
    "detach", "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "element_size", "stride",
    "data_ptr", "is_contiguous", "register_hook", "retain_grad",
})
DETACHING_ATTRIBUTES = frozenset({
    "data", "shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "grad", "grad_fn", "layout",
})
DETACHING_BUILTINS = CONVERTING_BUILTINS | frozenset({"len", "isinstance", "type", "id", "str", "repr", "hash"})
# Builtins whose result carries what their arguments carry (`sum(losses)`).
TRANSPARENT_BUILTINS = frozenset({
    "sum", "max", "min", "abs", "pow", "round", "divmod", "list", "tuple", "dict", "set", "sorted",
    "reversed", "enumerate", "zip", "iter", "next", "range", "map", "filter",
})
# torch's factories: a new tensor that requires grad only when asked to (`requires_grad=True`).
FACTORY_FUNCTIONS = frozenset({
    "zeros", "ones", "full", "empty", "empty_strided", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "tensor", "scalar_tensor", "zeros_like", "ones_like", "full_like",
    "empty_like", "rand_like", "randn_like", "randint_like", "multinomial",
})
FACTORY_METHODS = frozenset({"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})
# Modules whose functions compute from their arguments only (no parameters of their own).
ARGUMENT_ONLY_MODULES = ("torch.", "math.", "numpy.", "operator.")
# Calls on a name that change the value it holds: in-place tensor methods (`h.add_(b)`) and
# updates of a container of tensors (`losses.append(l)`).
CONTAINER_UPDATES = frozenset({"append", "extend", "insert", "update", "setdefault", "add"})
PYTHON_CONSTANTS = frozenset({"True", "False", "None", "Ellipsis", "NotImplemented"})


@dataclass(frozen=True)
class _Binding:
    """What the value a binding node (an assignment line, a loop target, an in-place update, a
    parameter) is computed from: `reads` read where `point` starts; `originates`: it may require
    grad whatever those hold (a parameter, a module call, a global tensor)."""

    point: cst.CSTNode | None
    reads: tuple[str, ...]
    originates: bool


class BackwardRoots:
    """`roots_of(statement)`: the backward sites (numbered in source order) that reach a value
    the statement computes. `differentiated_twice(statement)`: a site that builds a graph of its
    own gradient (`create_graph=True`: a gradient penalty, a Hessian-vector product) reaches it.
    Built once per function."""

    def __init__(self, analysis: FunctionAnalysis, dataflow: Dataflow) -> None:
        self.dataflow = dataflow
        self.sites: list[cst.CSTNode] = []
        self._marks: dict[int, set[int]] = {}
        self._cache: dict[int, frozenset[int]] = {}
        # Sites (by number) that differentiate with create_graph=True, and what they reach.
        self._twice_sites: set[int] = set()
        self._twice: set[int] = set()
        calls = [(call, qualified) for call, qualified in analysis.autograd_calls if _runs_backward(call, qualified)]
        creates_graph = any(_creates_graph(call) for call, _ in calls)
        if len(calls) < 2 and not creates_graph:
            return  # nothing to keep apart: the partition is the one without this analysis
        func = analysis.func
        self._locals = local_names(func, analysis.global_names)
        self._imports = analysis.imports
        self._parents = _parents(func)
        self._grad_disabled = analysis.grad_disabled_blocks
        self._mutations = _Mutations()
        walk(func.body, self._mutations)
        self._nodes: dict[int, cst.CSTNode] = {}
        starts: list[frozenset[int]] = []
        for call, qualified in calls:
            statement = self._statement_of(call)
            if statement is not None:
                if _creates_graph(call):
                    self._twice_sites.add(len(self.sites))
                self.sites.append(statement)
                starts.append(self._inputs(statement, self._facts(_backpropagated(call, qualified))[0]))
        if len(self.sites) >= 2 or self._twice_sites:
            self._mark(starts)
        self._twice = {key for key, sites in self._marks.items() if sites & self._twice_sites}
        if len(self.sites) < 2:
            self._marks = {}  # one site: nothing to keep apart

    def differentiated_twice(self, statement: cst.CSTNode) -> bool:
        """Whether a value `statement` computes flows into a `create_graph=True` backward: its
        gradient is differentiated again, which AOT autograd's compiled backward refuses
        ("does not currently support double backward"), so it must run as Python."""
        return bool(self._twice) and any(id(node) in self._twice for node in _subtree(statement))

    def roots_of(self, statement: cst.CSTNode) -> frozenset[int]:
        if not self._marks:
            return frozenset()
        known = self._cache.get(id(statement))
        if known is None:
            found: set[int] = set()
            for node in _subtree(statement):
                found |= self._marks.get(id(node), set())
            known = self._cache[id(statement)] = frozenset(found)
        return known

    # -- the dependency graph --------------------------------------------------------------
    def _mark(self, starts: list[frozenset[int]]) -> None:
        """Marks each binding that may require grad with the sites it flows into."""
        bindings: dict[int, _Binding] = {}
        inputs: dict[int, frozenset[int]] = {}
        pending = [key for start in starts for key in start]
        while pending:
            key = pending.pop()
            if key in bindings:
                continue
            binding = bindings[key] = self._binding(self._nodes[key])
            inputs[key] = frozenset() if binding.point is None else self._inputs(binding.point, binding.reads)
            pending.extend(inputs[key])
        # May it require grad: the least fixpoint (loops make the graph cyclic).
        grad = {key: binding.originates for key, binding in bindings.items()}
        changed = True
        while changed:
            changed = False
            for key in bindings:
                if not grad[key] and any(grad[source] for source in inputs[key]):
                    grad[key] = changed = True
        for index, start in enumerate(starts):
            reached = [key for key in start if grad[key]]
            seen = set(reached)
            while reached:
                key = reached.pop()
                self._marks.setdefault(key, set()).add(index)
                for source in inputs[key]:
                    if grad[source] and source not in seen:
                        seen.add(source)
                        reached.append(source)

    def _inputs(self, point: cst.CSTNode, names: tuple[str, ...]) -> frozenset[int]:
        """The bindings of `names` that may hold where `point` starts, and the in-place updates
        made to the values they bound."""
        found: set[int] = set()
        for definition in self.dataflow.reaching_definitions(point):
            if definition.name not in names:
                continue
            self._nodes[definition.node_id] = definition.node
            found.add(definition.node_id)
            for mutation in self._mutations.of(definition.name):
                if (mutation is not point and self.dataflow.knows(mutation)
                        and definition in self.dataflow.reaching_definitions(mutation)):
                    self._nodes[id(mutation)] = mutation
                    found.add(id(mutation))
        return frozenset(found)

    def _binding(self, node: cst.CSTNode) -> _Binding:
        if node is self.dataflow.func:
            return _Binding(None, (), True)  # a parameter: may be anything
        statement = node if self.dataflow.knows(node) else self._statement_of(node)
        if statement is None:
            return _Binding(None, (), True)
        if self._under_no_grad(statement):
            return _Binding(None, (), False)
        if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            reads: list[str] = []
            originates = False
            for part in _computed_parts(node):
                part_reads, part_originates = self._facts(part)
                reads += [name for name in part_reads if name not in reads]
                originates |= part_originates
            return _Binding(node, tuple(reads), originates)
        if isinstance(statement, cst.For) and node is statement.target:
            return _Binding(statement, *self._facts(statement.iter))  # evaluated before the loop
        if isinstance(node, cst.WithItem):
            return _Binding(statement, *self._facts(node.item))
        if isinstance(node, cst.BaseExpression):
            return _Binding(statement, *self._facts(node))  # a walrus in a test
        if isinstance(node, cst.MatchCase):
            return _Binding(None, (), True)  # a capture of the subject's parts
        return _Binding(None, (), False)  # an exception, a nested def or class

    def _facts(self, node: cst.CSTNode) -> tuple[tuple[str, ...], bool]:
        facts = _ValueFacts(self._locals, self._imports)
        walk(node, facts)
        return tuple(facts.reads), facts.originates

    def _statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost statement of the function's dataflow holding `node` (None inside a
        nested function or lambda: it runs when called)."""
        current = self._parents.get(id(node))
        while current is not None:
            if isinstance(current, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
                return None
            if self.dataflow.knows(current):
                return current
            current = self._parents.get(id(current))
        return None

    def _under_no_grad(self, statement: cst.CSTNode) -> bool:
        current: cst.CSTNode | None = statement
        while current is not None:
            if id(current) in self._grad_disabled:
                return True
            current = self._parents.get(id(current))
        return False


def _runs_backward(call: cst.Call, qualified: str | None) -> bool:
    """A backward site, of the calls CRV012 reports (which include autograd bookkeeping such as
    `.retain_grad()`)."""
    if qualified in AUTOGRAD_FUNCTIONS:
        return True
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in AUTOGRAD_METHODS


def _creates_graph(call: cst.Call) -> bool:
    """`create_graph=True` among the call's keywords (`torch.autograd.grad(d, x, create_graph=True)`,
    `loss.backward(create_graph=True)`)."""
    return any(arg.keyword is not None and arg.keyword.value == "create_graph"
               and isinstance(arg.value, cst.Name) and arg.value.value == "True" for arg in call.args)


def _backpropagated(call: cst.Call, qualified: str | None) -> cst.CSTNode:
    """`loss` of `loss.backward()`, `torch.autograd.backward(loss)` and `torch.autograd.grad(loss, w)`."""
    if qualified in AUTOGRAD_FUNCTIONS:
        keyword = next((arg.value for arg in call.args
                        if arg.keyword is not None and arg.keyword.value in ("tensors", "outputs")), None)
        positional = next((arg.value for arg in call.args if arg.keyword is None and not arg.star), None)
        return keyword or positional or call
    assert isinstance(call.func, cst.Attribute)  # `_runs_backward`: a `.backward()` method call
    return call.func.value


def _computed_parts(line: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> Iterator[cst.CSTNode]:
    """What a line's bindings and updates are computed from: assigned values (an augmented
    assignment's target too), the store target of an item (`h[i] = v` reads `h`), and
    expression statements; never the names it binds."""
    for small in line.body:
        if isinstance(small, cst.AugAssign):
            yield small.target
            yield small.value
        elif isinstance(small, cst.Assign):
            yield small.value
            for target in small.targets:
                if not isinstance(target.target, (cst.Name, cst.Tuple, cst.List)):
                    yield target.target
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                yield small.value
        elif isinstance(small, cst.Expr):
            yield small.value


class _ValueFacts(cst.CSTVisitor):
    """Of an expression: the local names whose autograd graph flows into its value, and whether
    it may require grad whatever they hold (it calls a module or reads a global)."""

    def __init__(self, locals_: set[str], imports: ImportTable) -> None:
        self.locals = locals_
        self.imports = imports
        self.reads: list[str] = []
        self.originates = False

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.locals:
            if node.value not in self.reads:
                self.reads.append(node.value)
        elif node.value not in PYTHON_CONSTANTS:
            self.originates = True  # a global, a closure's cell, a comprehension's variable

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value not in DETACHING_ATTRIBUTES:
            walk(node.value, self)  # `.attr` is not a name read
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        asks_for_grad = any(arg.keyword is not None and arg.keyword.value == "requires_grad" for arg in node.args)
        dotted = dotted_name(func)
        root = dotted.partition(".")[0] if dotted else None
        if isinstance(func, cst.Attribute) and func.attr.value in DETACHING_METHODS:
            return False
        if dotted is not None and root not in self.locals:
            # A function of a module or a builtin (`torch.sin`, `F.relu`, `sum`), or a global module (`D`).
            qualified = self.imports.qualify(dotted) or dotted
            name = qualified.rpartition(".")[2]
            if qualified.startswith(ARGUMENT_ONLY_MODULES) and name in FACTORY_FUNCTIONS:
                self.originates |= asks_for_grad
                return False
            if isinstance(func, cst.Name) and dotted in DETACHING_BUILTINS:
                return False
            if not (qualified.startswith(ARGUMENT_ONLY_MODULES) or isinstance(func, cst.Name)
                    and dotted in TRANSPARENT_BUILTINS):
                self.originates = True  # a module, a user function: parameters of its own
        elif isinstance(func, cst.Name):
            self.originates = True  # a local callable: `criterion(out, y)`, `net(x)`
        elif isinstance(func, cst.Attribute):
            if func.attr.value in FACTORY_METHODS:
                self.originates |= asks_for_grad
                return False
            walk(func.value, self)  # `x.view(-1)`, `self.net(x)`: the receiver's graph flows on
        else:
            walk(func, self)
            self.originates = True  # `fns[i](x)`: anything
        for arg in node.args:
            walk(arg.value, self)  # the keyword of `f(k=v)` is not a name read
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        walk(node.value, self)
        return False


class _Mutations(cst.CSTVisitor):
    """Lines that change the value a name holds without binding it: `h.add_(b)`, `h[i] = v`,
    `losses.append(l)`."""

    def __init__(self) -> None:
        self._by_name: dict[str, list[cst.CSTNode]] = {}

    def of(self, name: str) -> list[cst.CSTNode]:
        return self._by_name.get(name, [])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self._line(node)
        return False

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> bool:
        self._line(node)
        return False

    def _line(self, line: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> None:
        for small in line.body:
            changed: cst.BaseExpression | None = None
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                func = small.value.func
                if isinstance(func, cst.Attribute) and (
                        func.attr.value in CONTAINER_UPDATES
                        or func.attr.value.endswith("_") and not func.attr.value.startswith("_")):
                    changed = func.value
            elif isinstance(small, cst.Assign):
                targets = [target.target for target in small.targets]
                changed = next((t.value for t in targets if isinstance(t, cst.Subscript)), None)
            if isinstance(changed, cst.Name):
                self._by_name.setdefault(changed.value, []).append(line)


def _parents(func: cst.FunctionDef) -> dict[int, cst.CSTNode]:
    parents: dict[int, cst.CSTNode] = {}
    stack: list[cst.CSTNode] = [func]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[id(child)] = node
            stack.append(child)
    return parents


def _subtree(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))
