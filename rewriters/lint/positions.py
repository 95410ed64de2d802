"""Source positions computed per function, and only for functions with something to report.

    context = LintModuleContext(module, filename, source)
    with context.within(func):
        analysis = analyze_function(func, context)   # positions of `func` computed on first use

libcst's PositionProvider generates the code of the whole module to number
it: on torch/nn that costs more than parsing and analysing together, while a
linter reports on a few hundred functions out of thousands. Here the
analysed function's code alone is generated, with the generator's state set
to where the function starts in the file (its first line from Python's own
`ast`, which is fast, and its enclosing indentation), so the positions are
the ones PositionProvider would give.
"""

from __future__ import annotations

import ast
from contextlib import contextmanager

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from carve.rewriters.analysis import ModuleContext
from carve.rewriters.checks.walk import children

_BLOCK_CONTAINERS = (
    cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.Finally,
) + tuple(t for t in (getattr(cst, "ExceptStarHandler", None), getattr(cst, "MatchCase", None)) if t)


def function_definitions(node: cst.CSTNode) -> list[cst.FunctionDef]:
    """Every `def` under `node` (nested ones too), in source order."""
    found: list[cst.FunctionDef] = []
    for child in children(node):
        if isinstance(child, cst.FunctionDef):
            found.append(child)
            found.extend(function_definitions(child.body))
        elif isinstance(child, _BLOCK_CONTAINERS):
            found.extend(function_definitions(child))
    return found


class _PositionSink:
    """What PositionProvidingCodegenState writes into (it expects a provider with `_computed`)."""

    def __init__(self, computed: dict) -> None:
        self._computed = computed


class LintModuleContext(ModuleContext):
    """A ModuleContext whose node positions are generated one function at a time, on demand."""

    def __init__(self, module: cst.Module, filename: str, source: str | bytes) -> None:
        self._source = source
        self._computed: dict = {}
        self._positioned: set[int] = set()
        self._function_stack: list[cst.FunctionDef] = []
        self._starts: dict[int, tuple[int, str]] | None = None
        self._whole_module_done = False
        super().__init__(module, filename)
        analyse_callee = self.static_resolver.analyse_callee

        def analyse_callee_within(func, resolver):
            with self.within(func):
                return analyse_callee(func, resolver)

        self.static_resolver.analyse_callee = analyse_callee_within

    def _module_positions(self):
        return self._computed

    @contextmanager
    def within(self, func: cst.FunctionDef):
        """Nodes asked about while inside this block belong to `func`."""
        self._function_stack.append(func)
        try:
            yield
        finally:
            self._function_stack.pop()

    def position(self, node: cst.CSTNode):
        found = self._computed.get(node)
        if found is None:
            if self._function_stack and id(self._function_stack[-1]) not in self._positioned:
                self._position_function(self._function_stack[-1])
            else:
                self._position_module()
            found = self._computed.get(node)
        return found

    def line_of(self, node: cst.CSTNode) -> int:
        position = self.position(node)
        return position.start.line + self.line_offset if position else 0

    def line_range(self, node: cst.CSTNode) -> tuple[int, int]:
        position = self.position(node)
        return position.start.line + self.line_offset, position.end.line + self.line_offset

    # -- computing ------------------------------------------------------------------------------
    def _position_module(self) -> None:
        if not self._whole_module_done:
            self._whole_module_done = True
            self._computed.update(MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider))

    def _position_function(self, func: cst.FunctionDef) -> None:
        self._positioned.add(id(func))
        start = self._function_starts().get(id(func))
        if start is None:
            self._position_module()
            return
        first_line, indent = start
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=_PositionSink(self._computed),
            indent_tokens=[indent] if indent else [],
            line=first_line,
        )
        func._codegen(state)

    def _function_starts(self) -> dict[int, tuple[int, str]]:
        """id(FunctionDef) -> (line its leading comments start on, its indentation)."""
        if self._starts is not None:
            return self._starts
        self._starts = {}
        try:
            tree = ast.parse(self._source)
        except (SyntaxError, ValueError):
            return self._starts  # libcst parsed what ast cannot: fall back to whole-module positions
        ast_functions = sorted(
            (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))),
            key=lambda n: (n.lineno, n.col_offset),
        )
        cst_functions = function_definitions(self.module)
        if len(ast_functions) != len(cst_functions) or any(
            a.name != c.name.value for a, c in zip(ast_functions, cst_functions)
        ):
            return self._starts
        lines = self._source_lines()
        for ast_func, cst_func in zip(ast_functions, cst_functions):
            if cst_func.decorators:
                first = ast_func.decorator_list[0].lineno - len(cst_func.decorators[0].leading_lines)
            else:
                first = ast_func.lineno
            first -= len(cst_func.leading_lines)
            def_line = lines[ast_func.lineno - 1] if ast_func.lineno - 1 < len(lines) else ""
            indent = def_line[: len(def_line) - len(def_line.lstrip(" \t\f"))]
            self._starts[id(cst_func)] = (first, indent)
        return self._starts

    def _source_lines(self) -> list[str]:
        source = self._source
        if isinstance(source, bytes):
            source = source.decode(self.module.encoding, errors="replace")
        # Python's own line breaks only (str.splitlines also breaks at form feeds and the like).
        return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
