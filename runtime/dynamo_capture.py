"""Capture of a graph region by `torch._dynamo`: every region carve outlines runs through it.

    def _forward_graph_region_0(self, x):      # carve's outlined region
        h = self.block(x)                       # a submodule: its Python, attributes, hooks
        return self.norm(h) * self.cfg.scale

    capture = DynamoCapture(region_fn, options, name=..., filename=..., first_line=...)
    y = capture(self, x)        # Dynamo traces the bytecode of the region and everything it
                                # calls, guards every read, replays side effects, and hands the
                                # graphs to the user's backend

Dynamo is called through its own module (`compat.dynamo_optimize`), with the user's
backend, `fullgraph`, `dynamic` and `recompile_limit`. Each graph the backend receives is
recorded (for `carve.explain`: graphs, ops per graph, compile times). A graph break Dynamo
meets inside the region is reported by carve once per location, at the user's file and line
(the region's code carries the user's line table); under fullgraph or error_on_graph_break it
is a `GraphBreakError` naming that line.
"""

from __future__ import annotations

import logging
import types
from collections.abc import Callable
from typing import Any

import torch

from . import compat, kernel_builds, log, repeated_blocks
from .config import CompileOptions
from .capture_policy import PERMISSIVE
from .errors import BreakEvent, GraphBreakError, source_line
from .user_code import is_user_file


_BREAK_REASONS = compat.dynamo_break_reasons()
_CAPTURE_CONFIG = compat.CARVE_CAPTURE


OP_NODES = ("call_function", "call_method", "call_module")
# A graph of this many ops or fewer, on tensors of at most SMALL_TENSOR_ELEMENTS elements each, is
# not worth Inductor's compile (a C++ build, a second or more on a cold cache): it runs through
# aot_eager. On large tensors Inductor's kernel wins even for one op (a vectorised `sin` over a
# million floats takes half aten's time), so those graphs stay Inductor's.
TINY_GRAPH_OPS = 2
SMALL_TENSOR_ELEMENTS = 1 << 16


def count_graph_ops(gm: Any) -> int:
    """The ops one run of `gm` executes: its call_function, call_method and call_module nodes."""
    return sum(1 for node in gm.graph.nodes if node.op in OP_NODES)


class GraphRecorder:
    """A backend wrapper: records every graph Dynamo hands to the user's backend, and compiles it
    through `kernel_builds.compile_graph` (under no_grad, Inductor's kernels build while the
    program runs on).

    Inductor's `get_compiler_config` and `reset` are forwarded, so Dynamo treats it as the
    backend itself.
    """

    def __init__(self, backend: Callable[..., Any], *, uses_inductor: bool = False, label: str = "",
                 float_safe_backend: Callable[..., Any] | None = None,
                 eager_random_backend: Callable[..., Any] | None = None) -> None:
        self.backend = backend
        # aot_eager: what compiles a graph Inductor would compile wrongly (compat.returns_symbolic_float)
        # and a graph too small to be worth Inductor's compile (TINY_GRAPH_OPS).
        self.float_safe_backend = float_safe_backend or backend
        # Inductor drawing eager's random numbers (fallback_random), for graphs that draw them in
        # the compiled function's own code (compat.draws_random_outside_modules); None: as `backend`.
        self.eager_random_backend = eager_random_backend
        self.compiler_name = getattr(backend, "compiler_name", type(backend).__name__)
        self.graphs: list[Any] = []
        self.ops_per_graph: list[int] = []
        # What compiled each graph: "backend" (the user's), or "aot_eager" in its place (see __call__).
        self.compiled_with: list[str] = []
        self.uses_inductor = uses_inductor
        self.label = label

    def __call__(self, gm: Any, example_inputs: list) -> Callable[..., Any]:
        backend, uses_inductor = self.backend, self.uses_inductor
        ops = count_graph_ops(gm)
        if uses_inductor and ops <= TINY_GRAPH_OPS and _small_tensors(example_inputs):
            # `loss = loss / n`, `x.grad.zero_()`: one or two ops gain nothing from Inductor's fusion,
            # and its compile would be most of the program's first calls.
            backend, uses_inductor = self.float_safe_backend, False
        elif uses_inductor and compat.returns_symbolic_float(gm):
            # torch 2.13's Inductor returns such a float as its first value on every call: the
            # same graph runs through AOT autograd without Inductor's kernels, which is exact.
            backend, uses_inductor = self.float_safe_backend, False
            log.log_once(("symbolic float", self.label), log.perf_log, logging.INFO,
                         "carve: %s returns a Python float computed in the graph; it runs through aot_eager "
                         "(torch 2.13's Inductor returns such a float's first value on every call)", self.label)
        elif uses_inductor and self.eager_random_backend is not None and not _inductor_draws_eagers_random() \
                and compat.draws_random_outside_modules(gm):
            # A data sampler in a training loop (`torch.randint` of batch offsets) compiled with
            # Inductor's own random stream would train on other data than the program run as
            # Python, without a word; torch.compile on the model never compiles it. Dropout in
            # the model's layers keeps Inductor's stream, as under torch.compile.
            backend = self.eager_random_backend
            log.log_once(("eager random", self.label), log.perf_log, logging.INFO,
                         "carve: %s draws random numbers outside the model's layers; its graph draws eager's "
                         "numbers (Inductor's fallback_random)", self.label)
        compiled = kernel_builds.compile_graph(backend, gm, example_inputs, uses_inductor=uses_inductor,
                                               label=self.label)
        self.graphs.append(gm)
        self.ops_per_graph.append(ops)
        self.compiled_with.append("backend" if backend is self.backend else
                                  "inductor, fallback_random" if backend is self.eager_random_backend else "aot_eager")
        return compiled

    def get_compiler_config(self) -> Any:
        config = getattr(self.backend, "get_compiler_config", None)
        return config() if config is not None else None

    def reset(self) -> None:
        reset = getattr(self.backend, "reset", None)
        if reset is not None:
            reset()


def _small_tensors(example_inputs: list) -> bool:
    """Every tensor input has a known number of elements, at most SMALL_TENSOR_ELEMENTS (a
    symbolic size may grow: not small)."""
    for value in example_inputs:
        if isinstance(value, torch.Tensor):
            numel = value.numel()
            if not isinstance(numel, int) or numel > SMALL_TENSOR_ELEMENTS:
                return False
    return True


def _inductor_draws_eagers_random() -> bool:
    import torch._inductor.config as inductor_config

    return bool(inductor_config.fallback_random)


def _eager_random_inductor(options: CompileOptions, dynamic: bool | None) -> Callable[..., Any] | None:
    """Inductor as `options` ask, drawing eager's random numbers; None for another backend, or a
    `mode` (which torch.compile takes instead of options, not with them)."""
    backend_options = options.options or {}
    if options.backend != "inductor" or "mode" in backend_options:
        return None
    return compat.dynamo_backend("inductor", {**backend_options, "fallback_random": True}, dynamic)


def _symbolic_inputs(gm: Any) -> list[str]:
    """`x: (s0, 8)`, `lr: a symbolic float`: the graph inputs Dynamo made symbolic."""
    found = []
    for node in gm.graph.nodes:
        if node.op != "placeholder":
            continue
        value = node.meta.get("example_value")
        if isinstance(value, torch.Tensor) and not all(isinstance(size, int) for size in value.shape):
            found.append(f"{node.name}: ({', '.join(str(size) for size in value.shape)})")
        elif isinstance(value, (torch.SymInt, torch.SymFloat)):
            found.append(f"{node.name}: a symbolic {type(value).__name__[3:].lower()}")
    return found


def _fresh_code_copy(fn: types.FunctionType) -> types.FunctionType:
    """The same function over a distinct code object: Dynamo keeps one cache per code object, so
    the strict (fullgraph) capture must not reuse entries compiled with graph breaks."""
    code = fn.__code__.replace()
    copy = types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


class DynamoCapture:
    """One region captured by Dynamo: a permissive capture, and a strict one built on demand for
    calls where a break must be an error."""

    def __init__(self, fn: Callable[..., Any], options: CompileOptions, *, name: str, filename: str,
                 first_line: int) -> None:
        # Its own code object: Dynamo keeps one cache (and recompile limit) per code object, and
        # two regions over one function (a test's, a whole call's) must not share entries.
        self.fn = _fresh_code_copy(fn) if isinstance(fn, types.FunctionType) else fn
        self.options = options
        self.dynamic = options.dynamic
        self.name = name
        self.filename = filename
        self.first_line = first_line
        self.recorder = GraphRecorder(compat.dynamo_backend(options.backend, options.options, self.dynamic),
                                      uses_inductor=options.uses_inductor,
                                      float_safe_backend=compat.dynamo_backend("aot_eager", None, self.dynamic),
                                      eager_random_backend=_eager_random_inductor(options, self.dynamic),
                                      label=f"region {name} ({filename}:{first_line})")
        self._variants: dict = {}
        # The functions Dynamo captures (the strict modes capture copies: one cache each).
        self._variant_functions: list = []
        # Dynamo's permissive capture, once made: what a steady-state call runs.
        self.permissive: Callable[..., Any] | None = None
        self.break_events: list[BreakEvent] = []
        self._seen_breaks: set = set()
        self._compiles_seen = 0
        self._hook_registries = compat.global_module_hooks()
        self._global_hooks = self._hooks_now()
        # Called with a BreakEvent when Dynamo skips the region for good (a break inside one of
        # its loops): the compiler re-splits the function so that loop runs as Python.
        self.on_skip: Callable[[BreakEvent], Any] | None = None
        # Wall time of each call that compiled (Dynamo's trace included), for carve.explain.
        self.compile_seconds: list[float] = []
        self.skipped = False
        # Why the backend could not compile the region's graph (the region then runs as Python).
        self.compile_failure: str | None = None
        self._unsupported_before = compat.dynamo_unsupported_counts()
        # Layer classes compiled once (runtime/repeated_blocks.py), per model the region is called
        # with (one compiled forward serves every instance of a model class), under no_grad only:
        # a steady-state call with grad off takes the full path (GraphRegion._make_caller).
        self.marks_layers = options.uses_inductor
        # The layer classes the last marked call compiled once (for carve.explain).
        self.layers_compiled_once: tuple = ()

    def rebind(self, fn: Callable[..., Any]) -> None:
        """Capture `fn` from now on (the same code over other closure cells)."""
        self.fn = _fresh_code_copy(fn) if isinstance(fn, types.FunctionType) else fn
        self._variants = {}
        self._variant_functions = []
        self.permissive = None

    @property
    def compiles(self) -> int:
        """How many calls of this capture compiled (changes when a call traced anew)."""
        return len(self.compile_seconds)

    def _optimized(self, mode: str) -> Callable[..., Any]:
        """Dynamo's capture of the region for `mode`: "permissive", "error" (breaks raise, an inner
        error_on_graph_break(False) may allow them) or "fullgraph" (one graph or an error)."""
        optimized = self._variants.get(mode)
        if optimized is None:
            fn = self.fn
            if mode != "permissive" and isinstance(fn, types.FunctionType):
                fn = _fresh_code_copy(fn)
            self._variant_functions.append(fn)
            if isinstance(fn, types.FunctionType):
                _CAPTURE_CONFIG.region_code(fn.__code__)
            optimized = compat.dynamo_optimize(fn, self.recorder, fullgraph=mode == "fullgraph",
                                               dynamic=self.dynamic,
                                               recompile_limit=self.options.recompile_limit)
            self._variants[mode] = optimized
        return optimized

    def _hooks_now(self) -> tuple:
        """The process-wide hooks now; () when there are none (falsy, for the fast check)."""
        return compat.global_hooks_state() if any(self._hook_registries) else ()

    def _check_global_hooks(self) -> None:
        hooks = self._hooks_now()
        if hooks != self._global_hooks:
            # Process-wide module hooks changed: Dynamo does not guard them, so start a new cache.
            self._global_hooks = hooks
            self.fn = _fresh_code_copy(self.fn) if isinstance(self.fn, types.FunctionType) else self.fn
            self._variants = {}
            self.permissive = None

    def __call__(self, args: tuple, mode: str) -> Any:
        if self._global_hooks or any(self._hook_registries):
            self._check_global_hooks()
        config = _CAPTURE_CONFIG
        if config.on_start not in config.start_callbacks:
            config.ensure_registered()
        compiles = config.compiles
        try:
            out = self._call_in_mode(args, mode)
        except Exception as error:
            out = self.failed(error, args, mode)
        if config.compiles != compiles:
            self.after(compiles)
        return out

    @property
    def steady(self) -> bool:
        """Whether a permissive call may go straight to `permissive` (GraphRegion.__call__'s
        steady state), with `failed` and `after` for what it raised and did."""
        return self.permissive is not None and not self._global_hooks and not any(self._hook_registries)

    def failed(self, error: Exception, args: tuple, mode: str) -> Any:
        """What a call whose capture raised gives: the user's own exception, eager's result, or
        carve's GraphBreakError naming the user's line."""
        _CAPTURE_CONFIG.restore_after_call()
        if isinstance(error, GraphBreakError):
            raise error  # carve's own (an Unsupported too), from a region nested in this one: already located
        if isinstance(error, compat.DYNAMO_UNSUPPORTED):
            if compat.is_observed_exception(error):
                # The region's Python raises: under fullgraph Dynamo stops before running anything,
                # so running it as written raises the user's own exception, as eager does.
                return self.fn(*args)
            raise self._error(error) from None
        if isinstance(error, compat.DYNAMO_BACKEND_FAILED):
            if mode != PERMISSIVE or compat.failed_in_resume_function(error):
                raise error  # the user asked for the graph; or what ran before the graph would run twice
            # carve's or the backend's failure must not cost the user a result: Python from now on.
            self.compile_failure = f"backend {self.options.backend_name!r} failed: {compat.backend_error_text(error)}"
            log.log_once(("backend", self.filename, self.first_line), log.warnings_log, logging.WARNING,
                         "carve: region %s (%s:%d) runs eagerly: %s", self.name, self.filename, self.first_line,
                         self.compile_failure)
            return self.fn(*args)
        if isinstance(error, compat.DYNAMO_TRACE_ERRORS) and not compat.failed_in_resume_function(error):
            # Raised while tracing, before the frame ran: running it as written raises eager's error.
            # (After a graph break, running it again would repeat what ran before the break: the
            # error stands, as under torch.compile.)
            return self.fn(*args)
        if mode == PERMISSIVE and isinstance(self.fn, types.FunctionType) \
                and compat.failed_compiling(error, self.fn.__code__):
            # Dynamo itself failed compiling the region (torch 2.13: "Guard failed on the same frame
            # it was created" for a float carried through an unrolled loop), before it ran anything:
            # carve's or torch's failure must not cost the user a result.
            self.compile_failure = f"torch._dynamo failed to compile it: {type(error).__name__}: " \
                                   f"{str(error).splitlines()[0][:300] if str(error) else ''}"
            log.log_once(("dynamo failed", self.filename, self.first_line), log.warnings_log, logging.WARNING,
                         "carve: region %s (%s:%d) runs eagerly: %s", self.name, self.filename, self.first_line,
                         self.compile_failure)
            return self.fn(*args)
        raise error

    def after(self, compiles: int) -> None:
        """Reports what a call's compiles did (the call began at `compiles`): breaks met, what
        Dynamo gave up on, the compile time."""
        config = _CAPTURE_CONFIG
        config.restore_after_call()
        if compiles >= len(config.starts):
            return  # compiles counted before a reset of Dynamo's callbacks: nothing to read
        reasons_seen, unsupported_seen, compile_seconds = config.starts[compiles]
        if len(_BREAK_REASONS) > reasons_seen:
            self._record_breaks(_BREAK_REASONS[reasons_seen:])
        elif len(config.unsupported_met) != unsupported_seen:
            # Dynamo gave up on the frame without a graph-break reason: said at the region's line.
            self._record_unsupported(config.unsupported_met[unsupported_seen:])
        # Dynamo's tracing and the backend's compile: what the user waited for.
        self.compile_seconds.append(config.compile_seconds - compile_seconds)
        if len(self.compile_seconds) == self.options.recompile_limit:
            # Dynamo keeps this many versions of the region's code (its own code object), then runs
            # inputs that match none of them eagerly, saying so only in its own log.
            event = BreakEvent("CRV020", f"region {self.name} was compiled {len(self.compile_seconds)} times "
                               f"(recompile_limit={self.options.recompile_limit}); inputs that match none of its "
                               "versions now run eagerly", self.filename, self.first_line)
            log.recompiles_log.warning("%s", event.format())
        if len(self.recorder.graphs) != self._compiles_seen:
            self._log_compiles()
        if not self.skipped:
            self._check_skipped()

    def _call_in_mode(self, args: tuple, mode: str) -> Any:
        # Inference only: torch 2.13's nested regions give wrong gradients under Inductor.
        screen = self.options.layer_screen
        layers = repeated_blocks.classes_for(args, screen) \
            if self.marks_layers and screen is not None and not torch.is_grad_enabled() else ()
        if layers:
            return self._run_with_layers_marked(layers, args, mode)
        out = self._run(args, mode)
        if mode is PERMISSIVE and self.permissive is None:
            optimized = self._variants.get(PERMISSIVE)
            self.permissive = compat.dynamo_steady_entry(optimized) if optimized is not None else None
        return out

    def _run(self, args: tuple, mode: str) -> Any:
        if mode == "error":
            # torch's own setting, which Dynamo reads: the break raises where it happens.
            with compat.dynamo_error_on_graph_break(True):
                return self._optimized(mode)(*args)
        optimized = self._variants.get(mode) or self._optimized(mode)
        return optimized(*args)

    def _run_with_layers_marked(self, layers: tuple, args: tuple, mode: str) -> Any:
        try:
            with repeated_blocks.marked(layers):
                out = self._run(args, mode)
            self.layers_compiled_once = tuple(cls.__name__ for cls in layers)
            return out
        except compat.DYNAMO_NESTED_REGION_REFUSED as error:
            if not compat.is_nested_region_refusal(error) or compat.failed_in_resume_function(error):
                raise  # not the layers' refusal, or what ran before the break would run twice
            # A layer breaks the graph in a way carve's analysis could not see: compile the layers
            # inline from now on, as torch.compile does (the refusal came before anything ran).
            # Said at INFO: only the first call's compile time is lost, not a graph.
            names = ", ".join(cls.__name__ for cls in layers)
            log.log_once(("repeated blocks", layers), log.warnings_log, logging.INFO,
                         "carve: %s: the repeated layers %s cannot be compiled once each (%s); they are compiled "
                         "inline", self.name, names, type(error).__name__)
            repeated_blocks.compile_inline(layers)
            self.layers_compiled_once = ()
            self._variants = {}
            self.permissive = None
            if isinstance(self.fn, types.FunctionType):
                self.fn = _fresh_code_copy(self.fn)  # Dynamo's cache for the marked trace is not reused
            return self._run(args, mode)

    def _check_skipped(self) -> None:
        """Dynamo skips a frame whose loop breaks and runs it eagerly from then on, saying so
        only in a counter: carve reports it once and lets the compiler re-split the region."""
        # Only the permissive capture runs self.fn's own code; the strict ones raise, not skip.
        code = getattr(self.fn, "__code__", None)
        if code is None or compat.dynamo_skipped_frame(code, self._unsupported_before) is None:
            return
        self.skipped = True
        event = BreakEvent("CRV006", "torch._dynamo gave up on the region (a graph break it cannot resume "
                           "after, such as one inside a loop) and runs it eagerly; carve re-splits the function "
                           "at the breaking statements it knows of", self.filename, self.first_line)
        self.break_events.append(event)
        log.log_graph_break(event)
        if self.on_skip is not None:
            self.on_skip(event)

    # ---- reporting --------------------------------------------------------------------------

    def _user_location(self, stack: list) -> tuple:
        """The line of the region's own frame in `stack` (its lines are the user's): the
        statement that breaks, or the call into the callee that breaks."""
        user_frames = [f for f in (stack or []) if is_user_file(getattr(f, "filename", "<"))]
        for frame in user_frames:
            if frame.filename == self.filename and frame.name == getattr(self.fn, "__name__", None):
                return frame.filename, frame.lineno, frame.name
        if user_frames:
            frame = user_frames[0]
            return frame.filename, frame.lineno, frame.name
        return self.filename, self.first_line, self.name

    def _event(self, reason: str, stack: list) -> BreakEvent:
        filename, line, function = self._user_location(stack)
        user_stack = [(f.filename, f.lineno, f.name, source_line(f.filename, f.lineno))
                      for f in (stack or []) if is_user_file(f.filename)]
        code = compat.rule_for_dynamo_reason(reason)
        message = " ".join(reason.split())
        if len(message) > 400:
            message = message[:400] + " ..."
        return BreakEvent(code, message, filename, line, user_stack)

    def _record_breaks(self, reasons: list) -> None:
        for reason in reasons:
            event = self._event(getattr(reason, "reason", str(reason)), getattr(reason, "user_stack", []))
            # A break in a callee is met again when Dynamo compiles the callee's own frame:
            # one break, keyed by where it happens.
            innermost = event.user_stack[-1][:2] if event.user_stack else (event.filename, event.lineno)
            key = (event.code, innermost)
            if key in self._seen_breaks:
                continue
            self._seen_breaks.add(key)
            self.break_events.append(event)
            log.log_graph_break(event)

    def _record_unsupported(self, reasons: list[str]) -> None:
        for reason in reasons:
            title = reason.split("\n", 1)[0]
            key = (compat.rule_for_dynamo_reason(reason), (self.filename, self.first_line), title)
            if key in self._seen_breaks:
                continue
            self._seen_breaks.add(key)
            event = BreakEvent(key[0], " ".join(reason.split("Developer debug context")[0].split())[:400],
                               self.filename, self.first_line)
            self.break_events.append(event)
            log.log_graph_break(event)

    def _error(self, error: BaseException) -> GraphBreakError:
        stack = list(getattr(error, "real_stack", None) or [])
        if not stack and error.__traceback__ is not None:
            import traceback

            stack = traceback.extract_tb(error.__traceback__)
        event = self._event(str(error).split("\n\n")[0], stack)
        self.break_events.append(event)
        return GraphBreakError(event)

    def _log_compiles(self) -> None:
        new = len(self.recorder.graphs) - self._compiles_seen
        if self._compiles_seen and log.recompiles_log.isEnabledFor(logging.INFO):
            log.recompiles_log.info("recompiling region %s (%s:%d): Dynamo compiled %d more graph(s)",
                                    self.name, self.filename, self.first_line, new)
        if log.graph_code_log.isEnabledFor(logging.DEBUG):
            for gm in self.recorder.graphs[self._compiles_seen:]:
                log.graph_code_log.debug("graph of region %s (%s:%d), captured by Dynamo:%s", self.name,
                                         self.filename, self.first_line, gm.code)
        if log.dynamic_log.isEnabledFor(logging.INFO):
            for gm in self.recorder.graphs[self._compiles_seen:]:
                symbolic = _symbolic_inputs(gm)
                if symbolic:
                    log.dynamic_log.info("region %s (%s:%d): a graph with symbolic inputs: %s", self.name,
                                         self.filename, self.first_line, ", ".join(symbolic))
        if log.guards_log.isEnabledFor(logging.DEBUG):
            versions = self.describe_guards()
            if versions:
                log.guards_log.debug("guards of region %s (%s:%d), newest version:\n  %s", self.name,
                                     self.filename, self.first_line, "\n  ".join(versions[0]))
        self._compiles_seen = len(self.recorder.graphs)

    # ---- carve.explain ----------------------------------------------------------------------

    def describe_guards(self) -> list[list[str]]:
        """Dynamo's guards of each version it compiled of the region, one line per guard."""
        return [lines for code in self._codes() for lines in compat.dynamo_guards(code)]

    def describe_recompiles(self) -> list[str]:
        """Why Dynamo compiled the region again: the guard that failed in each cached version it
        tried, oldest first."""
        return [reason for code in self._codes() for reason in compat.dynamo_guard_failures(code)]

    def _codes(self) -> list[types.CodeType]:
        codes = {id(fn.__code__): fn.__code__ for fn in [self.fn, *self._variant_functions]
                 if isinstance(fn, types.FunctionType)}
        return list(codes.values())


# The one place carve calls Dynamo's entry outside a region's steady call (compat._started_by_carve).
_CAPTURE_CONFIG.carve_entry(DynamoCapture._run.__code__)

__all__ = ["DynamoCapture", "GraphRecorder"]
