"""GraphRegion: the callable the generated code uses for each graph region.

The compiler outlines every tensor-only region of a user function into a
plain function and wraps it in a `GraphRegion`; the rewritten function calls
it positionally:

    _region_1 = GraphRegion(_region_1_fn, name="f:3-5", options=opts,
                            filename="model.py", first_line=3, last_line=5)
    def f(x, w):
        y, z = _region_1(x, w)
        print(z)                          # an eager statement
        ...

Per call:
- inside another region's trace, or while carve is disabled: run the function
  itself (the outer trace records its ops);
- fast path: each cache entry is ONE generated function that checks the
  entry's guards, fetches the graph inputs (arguments, module parameters,
  global tensors) and calls the compiled graph, rebuilding the return value;
- miss: trace the function on the real inputs (this call's result is the
  trace's real result), compile the graph with the backend, cache it under
  its guards. Over the recompile limit, run eagerly and say so once (CRV020).
- a graph break met while tracing: log it once per location, tell the
  compiler (`on_break`, which re-splits the region at that line), and run the
  region eagerly from then on. In fullgraph mode the break is the error.
- a few calls after its first graph, a region is timed compiled and as Python,
  alternately, and keeps the faster for good (cost_check.py).
"""

from __future__ import annotations

import dis
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from . import compat, cost_check, kernel_builds, log, state
from .config import CompileOptions
from .errors import BreakEvent, GraphBreakError
from .closed import is_closed, open_reason
from .dynamo_capture import DynamoCapture
from .guards import GuardSet
from .tracer import UNTRACEABLE, OutputSpec, TraceResult, trace_region

_MISS = object()
_state = state._state


class CacheEntry:
    """One compiled version of a region: its guards and its generated fast-path function."""

    __slots__ = ("guards", "run", "compiled", "graph_module", "op_count", "compile_time", "eager_reason")

    def __init__(self, guards: GuardSet, run: Callable[[tuple], Any], compiled: Callable[..., Any] | None,
                 graph_module: Any, op_count: int, compile_time: float, eager_reason: str | None) -> None:
        self.guards = guards
        self.run = run
        self.compiled = compiled
        self.graph_module = graph_module
        self.op_count = op_count
        self.compile_time = compile_time
        self.eager_reason = eager_reason

    def guard(self, args: tuple) -> bool:
        return self.guards.check(args)


class GraphRegion:
    """One outlined graph region: traced on a miss, compiled by the backend, run under guards.

        region = GraphRegion(_f_graph_region_0, name=..., options=..., filename=..., first_line=3, last_line=5)
        y, z = region(x, w)     # miss: trace (this call's result is the trace's), compile, cache
        y, z = region(x, w)     # hit: one guard call, then the compiled graph

    Inside another region's trace, or under carve.disable, it simply calls the function.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str, options: CompileOptions, filename: str,
                 first_line: int, last_line: int) -> None:
        self.fn = fn
        self.name = name
        self.options = options
        self.filename = filename
        self.first_line = first_line
        self.last_line = last_line
        # Set by the compiler: called with the BreakEvent when a trace meets a graph break.
        self.on_break: Callable[[BreakEvent], Any] | None = None
        # Set by the compiler: called with (region, BreakEvent) when Dynamo skips the region for good.
        self.on_skip: Callable[["GraphRegion", BreakEvent], Any] | None = None
        self.entries: list[CacheEntry] = []  # most recent first
        self._runs: tuple = ()
        self.eager = not hasattr(fn, "__code__")  # only Python functions can be traced
        self.eager_reason: str | None = "not a Python function" if self.eager else None
        self.break_events: list[BreakEvent] = []
        # What carve's own tracer could not record (CRV017), sending the region to Dynamo.
        self.tracer_refusals: list[BreakEvent] = []
        self.limit_reached = False
        # Set when the region is not closed (closed.py): Dynamo captures it from then on.
        self.capture: DynamoCapture | None = None
        self.capture_reason: str | None = None
        # Which sizes were made symbolic and why (carve.explain, CARVE_LOGS=dynamic).
        self.dynamic_reason: str | None = None
        self._traced_shapes: tuple = ()
        # Why Dynamo must capture this region even if it is closed (set by the compiler, or
        # after a trace met a break the partition kept on purpose); None: decide per call.
        self.force_dynamo: str | None = None
        # Compiled or as Python, whichever is faster (cost_check.py); None once decided, and
        # under fullgraph, where the user asked for the graph.
        self._cost = cost_check.CostCheck() if cost_check.ENABLED and not options.fullgraph else None
        self.__name__ = getattr(fn, "__name__", name)
        self.__qualname__ = getattr(fn, "__qualname__", name)
        self.__wrapped__ = fn

    # ---- stats for carve.explain ------------------------------------------------------------

    @property
    def path(self) -> str:
        """How the region is captured: "dynamo", "fast" (carve's tracer), or "eager"."""
        if self.eager:
            return "eager"
        return "fast" if self.capture is None else "dynamo"

    @property
    def graphs(self) -> list:
        own = [e.graph_module for e in reversed(self.entries) if e.compiled is not None]
        return own + (list(self.capture.recorder.graphs) if self.capture is not None else [])

    @property
    def ops_per_graph(self) -> list[int]:
        own = [e.op_count for e in reversed(self.entries) if e.compiled is not None]
        return own + (list(self.capture.recorder.ops_per_graph) if self.capture is not None else [])

    @property
    def guards(self) -> list[list[str]]:
        own = [e.guards.describe() for e in reversed(self.entries)]
        return own + ([self.capture.describe_guards()] if self.capture is not None else [])

    @property
    def compile_times(self) -> list[float]:
        own = [e.compile_time for e in reversed(self.entries) if e.compiled is not None]
        return own + (list(self.capture.compile_seconds) if self.capture is not None else [])

    def __repr__(self) -> str:
        return f"<carve GraphRegion {self.name} {self.filename}:{self.first_line}-{self.last_line}>"

    # ---- the call ---------------------------------------------------------------------------

    def __call__(self, *args: Any) -> Any:
        if self.eager or _state.tracing or _state.disabled:
            return self.fn(*args)
        if compat.is_dynamo_compiling():
            # Inside a Dynamo trace (a user's torch.compile, or a region Dynamo captures calling a
            # function `carve rewrite` wrote): its trace inlines the region's code, not carve's
            # cache and guards.
            return self.fn(*args)
        if self._cost is not None:
            return self._timed_call(args)
        return self._compiled_call(args)

    def _compiled_call(self, args: tuple) -> Any:
        capture = self.capture
        if capture is not None:
            return capture(args, self._capture_mode())
        for run in self._runs:
            out = run(args)
            if out is not _MISS:
                return out
        return self._miss(args)

    def _timed_call(self, args: tuple) -> Any:
        """A call while carve weighs the compiled region against its Python (cost_check.py)."""
        cost = self._cost
        assert cost is not None  # checked by the caller
        if not self._has_graph() or _state.fullgraph or kernel_builds.pending():
            # Weighed once its kernels are built: until then a graph runs its ops one by one.
            return self._compiled_call(args)
        if cost.calls == 0 and (cost_check.draws_random(self.graphs) or kernel_builds.off_cpu(args)):
            # A seeded program's draws must not hang on the machine's timing; and a GPU call
            # returns before its kernels finish, so the host's clock cannot weigh it.
            self._cost = None
            return self._compiled_call(args)
        turn = cost.turn()
        if turn == "warm":
            return self._compiled_call(args)
        compiles = self._compiles()
        start = time.perf_counter()
        out = self.fn(*args) if turn == "python" else self._compiled_call(args)
        elapsed = time.perf_counter() - start
        if self._compiles() != compiles:
            # This call compiled (a guard failed): its time is not a call's; weigh afresh.
            self._cost = cost_check.CostCheck()
            return out
        cost.record(turn, elapsed, turn == "compiled" and _requires_grad(out))
        verdict = cost.verdict()
        if verdict is not None:
            self._cost = None
            if verdict == "python":
                self.eager = True
                self.eager_reason = f"faster as Python: {cost.summary()}"
                log.log_once(("slower", self.filename, self.first_line), log.perf_log, logging.INFO,
                             "region %s (%s:%d) runs as Python from now on: %s", self.name, self.filename,
                             self.first_line, cost.summary())
        return out

    def _has_graph(self) -> bool:
        capture = self.capture
        if capture is not None:
            return bool(capture.recorder.graphs)
        return any(entry.compiled is not None for entry in self.entries)

    def _compiles(self) -> tuple:
        """Changes when a call compiles: a new entry, a capture, or a capture's new graph."""
        capture = self.capture
        return len(self.entries), id(capture), len(capture.compile_seconds) if capture is not None else 0

    def _capture_mode(self) -> str:
        """How strictly Dynamo captures this call (see DynamoCapture._optimized)."""
        if self.options.fullgraph or _state.fullgraph:
            return "fullgraph"
        settings = _state.error_on_graph_break
        if settings:
            return "error" if settings[-1] else "permissive"
        return "error" if compat.torch_error_on_graph_break() else "permissive"

    def _stop_on_break(self) -> bool:
        if self.options.fullgraph or state.should_error():
            return True
        return state.error_on_graph_break_depth() == 0 and compat.torch_error_on_graph_break()

    def _miss(self, args: tuple) -> Any:
        if compat.is_dynamo_compiling():
            return self.fn(*args)
        if self.force_dynamo:
            return self._to_dynamo(args, self.force_dynamo)
        if self.options.fullgraph:
            # What is one graph is Dynamo's to decide, as under torch.compile(fullgraph=True)
            # (`min(max(t, 0), 1)` and `xs[torch.as_tensor(2)]` are one graph there); carve's
            # tracer would stop at them, after running part of the region.
            return self._to_dynamo(args, "fullgraph=True: Dynamo judges one graph")
        if not is_closed(self.fn, args):
            return self._to_dynamo(args)
        if sys.getprofile() is not None:
            # carve's tracer watches calls through sys.setprofile, which a profiler (cProfile,
            # a debugger) holds now; Dynamo needs no such hook.
            return self._to_dynamo(args, "a profiler holds sys.setprofile")
        dynamic = self.options.dynamic
        if dynamic is True or any(isinstance(a, torch.Tensor) and compat.has_dynamic_marks(a) for a in args):
            self.dynamic_reason = "dynamic=True" if dynamic is True else "torch._dynamo.mark_dynamic on an input"
            return self._to_dynamo(args, "symbolic shapes asked for")
        if dynamic is None and self.entries:
            counters = _changed_numbers(self._traced_shapes, args)
            if counters:
                # A loop counter, step number or learning rate: guarding it by value would
                # recompile on every call; Dynamo makes it symbolic after it changes once.
                self.dynamic_reason = "number changed: " + ", ".join(f"argument {i}" for i in counters)
                log.dynamic_log.info("region %s (%s:%d): %s; captured by Dynamo with symbolic numbers", self.name,
                                     self.filename, self.first_line, self.dynamic_reason)
                return self._to_dynamo(args, "a number argument changes between calls", dynamic=True)
            changed = _changed_dims(self._traced_shapes, args)
            if changed:
                # Automatic dynamic shapes, as torch.compile: a size changed, so the dimension
                # becomes symbolic and one graph serves every later size.
                for index, dim in changed:
                    compat.mark_dynamic_hint(args[index], dim)
                self.dynamic_reason = "size changed: " + ", ".join(
                    f"argument {i} dim {d} ({self._traced_shapes[i][d]} -> {args[i].shape[d]})" for i, d in changed)
                log.dynamic_log.info("region %s (%s:%d): %s; traced with symbolic sizes by Dynamo", self.name,
                                     self.filename, self.first_line, self.dynamic_reason)
                return self._to_dynamo(args, "dynamic shapes")
        if len(self.entries) >= self.options.recompile_limit:
            if not self.limit_reached:
                self.limit_reached = True
                reason = self.entries[0].guards.failure_reason(args)
                event = BreakEvent("CRV020", f"region {self.name} was recompiled {len(self.entries)} times "
                                   f"(recompile_limit={self.options.recompile_limit}); last guard failure: "
                                   f"{reason}; new inputs now run eagerly", self.filename, self.first_line)
                log.recompiles_log.warning("%s", event.format())
            return self.fn(*args)

        reason = self.entries[0].guards.failure_reason(args) if self.entries else None
        stop_on_break = self._stop_on_break()
        trace = trace_region(self.fn, args, stop_on_break=stop_on_break)
        if trace.break_event is not None:
            self._on_break(trace.break_event)
            return trace.result
        if reason is not None:
            log.recompiles_log.info("recompiling region %s (%s:%d): guard failed: %s", self.name,
                                    self.filename, self.first_line, reason)
        self._add_entry(trace, args, stop_on_break)
        return trace.result

    def _to_dynamo(self, args: tuple, reason: str | None = None, dynamic: bool | None = None) -> Any:
        """The region runs Python carve cannot see (or needs symbolic sizes): Dynamo captures it
        from now on (`dynamic=True`: every size and number symbolic from Dynamo's first capture)."""
        self.capture_reason = reason or open_reason(self.fn, args)
        capture = DynamoCapture(self.fn, self.options, name=self.name, filename=self.filename,
                                first_line=self.first_line, dynamic=dynamic)
        capture.break_events = self.break_events
        if self.on_skip is not None:
            capture.on_skip = lambda event: self.on_skip(self, event)  # type: ignore[misc]  # not None: checked above
        self.capture = capture
        self.entries = []
        self._runs = ()
        log.log_once(("dynamo", self.filename, self.first_line), log.recompiles_log, logging.DEBUG,
                     "region %s (%s:%d) is captured by Dynamo: %s", self.name, self.filename,
                     self.first_line, self.capture_reason)
        out = capture(args, self._capture_mode())
        if self.tracer_refusals and not capture.recorder.graphs and not capture.skipped and self.on_skip:
            # Dynamo made no graph of it either (it skips a frame on `retain_grad()`): the
            # compiler splits the region at what carve's tracer refused instead.
            capture.skipped = True
            self.on_skip(self, self.tracer_refusals[-1])
        return out

    def _on_break(self, event: BreakEvent) -> None:
        if event.code == UNTRACEABLE and not self.eager:
            # Not a graph break: carve's tracer cannot record this (a range passed to a torch
            # op, `b.type(m.type())`), Dynamo may. If Dynamo then gives up on the region, the
            # compiler re-splits it at this line (see RegionSet._region_skipped).
            self.tracer_refusals.append(event)
            self.force_dynamo = f"carve's tracer cannot record line {event.lineno}: {event.message}"
            log.log_once(("untraceable", self.filename, event.lineno), log.recompiles_log, logging.DEBUG,
                         "region %s (%s:%d): %s", self.name, self.filename, self.first_line, self.force_dynamo)
            return
        self.break_events.append(event)
        log.log_graph_break(event)
        if self.on_break is not None and self.on_break(event) == "dynamo":
            # Dynamo captures the region from the next call and splits it at the break itself.
            self.force_dynamo = "a statement in the region breaks the graph"
            return
        self.eager = True
        self.eager_reason = f"graph break {event.code} at {event.filename}:{event.lineno}"

    def _add_entry(self, trace: TraceResult, args: tuple, stop_on_break: bool) -> None:
        guards = GuardSet.build(trace, args, self.fn)
        compiled = None
        eager_reason = None
        elapsed = 0.0
        gm = trace.graph_module
        if trace.op_count == 0 and not _branches(self.fn.__code__):
            # Straight-line code that ran no tensor operation (`dt = t1 - t0` of a timing line, a
            # tensor passed through) runs none on any call: no graph can come of it, and guarding
            # its values would trace it again whenever they change.
            self.eager = True
            self.eager_reason = "no tensor operations"
            return
        if trace.op_count == 0:
            # Nothing to compile: running the function is as cheap as a graph call. The entry
            # still sits under guards, so inputs that do reach tensor ops get traced.
            eager_reason = "no tensor operations"
        else:
            assert gm is not None  # a trace without a break that recorded ops made a graph
            start = time.perf_counter()
            try:
                backend, options = self.options.backend, self.options.options
                compiled = kernel_builds.compile_graph(
                    lambda graph, inputs: compat.compile_with_backend(backend, graph, inputs, options),
                    gm, list(trace.example_inputs), uses_inductor=self.options.uses_inductor,
                    label=f"region {self.name} ({self.filename}:{self.first_line})")
            except Exception as e:
                if stop_on_break:
                    raise
                eager_reason = f"backend {self.options.backend_name!r} failed: {type(e).__name__}: {e}"
                log.log_once(("backend", self.filename, self.first_line, type(e).__name__),
                             log.warnings_log, logging.WARNING,
                             "carve: region %s (%s:%d) runs eagerly: %s", self.name, self.filename,
                             self.first_line, eager_reason)
                compiled = None
            elapsed = time.perf_counter() - start
        self._traced_shapes = tuple(tuple(a.shape) if isinstance(a, torch.Tensor) else
                                    (a,) if type(a) in _NUMBER_TYPES else None for a in args)
        run = self._make_run(guards, trace, compiled)
        entry = CacheEntry(guards, run, compiled, gm, trace.op_count, elapsed, eager_reason)
        self.entries.insert(0, entry)
        self._runs = tuple(e.run for e in self.entries)
        if log.guards_log.isEnabledFor(logging.DEBUG):
            log.guards_log.debug("guards of region %s entry %d:\n  %s", self.name, len(self.entries),
                                 "\n  ".join(guards.describe()))
        if compiled is not None and gm is not None and log.graph_code_log.isEnabledFor(logging.DEBUG):
            log.graph_code_log.debug("graph of region %s (%s:%d):%s", self.name, self.filename,
                                     self.first_line, gm.code)

    def _make_run(self, guards: GuardSet, trace: TraceResult, compiled: Callable[..., Any] | None):
        """The entry's fast path: guards, input fetch, graph call, output rebuild, in one function."""
        fail = lambda i: "return MISS"  # noqa: E731
        extra = {"MISS": _MISS, "FN": self.fn}
        if compiled is None:
            tail = ["return FN(*args)"]
        else:
            inputs = ", ".join(guards.var(s) for s in trace.input_sources)
            extra["COMPILED"] = compiled
            spec: OutputSpec = trace.output_spec  # type: ignore[assignment]
            if spec.kind == "tensor":
                tail = [f"return COMPILED({inputs})[0]"]
            elif spec.kind == "tuple":
                tail = [f"out = COMPILED({inputs})", "return out if type(out) is tuple else tuple(out)"]
            else:
                extra["REBUILD"] = _rebuilder(spec)
                tail = [f"return REBUILD(COMPILED({inputs}), args)"]
        # guards.var() may have added fetch lines for inputs: render after computing `inputs`.
        source = guards.render("run", fail, tail)
        return guards.compile(source, "run", extra)


# Python numbers Dynamo makes symbolic once they change (a step count, a learning rate).
_NUMBER_TYPES = (int, float)


def _changed_numbers(traced: tuple, args: tuple) -> list[int]:
    """Indices of int or float arguments whose value differs from the traced call's."""
    return [index for index, (seen, arg) in enumerate(zip(traced, args))
            if type(arg) in _NUMBER_TYPES and type(seen) is tuple and len(seen) == 1
            and type(seen[0]) is type(arg) and seen[0] != arg]


def _requires_grad(out: Any) -> bool:
    """Whether a region's result holds a tensor that requires grad (a backward may follow)."""
    return any(isinstance(leaf, torch.Tensor) and leaf.requires_grad for leaf in pytree.tree_leaves(out))


def _branches(code: Any) -> bool:
    """Whether `code` (or a comprehension in it) can take another path on other values."""
    return any("_IF_" in instruction.opname for instruction in dis.get_instructions(code)) or any(
        _branches(const) for const in code.co_consts if isinstance(const, type(code)))


def _changed_dims(traced: tuple, args: tuple) -> list[tuple]:
    """(argument index, dim) of tensor sizes that differ from the traced call's (same rank only)."""
    changed: list[tuple] = []
    for index, (shape, arg) in enumerate(zip(traced, args)):
        if shape is None or not isinstance(arg, torch.Tensor) or arg.dim() != len(shape):
            continue
        changed.extend((index, dim) for dim, size in enumerate(arg.shape) if size != shape[dim])
    return changed


def _rebuilder(spec: OutputSpec) -> Callable[[Any, tuple], Any]:
    leaves = spec.leaves
    treespec = spec.treespec

    def rebuild(out: Any, args: tuple) -> Any:
        values = [out[i] if kind == "out" else args[i] if kind == "arg" else i for kind, i in leaves]
        return pytree.tree_unflatten(values, treespec)

    return rebuild


__all__ = ["GraphRegion", "CacheEntry", "GraphBreakError"]
