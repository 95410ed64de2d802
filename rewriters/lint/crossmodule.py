"""Calls to functions defined in other files: the linted tree's modules and installed packages.

    # train.py (linted)                      # site-packages/fancylib/ops.py (installed, read only)
    from fancylib.ops import smooth          def smooth(x):
                                                 print("smoothing", x.shape)    # line 2
    @torch.compile                               return x * 0.5
    def step(x):
        return smooth(x) + 1                 # CRV016: smooth() has a graph break inside
                                             #   (CRV003 at .../fancylib/ops.py:2: print() performs I/O)

`ImportedCalls` is a `CallResolver`: a call whose name is imported (`from m import f`,
`import pkg.m as m` then `m.f(x)`) is resolved to the file defining it
(`carve.rewriters.lint.modules`) and the function is analysed with the same analysis, its
module's imports and its own lines; its breaks become CRV016 at the call. Nothing is
imported or run.

Only the function is parsed with libcst, not its whole module: `ast` (fast, in C) finds
where it is and what the module imports, and the function's own lines are parsed alone
(a library module is often large, and a call uses one function of it). Files and functions
are cached per process. Calls the function makes to its own module's functions are
followed the same way.

Functions of the linted tree are followed as deep as calls go (cycles end where they
start). Into an installed package, calls are followed `library_depth` deep (2: the
library function the user calls, and the library functions that one calls); deeper calls
are taken as traceable, which keeps the cost bounded on large libraries.
"""

from __future__ import annotations

import ast
import io
import os
import textwrap
from dataclasses import dataclass

import libcst as cst

from carve.rewriters.analysis import analyze_function
from carve.rewriters.callees import DISABLE_DECORATORS, TRACEABLE_DECORATORS, CalleeInfo, CalleeKind, decorator_name
from carve.rewriters.lint.modules import Definition, ModuleGraph, display_path
from carve.rewriters.lint.positions import LintModuleContext
from carve.rewriters.names import ImportTable


@dataclass
class ParsedFunction:
    """One function of another file, parsed alone, with the context to analyse it."""

    path: str
    qualname: str
    func: cst.FunctionDef
    context: LintModuleContext
    # Top-level function names of its module (calls to them are followed too).
    local_functions: frozenset[str]


class _FileSource:
    """A file read once: its lines, its functions by qualified name, its imports."""

    def __init__(self, text: str, tree: ast.Module, summary) -> None:
        self.lines = io.StringIO(text, newline="").readlines()
        # qualified name -> (first line, decorators included; last line)
        self.functions: dict[str, tuple[int, int]] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, _span(node))
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.functions.setdefault(f"{node.name}.{item.name}", _span(item))
        # What `ImportTable.from_module` gives for the module's own imports (absolute ones:
        # the rules name torch, numpy, logging... by their absolute names).
        self.imports = ImportTable()
        for local, binding in summary.bindings.items():
            if binding.level:
                continue
            if binding.name is not None:
                self.imports.aliases[local] = f"{binding.module}.{binding.name}"
            else:
                self.imports.aliases[local] = binding.module


def _span(node) -> tuple[int, int]:
    return min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno


class SourceCache:
    """Functions of other files, parsed once per process (per layout)."""

    def __init__(self, graph: ModuleGraph) -> None:
        self.graph = graph
        self._files: dict[str, _FileSource | None] = {}
        self._functions: dict[tuple[str, str], ParsedFunction | None] = {}

    def _file(self, path: str) -> _FileSource | None:
        if path not in self._files:
            source = self.graph.source(path)
            self._files[path] = _FileSource(*source, self.graph.summary(path, source[1])) if source is not None else None
        return self._files[path]

    def function(self, path: str, qualname: str) -> ParsedFunction | None:
        key = (path, qualname)
        if key not in self._functions:
            self._functions[key] = self._parse_function(path, qualname)
        return self._functions[key]

    def _parse_function(self, path: str, qualname: str) -> ParsedFunction | None:
        source = self._file(path)
        if source is None:
            return None
        span = source.functions.get(qualname)
        if span is None:
            return None
        first, last = span
        text = textwrap.dedent("".join(source.lines[first - 1:last]))
        try:
            module = cst.parse_module(text)
        except Exception:  # a method whose body dedent cannot lift (a string at column 0): not followed
            return None
        func = next((s for s in module.body if isinstance(s, cst.FunctionDef)), None)
        if func is None:
            return None
        context = LintModuleContext(module, display_path(path), text, first - 1, source.imports)
        local = frozenset(name for name in source.functions if "." not in name)
        return ParsedFunction(path, qualname, func, context, local)


class CrossModuleState:
    """What the resolvers of one process share: the module graph, parsed functions, analysed callees."""

    _by_token: dict[str, "CrossModuleState"] = {}

    @classmethod
    def for_graph(cls, graph: ModuleGraph) -> "CrossModuleState":
        state = cls._by_token.get(graph.layout.token)
        if state is None or state.graph is not graph:
            cls._by_token.clear()  # one layout per run: the previous run's parsed files are not kept
            state = cls._by_token[graph.layout.token] = cls(graph)
        return state

    def __init__(self, graph: ModuleGraph) -> None:
        self.graph = graph
        self.sources = SourceCache(graph)
        self.infos: dict[tuple[str, str, int | None], CalleeInfo | None] = {}
        self.analysing: set[tuple[str, str]] = set()
        self.returns: dict[tuple[str, str], bool] = {}


class ImportedCalls:
    """Resolves the calls of the file at `path` to functions of other files.

    `depth` is None in the linted tree; in a library it is how many more library calls may be
    followed from here (0: none). `follow_local` also follows calls to the file's own top-level
    functions (for a function parsed alone; a linted file has its own ModuleResolver for those)."""

    def __init__(self, state: CrossModuleState, path: str, local_functions=(), depth: int | None = None,
                 tree=None, follow_local: bool = False) -> None:
        self.state = state
        self.path = path
        self.depth = depth
        self.follow_local = follow_local
        self.local_functions = frozenset(local_functions)
        self.bindings = state.graph.bindings(path, tree)

    def _definition(self, dotted: str) -> Definition | None:
        head = dotted.split(".", 1)[0]
        if head in self.local_functions:
            if not self.follow_local or "." in dotted:
                return None
            return Definition(self.path, dotted, "function")
        if head not in self.bindings:
            return None
        definition = self.state.graph.definition(self.path, dotted)
        if definition is None or definition.kind not in ("function", "staticmethod"):
            return None
        return definition

    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        if not dotted:
            return None
        definition = self._definition(dotted)
        return self.callee(definition, dotted) if definition is not None else None

    def _next_depth(self, definition: Definition) -> tuple[bool, int | None]:
        """(may follow, the depth inside the callee)."""
        if self.depth is None and self.state.graph.layout.in_tree(definition.path):
            return True, None
        remaining = self.state.graph.layout.library_depth if self.depth is None else self.depth
        return remaining > 0, remaining - 1

    def returns_tensor(self, dotted: str) -> bool | None:
        """Whether the function `dotted` of another file returns a tensor (None: not one this resolver follows)."""
        definition = self._definition(dotted)
        if definition is None:
            return None
        follow, depth = self._next_depth(definition)
        if not follow:
            return None
        key = (definition.path, definition.qualname)
        state = self.state
        if key not in state.returns:
            state.returns[key] = False  # while it is being computed (recursion)
            parsed = state.sources.function(definition.path, definition.qualname)
            if parsed is not None:
                from carve.rewriters.tensors import returns_tensor

                resolver = _resolver_for(state, parsed, depth)

                def oracle(name: str) -> bool:
                    return bool(resolver.returns_tensor(name))

                state.returns[key] = returns_tensor(parsed.func, parsed.context.imports, oracle)
        return state.returns[key]

    def callee(self, definition: Definition, name: str) -> CalleeInfo | None:
        state = self.state
        follow, depth = self._next_depth(definition)
        if not follow:
            return None
        key = (definition.path, definition.qualname, depth)
        if key in state.infos:
            return state.infos[key]
        parsed = state.sources.function(definition.path, definition.qualname)
        if parsed is None:
            return None
        func = parsed.func
        names = {decorator_name(d, parsed.context.imports) for d in func.decorators}
        extra: dict[str, object] = {"definition": definition}
        if names & DISABLE_DECORATORS:
            info = CalleeInfo(CalleeKind.DISABLED, name, extra=extra)
        elif names & TRACEABLE_DECORATORS:
            info = CalleeInfo(CalleeKind.TRACEABLE, name, extra=extra)
        elif (definition.path, definition.qualname) in state.analysing:
            return CalleeInfo(CalleeKind.USER_FUNCTION, name, extra=extra)  # a cycle: not cached
        else:
            state.analysing.add((definition.path, definition.qualname))
            try:
                with parsed.context.within(func):
                    analysis = analyze_function(func, parsed.context, _resolver_for(state, parsed, depth))
            finally:
                state.analysing.discard((definition.path, definition.qualname))
            # Whether it calls functions of its own (whose frames Dynamo traces even when it skips this one).
            extra["calls_user_functions"] = bool(analysis.user_calls)
            info = CalleeInfo(CalleeKind.USER_FUNCTION, name, tuple(analysis.findings), display_path(definition.path),
                              extra=extra)
        state.infos[key] = info
        return info


def _resolver_for(state: CrossModuleState, parsed: ParsedFunction, depth: int | None) -> ImportedCalls:
    return ImportedCalls(state, parsed.path, parsed.local_functions, depth, follow_local=True)


def follow_same_module_callees(context: LintModuleContext, resolver: ImportedCalls) -> None:
    """Same-module callees of a linted file (its `ModuleResolver`) are analysed with `resolver`, so
    that a helper's own calls into other modules count."""
    static = context.static_resolver
    if getattr(static, "_carve_cross_module", False):
        return
    static._carve_cross_module = True

    def analyse_callee(func, _static):
        with context.within(func):
            return analyze_function(func, context, resolver).findings

    static.analyse_callee = analyse_callee


def file_key(filename: str) -> str:
    return os.path.realpath(filename)
