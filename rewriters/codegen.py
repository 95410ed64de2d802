"""Emit the outlined code as one module text, for both faces of carve.

`carve rewrite` writes the whole file back with each compiled function
replaced by its outlined form (everything else byte for byte):

    import carve                            import carve

    @carve.compile(backend="eager")   ->    _carve_f = carve.RegionSet("f", backend="eager")
    def f(x):                               @_carve_f.graph(3, 3)
        ...                                 def _f_graph_region_0(x): ...
                                            @_carve_f.entry
                                            def f(x): ...

`@carve.compile` compiles the same text for one function, wrapped in a
factory that makes the regions and the rewritten function for one RegionSet:

    def __carve_factory__(_carve_f):
        from carve.rewriters.unbound import UNBOUND as _carve_unbound   # if a name may be unbound
        @_carve_f.graph(2, 3)
        def _f_graph_region_0(x): ...                                   # the region functions
        def __carve_compiled__(x): ...                                  # the rewritten f
        return __carve_compiled__

When `f` has closure variables, the factory is defined inside a function that binds
them, so they are free variables of the factory, and of every function it makes:

    def __carve_closure__():
        scale = None                        # only makes `scale` a closure variable here
        def __carve_factory__(_carve_f): ...
        return __carve_factory__

The compiler then makes the factory again with `f`'s own closure cells, so the regions
read and write `f`'s variables from their first call (a `nonlocal` rebinding is seen).

The rewritten function is defined under a reserved name, so that `f` inside its body
still means the module's `f` (a recursive call, `f.calls += 1`, a method `normalize`
calling the module's `normalize`); the compiler names it, and its code object, `f` after.

`LineTable` then points every line of the generated code at the user's
original line, so tracebacks and debuggers show the user's file.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from carve.rewriters.naming import CLOSURE_NAME, COMPILED_FUNCTION_NAME, FACTORY_NAME, UNBOUND_IMPORT
from carve.rewriters.outline import OutlinedFunction
from carve.rewriters.templates import replace, replace_statement

__all__ = ["CLOSURE_NAME", "FACTORY_NAME", "GeneratedCode", "LineTable", "factory_module"]


@dataclass
class GeneratedCode:
    text: str
    # generated line -> (original line, column shift for verbatim lines or None for glue)
    line_map: dict[int, tuple[int, int | None]] = field(default_factory=dict)


def factory_module(
    outlined: OutlinedFunction, freevars: list[str], def_line: int, filename: str
) -> GeneratedCode:
    """The decorator-path module: one factory function returning the rewritten function, inside
    a function binding `freevars` when there are any (see the module docstring)."""
    # Decorators already wrap the carve.compile object; annotations would be evaluated again
    # without the user module's `from __future__ import annotations`; default values would be
    # evaluated again in the factory's scope (`def _fn(a, func=func)` names an enclosing local):
    # the compiler gives the function the original's own defaults, as they are at each call.
    # It is defined under a reserved name: the user's name inside its body is the user's.
    function = outlined.function.with_changes(decorators=(), leading_lines=(), returns=None,
                                              name=cst.Name(COMPILED_FUNCTION_NAME))
    function = function.with_changes(params=function.params.visit(_StripAnnotationsAndDefaults()))
    # A changed node is a new one: it stands for what the outlined function stood for.
    outlined.origins[id(function)] = (function, outlined.origins[id(outlined.function)][1])
    unbound_import = replace(UNBOUND_IMPORT, unbound=outlined.unbound_var) if outlined.uses_unbound else []
    factory = replace_statement(
        "def factory(regions):\n"
        "    unbound_import\n"
        "    region_defs\n"
        "    function\n"
        "    return name\n",
        factory=FACTORY_NAME, regions=outlined.regions_var, unbound_import=unbound_import,
        region_defs=outlined.region_defs, function=function, name=COMPILED_FUNCTION_NAME,
    )
    if freevars:
        factory = replace_statement(
            "def closure():\n"
            "    closure_variables\n"
            "    factory_def\n"
            "    return factory\n",
            closure=CLOSURE_NAME, factory=FACTORY_NAME, factory_def=factory,
            closure_variables=[replace_statement("name = None", name=name) for name in freevars],
        )
    module = cst.Module(body=[factory])
    line_map = _line_map(module, outlined, def_line, filename)
    return GeneratedCode(module.code, line_map)


def _line_map(
    module: cst.Module, outlined: OutlinedFunction, default_line: int, filename: str
) -> dict[int, tuple[int, int | None]]:
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    generated_lines = module.code.splitlines()
    entries = []
    for node, origin in outlined.origins.values():
        position = positions.get(node)
        if position is None:
            continue
        span = position.end.line - position.start.line
        # Glue first (widest first), then verbatim statements on top of it.
        entries.append((origin.verbatim, -span, position, origin))
    entries.sort(key=lambda e: (e[0], e[1]))
    mapped: dict[int, tuple[int, int | None]] = {}
    for verbatim, _, position, origin in entries:
        for line in range(position.start.line, position.end.line + 1):
            if verbatim:
                original = origin.first_line + (line - position.start.line)
                shift = None
                if line - 1 < len(generated_lines):
                    shift = _indent(linecache.getline(filename, original)) - _indent(generated_lines[line - 1])
                mapped[line] = (original, shift)
            else:
                mapped[line] = (origin.first_line, None)
    result: dict[int, tuple[int, int | None]] = {}
    previous: tuple[int, int | None] = (default_line, None)
    for line in range(1, len(generated_lines) + 2):
        previous = mapped.get(line, (previous[0], None))
        result[line] = previous
    return result


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


class _StripAnnotationsAndDefaults(cst.CSTTransformer):
    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        default = cst.Name("None") if updated.default is not None else None
        return updated.with_changes(annotation=None, default=default)


class LineTable:
    """Compile generated text so its code objects carry the user's file name and lines."""

    def __init__(self, generated: GeneratedCode, filename: str) -> None:
        self.generated = generated
        self.filename = filename

    def compile(self):
        tree = ast.parse(self.generated.text, filename=self.filename)
        line_map = self.generated.line_map
        node: Any  # any node with a position (stmt, expr, arg, ...): its fields are set by name
        for node in ast.walk(tree):
            if not hasattr(node, "lineno") or node.lineno is None:
                continue
            start, start_shift = line_map.get(node.lineno, (node.lineno, None))
            end_lineno = getattr(node, "end_lineno", None) or node.lineno
            end, end_shift = line_map.get(end_lineno, (start, None))
            original_text = linecache.getline(self.filename, start)
            if start_shift is not None and end_shift is not None and end >= start:
                node.lineno, node.end_lineno = start, end
                node.col_offset = max(0, node.col_offset + start_shift)
                node.end_col_offset = max(0, (node.end_col_offset or 0) + end_shift)
                if end == start and node.end_col_offset < node.col_offset:
                    node.end_col_offset = node.col_offset
            else:
                # Glue code: the whole original line.
                stripped = original_text.rstrip("\n")
                node.lineno = node.end_lineno = start
                node.col_offset = _indent(stripped)
                node.end_col_offset = max(node.col_offset, len(stripped))
        return compile(tree, self.filename, "exec")
