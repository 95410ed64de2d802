"""The decorator path, first call: source -> findings -> regions -> a live function.

    build(f, options, first_args)   # -> Build(function, regions, analysis, text)

1. read and parse `f`'s source (`carve.source`),
2. analyse it against the live program (`carve.resolver`), adding the breaks
   earlier traces found (`forced_breaks`),
3. partition and outline it (`carve.rewriters.outline`),
4. generate the factory module, compile it with a line table pointing at the
   user's file, and call the factory with a fresh `RegionSet` and `f`'s
   closure, so regions and the rewritten function share `f`'s cells.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field

import libcst as cst

from carve.regionset import RegionSet
from carve.resolver import LiveResolver, add_module_aliases
from carve.rewriters.analysis import FunctionAnalysis, ModuleContext, analyze_function
from carve.rewriters.codegen import FACTORY_NAME, LineTable, factory_module
from carve.rewriters.methods import MethodBodyOutsideClass
from carve.rewriters.outline import OutlinedFunction, outline_function
from carve.runtime.config import CompileOptions
from carve.runtime.errors import GraphBreakError
from carve.source import FunctionSource, function_source

REGIONS_VAR = "_carve_regions"


@dataclass
class Build:
    function: types.FunctionType
    regions: RegionSet
    analysis: FunctionAnalysis
    outlined: OutlinedFunction
    text: str
    source: FunctionSource
    forced_breaks: dict = field(default_factory=dict)


def build(fn, options: CompileOptions, args: tuple, forced_breaks: dict[int, tuple[str, str]]) -> Build:
    source = function_source(fn)
    module = source.module
    node = source.node
    class_name = _defining_class(fn)
    if class_name or "__class__" in fn.__code__.co_freevars:
        super_ok = "__class__" in fn.__code__.co_freevars
        module = module.visit(MethodBodyOutsideClass(class_name, _first_param(node) if super_ok else None))
        node = module.body[0]
    context = ModuleContext(module, source.filename, source.first_line - 1)
    add_module_aliases(context.imports, fn)
    resolver = LiveResolver(fn, args[0] if args else None, has_first_arg=bool(args))
    analysis = analyze_function(node, context, resolver, forced_breaks)
    if options.fullgraph and analysis.breaks:
        first = analysis.breaks[0]
        raise GraphBreakError.from_parts(first.code, first.message, source.filename, first.line)
    outlined = outline_function(node, analysis, context, regions_var=REGIONS_VAR, region_prefix=fn.__name__)
    freevars = list(fn.__code__.co_freevars)
    def_line = context.line_of(node.name)
    generated = factory_module(outlined, freevars, fn.__name__, def_line, source.filename)
    code = LineTable(generated, source.filename).compile()

    regions = RegionSet(fn.__qualname__, filename=source.filename, **_regionset_options(options))
    regions.findings = {f.line: f for f in analysis.findings}
    namespace: dict = {}
    exec(code, fn.__globals__, namespace)
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    values = [_cell_value(cells[name]) for name in freevars]
    function = namespace[FACTORY_NAME](regions, *values)
    if cells:
        function = _rebind_closure(function, cells)
        for region in regions.regions:
            region.fn = _rebind_closure(region.fn, cells)
    function.__defaults__ = fn.__defaults__
    function.__kwdefaults__ = fn.__kwdefaults__
    return Build(function, regions, analysis, outlined, generated.text, source, dict(forced_breaks))


def _regionset_options(options: CompileOptions) -> dict:
    return dict(
        backend=options.backend, fullgraph=options.fullgraph, dynamic=options.dynamic,
        options=options.options, recompile_limit=options.recompile_limit,
    )


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # not yet bound: the rebinding below gives the real cell
        return None


def _rebind_closure(function: types.FunctionType, cells: dict) -> types.FunctionType:
    """The same function, reading and writing the original function's closure cells."""
    code = function.__code__
    if not code.co_freevars:
        return function
    closure = tuple(cells.get(name, cell) for name, cell in zip(code.co_freevars, function.__closure__))
    rebound = types.FunctionType(code, function.__globals__, function.__name__, function.__defaults__, closure)
    rebound.__kwdefaults__ = function.__kwdefaults__
    rebound.__qualname__ = function.__qualname__
    rebound.__dict__.update(function.__dict__)
    return rebound


def _first_param(node: cst.FunctionDef) -> str | None:
    params = list(node.params.posonly_params) + list(node.params.params)
    return params[0].name.value if params else None


def _defining_class(fn) -> str | None:
    """`Model` for a function defined in `class Model:` (from its qualified name), else None."""
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None
