"""The decorator path, first call: source -> findings -> regions -> a live function.

    build(f, options, first_args)   # -> Build(function, regions, analysis, text)

1. read and parse `f`'s source (`carve.source`),
2. analyse it against the live program (`carve.resolver`), adding the breaks
   earlier traces found (`forced_breaks`),
3. partition and outline it (`carve.rewriters.outline`),
4. generate the factory module, compile it with a line table pointing at the
   user's file, make the factory with `f`'s own closure cells and call it with
   a fresh `RegionSet`: regions and the rewritten function share `f`'s cells
   from the start.

The rewritten function takes `f`'s defaults as they are at each call
(`follow_defaults`): `f.__defaults__ = (5.0,)` after compiling is seen, as in eager.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from carve.regionset import RegionSet
from carve.resolver import LiveResolver, add_module_aliases
from carve.rewriters.analysis import FunctionAnalysis, ModuleContext
from carve.rewriters.codegen import CLOSURE_NAME, FACTORY_NAME, LineTable, factory_module
from carve.rewriters.findings import Finding
from carve.rewriters.loop_trip_counts import loops_in, python_loop_around_a_region
from carve.rewriters.methods import MethodBodyOutsideClass
from carve.rewriters.outline import OutlinedFunction
from carve.rewriters.passes import outline
from carve.rewriters.rules import crv023_reads_own_frame as reads_own_frame
from carve.rewriters.rules import rule
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

    @property
    def torch_compile_would_not_break(self) -> bool:
        """True when nothing in the function breaks torch.compile's graph, yet carve's split
        would run some of it as Python between graphs or leave it uncaptured:

            def f(x, y):                    # carve's split: 3 regions around the `if`s and `del`
                r = x + y                   # (Python statements between them), or none at all
                if FLAG: r = r.sin()        # (`sum(map(lambda v: v + 1, xs))`)
                del x
                return r + 1                # Dynamo on the whole call: one graph, as torch.compile

        Then the split has nothing to give and Dynamo captures the whole call (one graph where
        torch.compile makes one, its frame, guards and replayed side effects). A split that is
        already one region of the whole body is that same capture, and a split a capture
        already refused at some line (`forced_breaks`) stays split there."""
        if self.reads_own_frame:
            # `locals()`, `eval(...)`: the split would move locals into region frames (CRV023).
            return True
        if self.forced_breaks:
            return False
        if python_loop_around_a_region(self.outlined.function, {region.name for region in self.outlined.regions}):
            # `for _ in range(max_new_tokens): idx = step(idx)`: Dynamo would unroll the loop into
            # a graph per trip count; carve's split compiles its body once, whatever the count.
            # A loop over `range(x.size(0))` or `self.layers` is Dynamo's to unroll.
            return False
        if any(rule(finding.code).breaks_torch_compile or finding.frozen_by_tracing
               for finding in self.analysis.findings):
            return False
        return not self._one_region_is_the_whole_body()

    @property
    def reads_own_frame(self) -> bool:
        """The function reads its locals by name (`locals()`, `eval`: CRV023)."""
        return any(finding.code == reads_own_frame.RULE.code for finding in self.analysis.findings)

    @property
    def reads_own_frame_across_a_break(self) -> bool:
        """It reads its locals by name and breaks torch.compile's graph: neither carve's split nor
        Dynamo's resume function (which drops locals dead after the break) keeps eager's names."""
        return self.reads_own_frame and any(rule(f.code).breaks_torch_compile for f in self.analysis.findings)

    def forwarding_region(self):
        """The region the rewritten function only hands its parameters to, or None:

            def f(x, w):                       # no defaults, no *args, no keyword-only parameters
                return _f_graph_region_0(x, w)

        A call passing every argument positionally can call that region itself: its call makes
        every check the function's would (carve.disable, a Dynamo trace around it, carve's
        scopes), and a Python frame per call less is most of carve's overhead over Dynamo's."""
        params = self.outlined.function.params
        if params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel) \
                or params.star_kwarg is not None or any(param.default is not None for param in params.params):
            return None
        if not self._one_region_is_the_whole_body():
            return None
        line = self._body()[0]
        statement = line.body[0] if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else None
        call = statement.value if isinstance(statement, cst.Return) else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name):
            return None
        names = [param.name.value for param in params.params]
        passed = [arg.value.value if isinstance(arg.value, cst.Name) and arg.keyword is None and not arg.star
                  else None for arg in call.args]
        code = self.function.__code__
        if passed != names or call.func.value not in code.co_freevars:
            return None
        cell = self.function.__closure__[code.co_freevars.index(call.func.value)]  # type: ignore[index]
        return cell.cell_contents

    def _one_region_is_the_whole_body(self) -> bool:
        """The rewritten function only calls one region (`def f(x): return _f_graph_region_0(x)`)."""
        return len(self.outlined.regions) == 1 and len(self._body()) == 1

    def _body(self) -> list:
        """The rewritten function's statements, its docstring left out."""
        return [statement for statement in self.outlined.function.body.body if not _is_docstring(statement)]


def build(fn, options: CompileOptions, args: tuple, forced_breaks: dict[int, tuple[str, str]]) -> Build:
    source = function_source(fn)
    module = source.module
    node = source.node
    class_name = _defining_class(fn)
    if class_name or "__class__" in fn.__code__.co_freevars:
        super_ok = "__class__" in fn.__code__.co_freevars
        module = module.visit(MethodBodyOutsideClass(class_name, _first_param(node) if super_ok else None))
        node = cast(cst.FunctionDef, module.body[0])  # the module holds the def alone
    context = ModuleContext(module, source.filename, source.first_line - 1)
    add_module_aliases(context.imports, fn)
    resolver = LiveResolver(fn, args[0] if args else None, has_first_arg=bool(args))
    resolver.arguments = dict(zip(fn.__code__.co_varnames[1:fn.__code__.co_argcount], args[1:]))
    analysis, outlined = outline(node, context, regions_var=REGIONS_VAR, region_prefix=fn.__name__,
                                 resolver=resolver, forced_breaks=forced_breaks)
    if options.fullgraph:
        refused = _fullgraph_refusal(analysis, outlined, node, context)
        if refused is not None:
            raise GraphBreakError.from_parts(refused.code, refused.message, source.filename, refused.line)
    freevars = list(fn.__code__.co_freevars)
    def_line = context.line_of(node.name)
    generated = factory_module(outlined, freevars, def_line, source.filename)
    code = LineTable(generated, source.filename).compile()

    regions = RegionSet(fn.__qualname__, filename=source.filename, **_regionset_options(options))
    regions.findings = {f.line: f for f in analysis.findings}
    namespace: dict = {}
    exec(code, fn.__globals__, namespace)
    factory = namespace[CLOSURE_NAME]() if freevars else namespace[FACTORY_NAME]
    if factory.__code__.co_freevars:
        factory = _with_closure_of(factory, fn)
    function = _named_as(factory(regions), fn)
    follow_defaults(function, fn)
    return Build(function, regions, analysis, outlined, generated.text, source, dict(forced_breaks))


def follow_defaults(function: types.FunctionType, fn) -> None:
    """`function` takes `fn`'s defaults as they are now (called before each call of the rewritten
    function: eager reads a function's defaults at the call, so rebinding them takes effect)."""
    if function.__defaults__ is not fn.__defaults__:
        function.__defaults__ = fn.__defaults__
    if function.__kwdefaults__ is not fn.__kwdefaults__:
        function.__kwdefaults__ = fn.__kwdefaults__


def _fullgraph_refusal(
    analysis: FunctionAnalysis, outlined: OutlinedFunction, node: cst.FunctionDef, context: ModuleContext
) -> Finding | None:
    """Why `fullgraph=True` cannot give one graph, or None.

    A break torch.compile would meet anywhere in the function outside the regions (one in a
    branch a region keeps is met, and refused, by the capture only when the branch is taken);
    else a statement carve runs eagerly although torch.compile would trace it (`LOG.append(1)`,
    `idx = y.nonzero()`), when graph work runs both before and after it. Eager statements only before or after the one graph
    (`a = next(it)` ahead of the tensor work) leave it whole."""
    regions = [(region.first_line, region.last_line) for region in outlined.regions]
    for finding in analysis.findings:
        # A break the partition kept inside a region (`if verbose: print(...)`) is torch.compile's
        # case too: one graph while the branch is not taken, the capture's error when it is.
        inside_region = any(first <= finding.line <= last for first, last in regions)
        if rule(finding.code).breaks_torch_compile and not inside_region:
            return finding
    loops = [context.line_range(loop) for loop in loops_in(node)]
    for eager in outlined.eager:
        for finding in eager.findings:
            if rule(finding.code).splits_carve_graph and _between_graphs(finding.line or eager.line, regions, loops):
                return finding
    return None


def _between_graphs(line: int, regions: list[tuple[int, int]], loops: list[tuple[int, int]]) -> bool:
    if any(last < line for _, last in regions) and any(first > line for first, _ in regions):
        return True
    # In a loop, a region of the same loop runs before and after it on the next iteration.
    return any(start <= line <= end and any(start <= first <= end for first, _ in regions) for start, end in loops)


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Expr) and isinstance(statement.body[0].value, cst.SimpleString))


def _regionset_options(options: CompileOptions) -> dict:
    return dict(
        backend=options.backend, fullgraph=options.fullgraph, dynamic=options.dynamic,
        options=options.options, recompile_limit=options.recompile_limit,
    )


def _named_as(function: types.FunctionType, fn) -> types.FunctionType:
    """The rewritten function (defined under a reserved name, codegen.py) named as the user's,
    its code object too: tracebacks, profilers and Dynamo's frame names read the code's name."""
    code = function.__code__.replace(co_name=fn.__name__)
    if hasattr(code, "co_qualname"):  # Python 3.11+
        code = code.replace(co_qualname=fn.__qualname__)
    function.__code__ = code
    function.__name__ = fn.__name__
    function.__qualname__ = fn.__qualname__
    return function


def _with_closure_of(factory: types.FunctionType, fn) -> types.FunctionType:
    """The factory made again with `fn`'s closure cells for its free variables (the names of
    `fn`'s closure variables the generated code uses): every function it makes, the regions
    and the rewritten function, then reads and writes `fn`'s variables themselves."""
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(cells[name] for name in factory.__code__.co_freevars)
    return types.FunctionType(factory.__code__, factory.__globals__, factory.__name__, None, closure)


def _first_param(node: cst.FunctionDef) -> str | None:
    params = list(node.params.posonly_params) + list(node.params.params)
    return params[0].name.value if params else None


def _defining_class(fn) -> str | None:
    """`Model` for a function defined in `class Model:` (from its qualified name), else None."""
    parts = fn.__qualname__.split(".")
    if len(parts) >= 2 and parts[-2] != "<locals>":
        return parts[-2]
    return None
