"""`carve.RegionSet`: what the generated code of one compiled function calls.

    _carve_f = carve.RegionSet("f", backend="eager")

    @_carve_f.graph(3, 5)                    # lines 3-5 become a cached, compiled FX graph
    def _f_graph_region_0_lines_3_5(x): ...

    @_carve_f.entry                          # fullgraph scope, carve.disable, skip rules
    def f(x):
        y = _f_graph_region_0_lines_3_5(x)
        _carve_f.graph_break(6, "CRV003")    # error under fullgraph / error_on_graph_break, else log
        print(y)
        def closure(): ...
        closure = _carve_f.compiled_definition(closure)  # a nested def, compiled where it is defined
        return _carve_f.compiled(helper)(y)  # a callee that breaks the graph, compiled on its own

The decorator path (`@carve.compile`) and the files `carve rewrite` writes
use the same object, so both run the same way.
"""

from __future__ import annotations

import functools
import sys
import types
import weakref
from collections.abc import Callable

from carve.block_screen import compiles_as_one_graph
from carve.explain_session import fresh_tables, register_regionset, timed_caller
from carve.rewriters.findings import Finding
from carve.rewriters.rules import crv016_callee_graph_break as callee_graph_break
from carve.rewriters.rules import rule
from carve.runtime import capture_policy, state
from carve.runtime.config import CompileOptions
from carve.runtime.errors import BreakEvent, GraphBreakError
from carve.runtime.log import log_graph_break
from carve.runtime.region import GraphRegion
from torch.compiler import is_dynamo_compiling


_CALLEE_BREAK = callee_graph_break.RULE.code
_state = state._state
# Callees one region set keeps compiled versions of (a program's helpers; a bound for generated code).
_MAX_CALLEES = 256


class RegionSet:
    """The compiled regions of one function: what its rewritten code calls.

        _carve_f = carve.RegionSet("f", backend="inductor")

        @_carve_f.graph(2, 3)               # lines 2-3 of the user's file: a compiled region
        def _f_graph_region_0(x): ...

        _carve_f.graph_break(4, "CRV003")   # a statement that stays Python: reported once,
        print(z)                            # an error under fullgraph / error_on_graph_break

    It holds the options every region compiles with, the static findings by line (for
    messages richer than a rule title), and the call the compiler hooks: `on_skip` (Dynamo gave up on a
    region for good, so its loop must run as Python). `carve rewrite` writes the same calls into readable files.
    """

    def __init__(
        self,
        name: str,
        *,
        backend="inductor",
        fullgraph: bool = False,
        dynamic=None,
        options: dict | None = None,
        mode: str | None = None,
        recompile_limit: int = 8,
        filename: str | None = None,
        disable: bool = False,
    ) -> None:
        self.name = name
        self.options = options_from(backend, fullgraph, dynamic, options, mode, recompile_limit)
        self.filename = filename or sys._getframe(1).f_code.co_filename
        self.disabled = disable
        self.regions: list[GraphRegion] = []
        # line -> the finding behind a graph_break checkpoint (richer messages than the rule title).
        self.findings: dict[int, Finding] = {}
        # Called with {line: (code, message)} when Dynamo gave up on a region for good.
        self.on_skip: Callable[[dict[int, tuple[str, str]]], None] | None = None
        # Called with a region the cost check kept compiled for its backward, unweighed
        # (runtime/whole_call_check.py).
        self.on_kept_for_backward: Callable[[GraphRegion], None] | None = None
        self.eager_calls: dict[tuple[int, str], int] = {}
        # code object of a nested def -> its first instance, compiled (see compiled_definition).
        self.definitions: dict = {}
        # function -> its compiled version, for `compiled` (module-level functions only).
        self._callees: dict = {}
        # The carve functions behind the other callees `compiled` handed out (methods, modules):
        # what must settle before the function runs as written (compiler/as_written.py).
        self._other_callees: weakref.WeakSet = weakref.WeakSet()
        # The function's call from which it ran as written (None: it has not; compiler/as_written.py).
        self.as_written_from: int | None = None
        register_regionset(self)

    # -- graph regions -----------------------------------------------------------------------
    def graph(self, first_line: int, last_line: int):
        def make_region(fn):
            region = GraphRegion(
                fn, name=fn.__name__, options=self.options,
                filename=fn.__code__.co_filename, first_line=first_line, last_line=last_line,
            )
            region.on_skip = self._region_skipped
            region.on_kept_for_backward = self._region_kept_for_backward
            region.compile_module = self._compiled_module
            self.regions.append(region)
            # What the generated code calls (its __carve_region__ is the region); timed during an explain.
            return timed_caller(region, region.caller)

        return make_region

    def _compiled_module(self, module):
        """A model a region calls, compiled as carve.compile(model) compiles it (GraphRegion._run_with_compiled_models)."""
        from carve.api import module_view

        return module_view(module, self.options)

    def _region_kept_for_backward(self, region: GraphRegion) -> None:
        if self.on_kept_for_backward is not None:
            self.on_kept_for_backward(region)

    def _region_skipped(self, region: GraphRegion, event: BreakEvent) -> None:
        """Dynamo skipped `region` (a statement the partition kept in one of its loops, betting
        the branch is not taken, was reached): the region's loops and breaking statements are
        made Python on the next call, so the loop's tensor work is compiled again."""
        lines = {line: (finding.code, finding.message) for line, finding in self.findings.items()
                 if region.first_line <= line <= region.last_line}
        if lines and self.on_skip is not None:
            self.on_skip(lines)

    # -- eager statements --------------------------------------------------------------------
    def graph_break(self, line: int, code: str) -> None:
        """Runs just before a statement that breaks the graph (on every step of a loop: kept short)."""
        key = (line, code)
        calls = self.eager_calls
        seen = calls[key] = calls.get(key, 0) + 1
        # A break inside a callee (CRV016) is judged where it happens: the callee is compiled on
        # its own, and its own checkpoint sees the error_on_graph_break setting in force there.
        if code != _CALLEE_BREAK and capture_policy.break_raises():
            raise GraphBreakError.from_parts(code, self._break_message(line, code), self.filename, line)
        if seen == 1:
            log_graph_break(BreakEvent(code, self._break_message(line, code), self.filename, line, []))

    def _break_message(self, line: int, code: str) -> str:
        finding = self.findings.get(line)
        return finding.message if finding is not None else rule(code).title

    def compiled(self, fn):
        """The carve-compiled version of a callee that breaks the graph (nested frames compile too).

        Called on every call of the callee (`_carve_f.compiled(helper)(y)`, each step of a loop):
        a plain function's compiled version is looked up once per region set, outside an explain
        (which compiles afresh) and carve.disable."""
        callees = self._callees
        kept = type(fn) is types.FunctionType and not _state.disabled and fresh_tables() is None
        if kept:
            compiled = callees.get(fn)
            if compiled is not None:
                return compiled
        from carve.api import compile_nested, compiled_function_of

        compiled = compile_nested(fn, self.options)
        # A nested function is made anew on each call of its definer: not kept.
        if kept and "<locals>" not in fn.__qualname__ and len(callees) < _MAX_CALLEES:
            callees[fn] = compiled
        elif compiled is not fn:
            behind = compiled_function_of(compiled)
            if behind is not None:
                self._other_callees.add(behind)
        return compiled

    def callees(self) -> list:
        """The compiled callees the generated code has called so far."""
        return [*self._callees.values(), *self._other_callees]

    def compiled_definition(self, fn):
        """A function defined in the compiled function, compiled where it is defined, so that
        whoever calls it runs the compiled version (`optimizer.step(closure)`: the optimizer
        calls it). Each call of the enclosing function makes a new function object over the
        same code: the first is built, the others run its build (`definitions`)."""
        if is_dynamo_compiling():
            return fn  # a trace of this function (a `carve rewrite` file under torch.compile) inlines it
        from carve.api import compile_definition

        return compile_definition(fn, self.options, self.definitions)

    # -- the function itself (files written by `carve rewrite`) --------------------------------
    def entry(self, fn):
        options = self.options

        @functools.wraps(fn)
        def carve_entry(*args, **kwargs):
            if options.fullgraph:
                with state.fullgraph_scope(True):
                    return fn(*args, **kwargs)
            return fn(*args, **kwargs)

        carve_entry.__carve_regions__ = self  # type: ignore[attr-defined]  # a marker set on the function
        return carve_entry


def options_from(backend, fullgraph, dynamic, options, mode, recompile_limit) -> CompileOptions:
    if mode is not None:
        if not isinstance(mode, str):
            raise TypeError(f"carve: mode must be a string, got {mode!r}")
        if options is not None:
            raise ValueError("carve: pass either mode or options, not both (as torch.compile)")
        options = {"mode": mode}
    return CompileOptions(
        backend=backend, fullgraph=fullgraph, dynamic=dynamic, options=options, recompile_limit=recompile_limit,
        layer_screen=compiles_as_one_graph,
    )
