"""GraphRegion: the callable the generated code uses for each graph region.

The compiler outlines every tensor-only region of a user function into a
plain function and wraps it in a `GraphRegion`; the rewritten function calls
it positionally:

    _region_1 = GraphRegion(_region_1_fn, name="f:3-5", options=opts,
                            filename="model.py", first_line=3, last_line=5)
    def f(x, w):
        y, z = _region_1(x, w)            # captured by torch._dynamo (dynamo_capture.py)
        print(z)                          # an eager statement
        ...

Per call:
- inside code Dynamo is tracing, or while carve is disabled: run the function itself (the
  outer trace inlines its code);
- otherwise `torch._dynamo` runs it: its C++ guards pick a compiled graph, or it traces and
  compiles one with the user's backend (`DynamoCapture`). Who runs the region and why is
  `capture_policy.region_path`; whether a break raises is `capture_policy.break_mode`.
- a region whose first capture made no graph and that cannot take another path (straight-
  line code with no tensor operation, such as `dt = t1 - t0`) runs as Python from then on;
- a few calls after its first graph, a region is timed compiled and as Python,
  alternately, and keeps the faster for good (cost_check.py);
- a region that compiles again on most of its calls runs as Python from then on, said once
  (capture_policy.recompiles_on_most_calls).
"""

from __future__ import annotations

import dis
import logging
import math
import types
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from . import capture_policy, compat, cost_check, kernel_builds, log, model_seats, state
from .capture_policy import CapturePath
from .config import CompileOptions
from .dynamo_capture import DynamoCapture
from .errors import BreakEvent, GraphBreakError

_state = state._state
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_torch_error_on_graph_break = compat.torch_error_on_graph_break
_GLOBAL_MODULE_HOOKS = compat.global_module_hooks()
_CAPTURE_CONFIG = compat.CARVE_CAPTURE
# Modules wrapping a model whose forward Dynamo traces its own way (DDP's bucketed graphs, FSDP).
_WRAPPER_MODULES = ("torch.nn.parallel", "torch.distributed")


class GraphRegion:
    """One outlined graph region, captured by `torch._dynamo`.

        region = GraphRegion(_f_graph_region_0, name=..., options=..., filename=..., first_line=3, last_line=5)
        y, z = region(x, w)     # Dynamo: guards, then the compiled graph (traced on a miss)

    Inside code Dynamo traces, or under carve.disable, it simply calls the function.
    """

    def __init__(self, fn: Callable[..., Any], *, name: str, options: CompileOptions, filename: str,
                 first_line: int, last_line: int) -> None:
        self.name = name
        self.options = options
        self.filename = filename
        self.first_line = first_line
        self.last_line = last_line
        # Set by the compiler: called with (region, BreakEvent) when Dynamo skips the region for good.
        self.on_skip: Callable[["GraphRegion", BreakEvent], Any] | None = None
        # Set by the compiler: called with the region when the cost check keeps it compiled for its
        # backward, unweighed; its function's whole calls may weigh it (whole_call_check.py), and
        # that weighing is `_whole_call` meanwhile.
        self.on_kept_for_backward: Callable[["GraphRegion"], Any] | None = None
        self._whole_call: Any = None
        # Set by the compiler: a module compiled as carve.compile(module) compiles it (the same
        # module object for every caller), or None where it cannot be; see _run_with_compiled_models.
        self.compile_module: Callable[[torch.nn.Module], Any] | None = None
        # What a call runs while the region runs as Python: its function, or (a region that runs a
        # model) its function with the model's calls going to the compiled model.
        self._python: Callable[..., Any] | None = None
        # Where a region that runs its models compiled finds each of them (runtime/model_seats.py).
        self._model_seats: list[model_seats.ModelSeat] = []
        # Why the region runs as Python (None: Dynamo captures it); see capture_policy.region_path.
        self.eager_reason: str | None = None if hasattr(fn, "__code__") else "not a Python function"
        self.eager = self.eager_reason is not None
        # Why Dynamo captures it, when there is more to say than that it captures every region.
        self.capture_reason: str | None = None
        self.capture = DynamoCapture(fn, options, name=name, filename=filename, first_line=first_line)
        self._fn = fn
        self.caller = self._make_caller()
        self.fn = fn
        self.capture.on_skip = self._skipped
        self.break_events = self.capture.break_events
        # Until its first capture: a region that cannot take another path and makes no graph runs
        # as Python from then on.
        self._watch_for_no_graph = hasattr(fn, "__code__") and not _branches(fn.__code__)
        # Compiled or as Python, whichever is faster (cost_check.py); None once decided, and
        # under fullgraph, where the user asked for the graph.
        self._cost = cost_check.CostCheck() if cost_check.ENABLED and not options.fullgraph else None
        # The first calls run the region's Python, timed, before any compile (cost_check.worth_compiling):
        # how many are left, and the fastest so far.
        self._python_first = cost_check.PYTHON_FIRST_CALLS \
            if self._cost is not None and cost_check.prices_compiles(options) else 0
        self._python_fastest = math.inf
        self._python_ops: int | None = None  # counted on the first of them (cost_check.OpCounter)
        # Set once the region's calls can go straight into Dynamo's capture (see _make_caller).
        self._steady = False
        # Where the first call passed a float or a complex (checked for -0.0 on every call).
        self._number_positions: tuple[int, ...] = ()
        self._numbers_seen = False
        # Calls since the region's first compile (0: none yet), for recompiles_on_most_calls.
        self._calls = 0
        self.__name__ = getattr(fn, "__name__", name)
        self.__qualname__ = getattr(fn, "__qualname__", name)

    @property
    def fn(self) -> Callable[..., Any]:
        return self._fn

    @fn.setter
    def fn(self, fn: Callable[..., Any]) -> None:
        # The compiler rebinds a region function's closure to the user's own cells after making
        # the region: Dynamo must capture that function, reading the cells the user's code writes.
        self._fn = fn
        self.__wrapped__ = fn
        self.capture.rebind(fn)
        self.caller.__wrapped__ = fn  # type: ignore[attr-defined]  # the region as Python (for unbound names)

    # ---- stats for carve.explain ------------------------------------------------------------

    @property
    def capture_path(self) -> CapturePath:
        """Who runs the region and why (capture_policy.region_path)."""
        reason = self.capture_reason
        if self.pricing:
            reason = (f"compiled from its call {cost_check.PYTHON_FIRST_CALLS + 1} on if worth it: its first "
                      f"{cost_check.PYTHON_FIRST_CALLS} calls run as Python, timed, to price its compile")
        return capture_policy.region_path(self.eager_reason, self.options.fullgraph, reason)

    @property
    def pricing(self) -> bool:
        """Whether its next call is one of the calls that price its compile (its Python, timed)."""
        return bool(self._python_first) and not self.eager and not self.capture.compiles

    @property
    def called(self) -> bool:
        """Whether the region has had a call (priced, compiled or weighed), or runs as Python."""
        return self.eager or self._python_ops is not None or self._numbers_seen

    @property
    def path(self) -> str:
        """"dynamo" or "eager"."""
        return self.capture_path.kind

    @property
    def graphs(self) -> list:
        return list(self.capture.recorder.graphs)

    @property
    def compiled_models(self) -> list:
        """The compiled modules the region's calls of its models run (see _run_with_compiled_models)."""
        return [view for view in (seat.last_view() for seat in self._model_seats) if view is not None]

    @property
    def ops_per_graph(self) -> list[int]:
        return list(self.capture.recorder.ops_per_graph)

    @property
    def guards(self) -> list[list[str]]:
        """Dynamo's guards of each compiled version (one line per guard)."""
        return self.capture.describe_guards()

    @property
    def compile_times(self) -> list[float]:
        return list(self.capture.compile_seconds)

    def __repr__(self) -> str:
        return f"<carve GraphRegion {self.name} {self.filename}:{self.first_line}-{self.last_line}>"

    # ---- the call ---------------------------------------------------------------------------

    def __call__(self, *args: Any) -> Any:
        return self.caller(*args)

    def _make_caller(self) -> Callable[..., Any]:
        """The function the generated code calls for this region: a closure rather than this
        object's `__call__`, since every region call pays its cost.

        The steady state (Dynamo's capture exists, no carve scope, no torch error_on_graph_break,
        no process-wide module hooks, not inside a Dynamo trace, not a no_grad call that may
        compile repeated layers once) goes straight into Dynamo's compiled code; everything else
        takes `_call`."""
        region = self
        capture = self.capture
        config = _CAPTURE_CONFIG
        scopes = state.open_scopes
        hooks = _GLOBAL_MODULE_HOOKS
        callbacks = config.start_callbacks
        on_start = config.on_start
        dynamo_compiling = _is_dynamo_compiling
        grad_enabled = torch.is_grad_enabled  # layers are compiled once under no_grad only (repeated_blocks.py)
        torch_error_on_graph_break = _torch_error_on_graph_break

        def call_region(*args: Any) -> Any:
            if region._steady and not scopes.count and not dynamo_compiling() and not torch_error_on_graph_break() \
                    and not any(hooks) and on_start in callbacks and (not capture.marks_layers or grad_enabled()) \
                    and not (region._number_positions and _negative_zero(args, region._number_positions)):
                compiles = config.compiles
                region._calls += 1
                try:
                    out = capture.permissive(*args)  # type: ignore[misc]  # set: _steady says so
                except Exception as error:
                    out = capture.failed(error, args, capture_policy.PERMISSIVE)
                if config.compiles != compiles:
                    capture.after(compiles)
                    region._compiled_again()
                return out
            if region.eager:  # Python for good: no frame of _call on each call
                if not _state.disabled and not dynamo_compiling():
                    python = region._python
                    return python(*args) if python is not None else region._fn(*args)
                return region._fn(*args)
            return region._call(args)

        config.carve_entry(call_region.__code__)  # its calls of Dynamo start carve's compiles
        call_region.__name__ = getattr(self._fn, "__name__", self.name)
        call_region.__qualname__ = getattr(self._fn, "__qualname__", self.name)
        call_region.__carve_region__ = self  # type: ignore[attr-defined]  # what the generated code calls
        return call_region

    def _call(self, args: tuple) -> Any:
        if self._number_positions and _negative_zero(args, self._number_positions):
            # Dynamo guards a float by ==, so -0.0 would reuse a graph traced for 0.0 and lose
            # its sign (torch.compile does): this call runs as Python.
            return self.fn(*args)
        if self.eager or _state.disabled or _is_dynamo_compiling():
            # Inside a Dynamo trace (a user's torch.compile, or a region calling a function
            # `carve rewrite` wrote), the trace inlines the region's code, not a second capture.
            # (A region Python for good, its models compiled or not, is run by `call_region`.)
            return self.fn(*args)
        if self._whole_call is not None:
            return self._whole_call.region_call(self, args)
        if self._cost is not None:
            return self._timed_call(args)
        return self._compiled_call(args)

    def _compiled_call(self, args: tuple) -> Any:
        if not self._numbers_seen:
            self._numbers_seen = True
            self._number_positions = tuple(i for i, arg in enumerate(args) if type(arg) in (float, complex))
        capture = self.capture
        compiles = capture.compiles
        if self._calls:
            self._calls += 1
        if not self._watch_for_no_graph:
            out = capture(args, capture_policy.break_mode(self.options.fullgraph))
        else:
            out = self._first_capture(args)
        if capture.compiles != compiles:
            self._compiled_again()
        self._steady = self._cost is None and not self.eager and not self._watch_for_no_graph \
            and not self.options.fullgraph and capture.steady
        return out

    def _first_capture(self, args: tuple) -> Any:
        capture = self.capture
        compiles, unsupported = capture.compiles, compat.dynamo_unsupported_total()
        out = capture(args, capture_policy.break_mode(self.options.fullgraph))
        if capture.compiles != compiles:
            self._watch_for_no_graph = False
            if not capture.recorder.graphs and not capture.break_events and not capture.skipped \
                    and capture.compile_failure is None and compat.dynamo_unsupported_total() == unsupported:
                # Straight-line code that ran no tensor operation runs none on any call: no graph
                # can come of it, and Dynamo's guards on its values would only trace it again.
                self._run_as_python("no tensor operations")
        return out

    def _run_as_python(self, reason: str) -> None:
        """From now on every call runs the region's function as written, for `reason`."""
        self._steady, self.eager, self.eager_reason = False, True, reason

    def _compiled_again(self) -> None:
        """After a call that compiled: a failed compile, or a region that compiles on most of its
        calls, runs as Python from now on (said once)."""
        capture = self.capture
        if capture.compile_failure is not None:
            self._run_as_python(capture.compile_failure)
            return
        if not self._calls:
            self._calls = 1  # the first compile: counting starts
        if self.options.fullgraph:
            return
        if capture_policy.compiles_for_nothing(capture.compiles, len(capture.recorder.graphs)):
            self._run_as_python(f"compiled {capture.compiles} times without a graph: its Python costs no compile")
            log.log_once(("no graph", self.filename, self.first_line), log.perf_log, logging.INFO,
                         "region %s (%s:%d) runs as Python from now on: it %s", self.name, self.filename,
                         self.first_line, self.eager_reason)
            return
        if capture.compiles < capture_policy.CHURN_COMPILES:
            return
        failed = capture.describe_recompiles()
        if not capture_policy.recompiles_on_most_calls(capture.compiles, self._calls, failed):
            return
        failed = [capture_policy.failed_guard(reason) for reason in failed]
        self._run_as_python(f"compiled {capture.compiles} times in {self._calls} calls (last guard that failed: "
                            f"{failed[-1] if failed else 'unknown'}); Python costs less than a compile per call")
        event = BreakEvent("CRV020", f"region {self.name} runs as Python from now on: it {self.eager_reason}",
                           self.filename, self.first_line)
        log.log_once(("churn", self.filename, self.first_line), log.recompiles_log, logging.WARNING,
                     "%s", event.format())

    def _timed_call(self, args: tuple) -> Any:
        """A call while carve weighs the compiled region against its Python (cost_check.py)."""
        cost = self._cost
        assert cost is not None  # checked by the caller
        capture = self.capture
        if self._python_first:
            if not capture.compiles and not capture_policy.break_raises(self.options.fullgraph) \
                    and not kernel_builds.off_cpu(args):
                return self._first_call_as_python(args)
            self._python_first = 0
        # A region Dynamo captured without a graph (an `if` on Python values, calls of user
        # functions with no tensor work, statements Dynamo breaks on and runs eagerly: `p.data`
        # updates, a builtin it cannot trace) pays Dynamo's guards on every call for nothing
        # compiled: weighed too.
        nothing_captured = capture.compiles and not capture.recorder.graphs
        if not (capture.recorder.graphs or nothing_captured) or _state.fullgraph or kernel_builds.pending():
            # Weighed once its kernels are built: until then a graph runs its ops one by one.
            return self._compiled_call(args)
        if cost.calls == 0 and ((cost_check.draws_random(self.graphs)
                                 and not cost_check.draws_eagers_random(self.options)) or kernel_builds.off_cpu(args)):
            # A seeded program's draws must not hang on the machine's timing (unless both ways draw
            # eager's numbers); and a GPU call returns before its kernels finish, so the host's clock
            # cannot weigh it.
            self._cost = None
            return self._compiled_call(args)
        turn = cost.turn()
        if turn == "warm":
            return self._compiled_call(args)
        compiles = self.capture.compiles
        clock = cost_check.clock
        start = clock()
        out = self.fn(*args) if turn == "python" else self._compiled_call(args)
        elapsed = clock() - start
        if self.capture.compiles != compiles:
            # This call compiled (a guard failed): its time is not a call's; weigh afresh.
            self._cost = cost_check.CostCheck()
            return out
        cost.record(turn, elapsed, turn == "compiled" and _requires_grad(out))
        verdict = cost.verdict()
        if verdict is not None:
            self._cost = None
            if cost.kept_for_backward and self.on_kept_for_backward is not None:
                self.on_kept_for_backward(self)
            if verdict == "python":
                self._run_as_python(f"faster as Python: {cost.summary()}")
                log.log_once(("slower", self.filename, self.first_line), log.perf_log, logging.INFO,
                             "region %s (%s:%d) runs as Python from now on: %s", self.name, self.filename,
                             self.first_line, cost.summary())
        return out

    def compile_from_the_first_call(self) -> None:
        """No pricing calls: the region is a model's code, compiled as torch.compile compiles it."""
        self._python_first = 0

    def _first_call_as_python(self, args: tuple) -> Any:
        """One of the region's first calls: its Python, timed. After the last of them, a region no
        compile could pay for runs as Python from now on, never traced (cost_check.worth_compiling,
        on the fastest of these calls: the first pays for caches and lazy set-up); any other is
        compiled from its next call on. A region whose operations ran mostly inside module calls
        (cost_check.OpCounter.runs_a_model) calls the model: from its next call it runs as Python
        with the model compiled (`_run_with_compiled_models`), as torch.compile(model) places it.
        A region that drew random numbers is compiled from its next call whatever its time,
        unless both ways draw eager's: which way it runs must not hang on the machine's timing."""
        clock = cost_check.clock
        random_state = torch.random.get_rng_state()
        counter = cost_check.OpCounter() if self._python_ops is None else None
        start = clock()
        if counter is None:
            out = self.fn(*args)
        else:
            with counter:
                out = self.fn(*args)
        elapsed = clock() - start
        self._python_first -= 1
        if counter is not None:
            self._python_ops = counter.ops
        if counter is not None and counter.runs_a_model:
            if not self._run_with_compiled_models(counter.models, args):
                self._python_first = 0  # a model it cannot compile apart (a DDP wrapper): compiled with it
            return out
        if kernel_builds.off_cpu(pytree.tree_leaves(out)) or (
                not cost_check.draws_eagers_random(self.options)
                and not torch.equal(random_state, torch.random.get_rng_state())):
            # Compiled from the next call: a GPU's kernels finish after the host's clock reads; a
            # draw's stream must not hang on the machine's timing.
            self._python_first = 0
            return out
        self._python_fastest = fastest = min(self._python_fastest, elapsed)
        if self._python_first:
            return out
        requires_grad = _requires_grad(out)
        ops = self._python_ops or 0
        if not cost_check.worth_compiling(fastest, ops, requires_grad):
            self._cost = None
            self._run_as_python("not worth a compile: " + cost_check.first_call_summary(
                fastest, ops, requires_grad, self.options))
            log.log_once(("not worth", self.filename, self.first_line), log.perf_log, logging.INFO,
                         "region %s (%s:%d) runs as Python: it is %s", self.name, self.filename,
                         self.first_line, self.eager_reason)
        return out

    def _run_with_compiled_models(self, models: list, args: tuple) -> bool:
        """A region whose work is mostly its models' (`logits, loss = model(X, Y)`; DCGAN's
        `output = netD(fake); errG = criterion(output, label)`) runs as Python from now on, with
        each model it calls compiled as carve.compile(model) compiles it: torch.compile(model)'s
        placement. A model is compiled once, whichever regions call it (DCGAN's discriminator is
        called from three), and the glue around it runs as written, drawing eager's random numbers.

            output = netD(real_cpu)       # the region's Python; netD(...) runs netD compiled
            errD_real = criterion(output, label)

        The model's calls run its compiled forward for the region's call only (the compiled
        class's forward bound to the model, set on the instance and removed after): its hooks and
        its forward see the model itself, as eager's do, and code outside the region calls the
        model as written. A model compiled by `model.compile()` is left as it is. False, and
        nothing changes, where a model cannot be compiled so (a distributed wrapper, whose forward
        Dynamo traces specially: the region is compiled)."""
        compile_module = self.compile_module
        if compile_module is None or not models:
            return False
        if any(type(model).__module__.startswith(_WRAPPER_MODULES) for model in models):
            return False
        fn = self.fn
        namespace, names = getattr(fn, "__globals__", {}), getattr(getattr(fn, "__code__", None), "co_names", ())
        seats = self._model_seats = [model_seats.seat_of(model, args, namespace, names) for model in models]
        for seat, model in zip(seats, models):
            seat.view(model, compile_module)  # compiled now: the region's next call runs it
        names_said = ", ".join(type(model).__name__ for model in models)

        def python_with_compiled_models(*args: Any) -> Any:
            switched = []
            for seat in seats:
                model = seat.model(args, namespace)
                if model is None:
                    continue
                attributes = model.__dict__
                # Not compiled by model.compile(), no forward of its own set on the instance (a
                # library's patch; or this model's calls going to its compiled forward already,
                # from an enclosing region, another seat or another thread).
                if attributes.get("_compiled_call_impl") is not None or "forward" in attributes:
                    continue
                view = seat.view(model, compile_module)
                if view is model:
                    continue
                # The model's own call (its hooks see the model itself, `self` in its forward is
                # the model), with its forward compiled: the compiled class's forward, bound to it.
                forward = attributes["forward"] = types.MethodType(type(view).forward, model)
                switched.append((attributes, forward))
            try:
                return self.fn(*args)
            finally:
                for attributes, forward in switched:
                    if attributes.get("forward") is forward:
                        del attributes["forward"]

        self._cost = None
        self._python_first = 0
        self._python = python_with_compiled_models
        self._run_as_python(f"its work is mostly its model's ({names_said}): the region runs as Python and the model "
                            f"is compiled, once for every region that calls it, as torch.compile(model) compiles it")
        log.log_once(("model", self.filename, self.first_line), log.perf_log, logging.INFO,
                     "region %s (%s:%d) %s", self.name, self.filename, self.first_line, self.eager_reason)
        return True

    def _skipped(self, event: BreakEvent) -> None:
        if self.on_skip is not None:
            self.on_skip(self, event)


def _negative_zero(args: tuple, positions: tuple[int, ...]) -> bool:
    """Whether a float (or a complex's part) at `positions` is -0.0."""
    for position in positions:
        if position < len(args):
            value = args[position]
            if type(value) is float:
                if value == 0.0 and math.copysign(1.0, value) < 0:
                    return True
            elif type(value) is complex and ((value.real == 0.0 and math.copysign(1.0, value.real) < 0)
                                             or (value.imag == 0.0 and math.copysign(1.0, value.imag) < 0)):
                return True
    return False


def _requires_grad(out: Any) -> bool:
    """Whether a region's result holds a tensor that requires grad (a backward may follow)."""
    return any(isinstance(leaf, torch.Tensor) and leaf.requires_grad for leaf in pytree.tree_leaves(out))


def _branches(code: Any) -> bool:
    """Whether `code` (or a comprehension in it) can take another path on other values."""
    return any("_IF_" in instruction.opname or "FOR_ITER" in instruction.opname
               for instruction in dis.get_instructions(code)) or any(
        _branches(const) for const in code.co_consts if isinstance(const, type(code)))


__all__ = ["GraphRegion", "GraphBreakError"]
