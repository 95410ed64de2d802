"""Source positions computed only for the statements that have something to report.

    context = LintModuleContext(module, filename, source)
    with context.within(func):
        analysis = analyze_function(func, context)   # positions computed on first use

libcst's PositionProvider generates the code of the whole module to number
it: on torch/nn that costs more than parsing and analysing together, while a
linter reports on a few hundred statements out of a hundred thousand. Here
only the statement that owns a finding is generated (for a compound
statement, only its header: the body is swapped for `pass`), with the
generator's state set to where that statement starts in the file. Where
statements start comes from Python's own `ast` (fast, written in C), matched
statement by statement with the libcst tree; the positions are exactly the
ones PositionProvider would give. When the two trees cannot be matched, the
whole function (or, failing that, the whole module) is generated instead.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any, cast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from carve.rewriters.analysis import ModuleContext
from carve.rewriters.walk import children

_BLOCK_CONTAINERS = (
    cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.Finally,
) + tuple(t for t in (getattr(cst, "ExceptStarHandler", None), getattr(cst, "MatchCase", None)) if t)

# libcst statement type -> the ast statement types it may be.
_AST_KINDS: dict[type, tuple[type, ...]] = {
    cst.If: (ast.If,), cst.For: (ast.For, ast.AsyncFor), cst.While: (ast.While,), cst.Try: (ast.Try,),
    cst.With: (ast.With, ast.AsyncWith), cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
}
if hasattr(cst, "TryStar") and hasattr(ast, "TryStar"):
    _AST_KINDS[cst.TryStar] = (ast.TryStar,)
if hasattr(cst, "Match") and hasattr(ast, "Match"):
    _AST_KINDS[cst.Match] = (ast.Match,)

# Compound statements whose header can be generated alone: the fields after the header, emptied.
_PASS_BLOCK = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])
_HEADER_ONLY: dict[type, dict[str, object]] = {
    cst.If: {"body": _PASS_BLOCK, "orelse": None},
    cst.For: {"body": _PASS_BLOCK, "orelse": None},
    cst.While: {"body": _PASS_BLOCK, "orelse": None},
    cst.With: {"body": _PASS_BLOCK},
    cst.FunctionDef: {"body": _PASS_BLOCK},
}


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


def _ast_function_definitions(statements: list[ast.stmt], found: list) -> list:
    """Every `def` in these statements and the blocks under them, in source order (no expressions walked)."""
    for statement in statements:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append(statement)
        for name in ("body", "orelse", "finalbody"):
            block = getattr(statement, name, None)
            if isinstance(block, list):
                _ast_function_definitions(block, found)
        for clause in getattr(statement, "handlers", ()) or ():
            _ast_function_definitions(clause.body, found)
        for clause in getattr(statement, "cases", ()) or ():
            _ast_function_definitions(clause.body, found)
    return found


class _PositionSink:
    """What PositionProvidingCodegenState writes into (it expects a provider with `_computed`)."""

    def __init__(self, computed: dict) -> None:
        self._computed = computed


class _StatementMap:
    """Where each statement of one function starts: id(statement) -> (first line, indentation).

    The first line is that of the statement's leading comments and blank lines, as libcst
    generates them. A one-line block (`if x: return y`) has no start of its own: it is
    generated with the statement that holds it (`holder`).
    """

    def __init__(self) -> None:
        self.starts: dict[int, tuple[int, str]] = {}
        self.holder: dict[int, cst.CSTNode] = {}
        self.statements: dict[int, cst.CSTNode] = {}


class LintModuleContext(ModuleContext):
    """A ModuleContext whose node positions are generated one statement at a time, on demand.

    `carve lint` asks where torch.compile breaks a function compiled without fullgraph=True (the
    driver says so for one compiled with it), where `nonzero` ends the graph."""

    dynamic_output_sizes_traced = False
    for_lint = True

    def __init__(self, module: cst.Module, filename: str, source: str | bytes, line_offset: int = 0, imports=None) -> None:
        """`line_offset` and `imports`: for a piece of a file parsed alone (a function followed from
        another file), where it starts and the imports of the whole file."""
        self._source = source
        self._computed: dict = {}
        self._generated: set[tuple[int, bool]] = set()  # (id(node), header only) already generated
        self._positioned: set[int] = set()  # functions generated whole
        self._function_stack: list[cst.FunctionDef] = []
        self._tree: ast.Module | None = None
        self._ast_functions: dict[int, ast.FunctionDef | ast.AsyncFunctionDef] | None = None
        self._starts: dict[int, tuple[int, str]] | None = None
        self._maps: dict[int, _StatementMap | None] = {}
        self._lines: list[str] | None = None
        self._whole_module_done = False
        super().__init__(module, filename, line_offset)
        if imports is not None:
            from carve.rewriters.callees import ModuleResolver

            self.imports = imports
            resolver = ModuleResolver(module, imports, filename)
            resolver.analyse_callee = self.static_resolver.analyse_callee
            self.static_resolver = resolver
        analyse_callee = self.static_resolver.analyse_callee
        assert analyse_callee is not None  # set by ModuleContext.__init__

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
        if found is not None:
            return found
        if self._function_stack:
            func = self._function_stack[-1]
            statement_map = self._statement_map(func)
            if node is not func and statement_map is not None and id(node) in statement_map.statements:
                self._generate(func, node, header_only=False)  # a statement asked about as a whole
                found = self._computed.get(node)
                if found is not None:
                    return found
            if id(func) not in self._positioned:
                self._position_function(func)
                found = self._computed.get(node)
                if found is not None:
                    return found
        self._position_module()
        return self._computed.get(node)

    def position_within(self, node: cst.CSTNode, statement: cst.CSTNode):
        """The position of `node`, found in `statement` (a statement of the function being analysed)."""
        found = self._computed.get(node)
        if found is None and self._function_stack:
            func = self._function_stack[-1]
            statement_map = self._statement_map(func)
            if statement is func or (statement_map is not None and id(statement) in statement_map.statements):
                self._generate(func, statement, header_only=node is not statement)
                found = self._computed.get(node)
        return found if found is not None else self.position(node)

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
        self._codegen(func, *start)

    def _generate(self, func: cst.FunctionDef, statement: cst.CSTNode, header_only: bool) -> None:
        """Generate `statement` (a statement of `func`, or `func`) from where it starts in the file."""
        if statement is func:
            start = self._function_starts().get(id(func))
        else:
            statement_map = self._statement_map(func)
            assert statement_map is not None  # the callers found `statement` in it
            holder = statement_map.holder.get(id(statement))
            if holder is not None:  # a one-line block: generate what holds it, whole
                if holder is func:
                    self._generate(func, func, header_only=False)
                    return
                statement, header_only = holder, False
            start = statement_map.starts.get(id(statement))
        if start is None:
            return
        changes = _HEADER_ONLY.get(type(statement)) if header_only else None
        key = (id(statement), changes is not None)
        if key in self._generated or (id(statement), False) in self._generated:
            return
        self._generated.add(key)
        if changes is not None:
            shell = copy.copy(statement)  # no validation, the children are the same nodes
            for name, value in changes.items():
                object.__setattr__(shell, name, value)
            statement = shell
        self._codegen(statement, *start)

    def _codegen(self, node: cst.CSTNode, first_line: int, indent: str) -> None:
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=_PositionSink(self._computed),  # type: ignore[arg-type]  # duck-typed: see _PositionSink
            indent_tokens=[indent] if indent else [],
            line=first_line,
        )
        node._codegen(state)

    def _ast_tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = ast.parse(self._source)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                self._tree = ast.Module(body=[], type_ignores=[])  # libcst parsed what ast cannot
                self._ast_functions = {}
        return self._tree

    def _function_nodes(self) -> dict[int, ast.FunctionDef | ast.AsyncFunctionDef]:
        """id(cst FunctionDef) -> its ast node; empty when the two trees disagree."""
        if self._ast_functions is not None:
            return self._ast_functions
        tree = self._ast_tree()
        if self._ast_functions is not None:
            return self._ast_functions
        self._ast_functions = {}
        ast_functions = _ast_function_definitions(tree.body, [])
        cst_functions = function_definitions(self.module)
        if len(ast_functions) == len(cst_functions) and all(
            a.name == c.name.value for a, c in zip(ast_functions, cst_functions)
        ):
            self._ast_functions = {id(c): a for a, c in zip(ast_functions, cst_functions)}
        return self._ast_functions

    def _function_starts(self) -> dict[int, tuple[int, str]]:
        """id(FunctionDef) -> (line its leading comments start on, its indentation)."""
        if self._starts is not None:
            return self._starts
        self._starts = {}
        nodes = self._function_nodes()
        if not nodes:
            return self._starts
        for cst_func in function_definitions(self.module):
            start = self._start_of(cst_func, nodes[id(cst_func)])
            if start is not None:
                self._starts[id(cst_func)] = start
        return self._starts

    def _start_of(
        self, statement: cst.SimpleStatementLine | cst.BaseCompoundStatement, node: ast.stmt
    ) -> tuple[int, str] | None:
        lines = self._source_lines()
        line = node.lineno
        if not 0 < line <= len(lines):
            return None
        text = lines[line - 1]
        indent = text[: len(text) - len(text.lstrip(" \t\f"))]
        decorators = getattr(statement, "decorators", ())
        if decorators:
            assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))  # matched with a def
            line = node.decorator_list[0].lineno
            if not 0 < line <= len(lines) or not lines[line - 1].lstrip(" \t\f").startswith("@"):
                return None  # `@(` with the decorator on the next line: no start from ast
            line -= len(decorators[0].leading_lines)
        return line - len(statement.leading_lines), indent

    def _statement_map(self, func: cst.FunctionDef) -> _StatementMap | None:
        if id(func) in self._maps:
            return self._maps[id(func)]
        node = self._function_nodes().get(id(func))
        statement_map: _StatementMap | None = None
        if node is not None:
            statement_map = _StatementMap()
            if not self._match_block(func.body, node.body, func, statement_map):
                statement_map = None
        self._maps[id(func)] = statement_map
        return statement_map

    def _match_block(self, block: cst.BaseSuite, nodes: list[ast.stmt], holder: cst.CSTNode, out: _StatementMap) -> bool:
        """Match a libcst block with the ast statements of the same block; False when they differ."""
        if isinstance(block, cst.SimpleStatementSuite):
            out.holder[id(block)] = holder
            out.statements[id(block)] = block
            return len(block.body) == len(nodes)
        if not isinstance(block, cst.IndentedBlock):
            return False
        index = 0
        # BaseStatement's two kinds, which both have leading lines.
        for statement in cast("Sequence[cst.SimpleStatementLine | cst.BaseCompoundStatement]", block.body):
            if isinstance(statement, cst.SimpleStatementLine):
                count = len(statement.body)
                if index + count > len(nodes):
                    return False
                node = nodes[index]
                index += count
            else:
                kinds = _AST_KINDS.get(type(statement))
                if kinds is None or index >= len(nodes) or not isinstance(nodes[index], kinds):
                    return False
                node = nodes[index]
                index += 1
                if not self._match_clauses(statement, node, statement, out):
                    return False
            start = self._start_of(statement, node)
            if start is None:
                return False
            out.starts[id(statement)] = start
            out.statements[id(statement)] = statement
        return index == len(nodes)

    def _match_clauses(
        self, statement: cst.BaseCompoundStatement, node: Any, holder: cst.CSTNode, out: _StatementMap
    ) -> bool:
        """The blocks inside a compound statement; one-line blocks are generated with `holder`.
        `node` is the ast statement of the same kind (see _AST_KINDS): its fields are read by name."""
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return True  # a nested definition: its body is analysed (and positioned) on its own
        if type(statement).__name__ == "Match":
            match = cast(cst.Match, statement)
            if len(match.cases) != len(node.cases):
                return False
            return all(self._match_block(c.body, a.body, holder, out) for c, a in zip(match.cases, node.cases))
        if not self._match_block(statement.body, node.body, holder, out):
            return False
        if isinstance(statement, cst.If):
            orelse = statement.orelse
            if isinstance(orelse, cst.If):
                return len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and self._match_clauses(orelse, node.orelse[0], holder, out)
            return self._match_else(orelse, node.orelse, holder, out)
        if isinstance(statement, (cst.For, cst.While)):
            return self._match_else(statement.orelse, node.orelse, holder, out)
        if isinstance(statement, cst.With):
            return True
        if isinstance(statement, cst.Try) or type(statement).__name__ == "TryStar":
            statement = cast("cst.Try | cst.TryStar", statement)
            handlers: Sequence[cst.ExceptHandler | cst.ExceptStarHandler] = statement.handlers
            if len(handlers) != len(node.handlers):
                return False
            for handler, ast_handler in zip(handlers, node.handlers):
                if not self._match_block(handler.body, ast_handler.body, holder, out):
                    return False
            if not self._match_else(statement.orelse, node.orelse, holder, out):
                return False
            finalbody = statement.finalbody
            if finalbody is None:
                return not node.finalbody
            return self._match_block(finalbody.body, node.finalbody, holder, out)
        return False

    def _match_else(self, orelse, nodes: list[ast.stmt], holder: cst.CSTNode, out: _StatementMap) -> bool:
        if orelse is None:
            return not nodes
        return self._match_block(orelse.body, nodes, holder, out)

    def _source_lines(self) -> list[str]:
        if self._lines is None:
            source = self._source
            if isinstance(source, bytes):
                source = source.decode(self.module.encoding, errors="replace")
            # Python's own line breaks only (str.splitlines also breaks at form feeds and the like).
            self._lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        return self._lines
