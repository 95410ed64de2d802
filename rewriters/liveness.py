"""Which names flow into and out of a graph region (the loop-lifting liveness of Numba).

    def f(x, n):
        y = x * 2               region [y = x * 2; z = y + n]:
        z = y + n                   inputs  (x, n)   read before written, local to f
        w = z.sum()                 outputs (z,)     written, and live after the region
        y = 0                                        (y is written, but never read again)
        return w

Inputs are the local names a region reads before it writes them (globals and
builtins are read through the region function's own globals). Outputs are the
names it writes that are live after its last statement (`carve.rewriters.dataflow`:
read later on some path before being bound again; inside a loop, the next
iteration's reads count). Reads inside nested functions and lambdas count, so
closures see their values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

from carve.rewriters.scopes import OwnScopeVisitor


def local_names(func: cst.FunctionDef, global_names: set[str]) -> set[str]:
    """Names bound in `func` (parameters included), minus the global/nonlocal ones."""
    names = param_names(func.params)
    collector = _BindingCollector()
    func.body.visit(collector)
    declared = _Declared()
    func.body.visit(declared)
    return (names | collector.names) - global_names - declared.names


def bound_names(node: cst.CSTNode) -> set[str]:
    """Every name a statement (or block) may bind in the function it belongs to."""
    collector = _BindingCollector()
    node.visit(collector)
    return collector.names


def param_names(params: cst.Parameters) -> set[str]:
    """The names a function's parameters bind (`*args` and `**kwargs` included)."""
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def declarations(func: cst.FunctionDef) -> dict[str, str]:
    """The names `func`'s own body declares, each with its declaration:

        def step(x):
            global calls            ->  {"calls": "global", "total": "nonlocal"}
            nonlocal total
    """
    declared = _Declared()
    func.body.visit(declared)
    return declared.kinds


class _Declared(OwnScopeVisitor):
    """`global` / `nonlocal` names of a function body (not of nested functions)."""

    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}

    @property
    def names(self) -> set[str]:
        return set(self.kinds)

    def visit_Global(self, node: cst.Global) -> None:
        self.kinds.update((item.name.value, "global") for item in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.kinds.update((item.name.value, "nonlocal") for item in node.names)


class _DefaultsOnly(cst.CSTVisitor):
    """Visits a parameter list's defaults (evaluated in the enclosing scope) with `uses`."""

    def __init__(self, uses: "_NameUses") -> None:
        self.uses = uses

    def visit_Param(self, node: cst.Param) -> bool:
        if node.default is not None:
            node.default.visit(self.uses)
        return False


# A statement's (reads, writes): `reads_and_writes`, or a `Dataflow`'s copy of it.
Uses = Callable[[cst.CSTNode], tuple[list[str], set[str]]]


def region_inputs(statements: Sequence[cst.CSTNode], locals_: set[str], uses: "Uses | None" = None) -> list[str]:
    """Local names read by `statements` before they are written there, in first-use order."""
    uses = uses or reads_and_writes
    written: set[str] = set()
    inputs: list[str] = []
    for statement in statements:
        reads, writes = uses(statement)
        for name in reads:
            if name in locals_ and name not in written and name not in inputs:
                inputs.append(name)
        written |= writes
    return inputs


def region_outputs(
    statements: Sequence[cst.CSTNode], live_after: set[str] | frozenset[str], locals_: set[str],
    uses: "Uses | None" = None,
) -> list[str]:
    """Local names `statements` write that are live after them, in the order they are written."""
    uses = uses or reads_and_writes
    written: list[str] = []
    for statement in statements:
        for name in sorted(uses(statement)[1]):
            if name not in written:
                written.append(name)
    return [name for name in written if name in locals_ and name in live_after]


def reads_and_writes(node: cst.CSTNode) -> tuple[list[str], set[str]]:
    """Names loaded (in order, reads of a statement before its writes) and names stored by `node`."""
    collector = _NameUses()
    node.visit(collector)
    return collector.reads, collector.writes


def target_uses(target: cst.CSTNode) -> tuple[list[str], set[str]]:
    """What storing into `target` reads (`a[i]`: `a`, `i`) and binds (`a, b`: `a`, `b`)."""
    collector = _NameUses()
    collector._store(target)
    return collector.reads, collector.writes


def names_read(nodes: list[cst.CSTNode]) -> set[str]:
    result: set[str] = set()
    for node in nodes:
        result.update(reads_and_writes(node)[0])
    return result


class _BindingCollector(cst.CSTVisitor):
    """Every name bound in a function body (not inside nested functions or classes)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.names.add(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def _comprehension(self, node) -> bool:
        # Comprehension targets are local to the comprehension; walrus targets inside are not.
        walrus = _WalrusTargets()
        node.visit(walrus)
        self.names |= walrus.names
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self.names |= target_names(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.names |= target_names(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.names |= target_names(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.names |= target_names(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.names |= target_names(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.names.add(node.name.name.value)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names |= target_names(node.target)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        if node.asname is not None:
            self.names |= target_names(node.asname.name)
        else:
            self.names.add((node.evaluated_name).split(".")[0])

    def visit_Del(self, node: cst.Del) -> None:
        self.names |= target_names(node.target)  # `del x` makes `x` local, as any binding does

    # `match` capture patterns: `case [a, *rest]`, `case {"k": v, **kw}`, `case Point(x=px) as p`.
    def visit_MatchAs(self, node: cst.MatchAs) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchStar(self, node: cst.MatchStar) -> None:
        if node.name is not None:
            self.names.add(node.name.value)

    def visit_MatchMapping(self, node: cst.MatchMapping) -> None:
        if node.rest is not None:
            self.names.add(node.rest.value)


class _WalrusTargets(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.names |= target_names(node.target)


def target_names(target: cst.CSTNode) -> set[str]:
    """The plain names an assignment target binds (`a`, `(a, *b)`, `[a, b]`); not attributes or items."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        names: set[str] = set()
        for element in target.elements:
            names |= target_names(element.value)
        return names
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


class _NameUses(cst.CSTVisitor):
    """Loads in evaluation order (right-hand side before targets) and stores of plain names."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: set[str] = set()
        self._bound_inside: list[set[str]] = []
        self._nested = 0  # inside a nested def or class body: stores bind there, not here

    def _read(self, name: str) -> None:
        if any(name in scope for scope in self._bound_inside):
            return
        if name not in self.writes and name not in self.reads:
            self.reads.append(name)

    def visit_Name(self, node: cst.Name) -> None:
        self._read(node.value)

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for target in node.targets:
            self._store(target.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.value.visit(self)
        if isinstance(node.target, cst.Name):
            self._read(node.target.value)
        self._store(node.target)
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
        self._store(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._store(node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        self._store(node.target)
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)  # `.attr` is not a name read
        return False

    def visit_AsName(self, node: cst.AsName) -> bool:
        self._store(node.name)  # `with m as t`, `except E as e`, `import a as b`
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        for alias in node.names:
            if alias.asname is not None:
                alias.asname.visit(self)
            else:
                self._store(cst.Name(alias.evaluated_name.split(".")[0]))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                if alias.asname is not None:
                    alias.asname.visit(self)
                elif isinstance(alias.name, cst.Name):
                    self._store(alias.name)
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        return False

    # -- match: a capture is a store; `Point(x=...)`'s keyword is an attribute name, not a read.
    def visit_MatchAs(self, node: cst.MatchAs) -> bool:
        if node.pattern is not None:
            node.pattern.visit(self)
        if node.name is not None:
            self._store(node.name)
        return False

    def visit_MatchStar(self, node: cst.MatchStar) -> bool:
        if node.name is not None:
            self._store(node.name)
        return False

    def visit_MatchMapping(self, node: cst.MatchMapping) -> bool:
        for element in node.elements:
            element.key.visit(self)
            element.pattern.visit(self)
        if node.rest is not None:
            self._store(node.rest)
        return False

    def visit_MatchKeywordElement(self, node: cst.MatchKeywordElement) -> bool:
        node.pattern.visit(self)
        return False

    # -- nested scopes: their reads of this function's names count (closures), their stores do not.
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        node.params.visit(_DefaultsOnly(self))
        self._bound_inside.append(local_names(node, set()))
        self._nested += 1
        node.body.visit(self)
        self._nested -= 1
        self._bound_inside.pop()
        self._store(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for decorator in node.decorators:
            decorator.visit(self)
        for arg in (*node.bases, *node.keywords):
            arg.visit(self)
        self._nested += 1
        node.body.visit(self)
        self._nested -= 1
        self._store(node.name)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)  # the keyword of `f(k=v)` is not a name read
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        node.params.visit(_DefaultsOnly(self))
        params = param_names(node.params)
        self._bound_inside.append(params)
        node.body.visit(self)
        self._bound_inside.pop()
        return False

    def _comprehension(self, node) -> bool:
        bound: set[str] = set()
        generator = node.for_in
        # The first iterable is evaluated in the enclosing scope.
        generator.iter.visit(self)
        while generator is not None:
            bound |= target_names(generator.target)
            generator = generator.inner_for_in
        self._bound_inside.append(bound)
        generator = node.for_in
        first = True
        while generator is not None:
            if not first:
                generator.iter.visit(self)
            for condition in generator.ifs:
                condition.visit(self)
            generator = generator.inner_for_in
            first = False
        for part in ("elt", "key", "value"):
            child = getattr(node, part, None)
            if child is not None:
                child.visit(self)
        self._bound_inside.pop()
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    def _store(self, target: cst.CSTNode) -> None:
        if isinstance(target, cst.Name):
            if not self._nested and not any(target.value in scope for scope in self._bound_inside):
                self.writes.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._store(element.value)
        elif isinstance(target, cst.StarredElement):
            self._store(target.value)
        else:
            target.visit(self)  # `a[i] = ...` / `a.b = ...` read `a` and `i`
