"""Everything carve knows about torch's internals, in one place.

carve decides where the graph regions are and `torch._dynamo` captures each of
them. For that carve calls Dynamo through its own module (never the public
`torch.compile` name user code may wrap), finds backends by name the way
torch.compile does, reads Dynamo's break reasons and counters, and recognises
markers written for torch (`torch._dynamo.graph_break`,
`torch.compiler.disable`, `allow_in_graph`, ...). Those need private torch APIs
(`torch._dynamo.trace_rules` registries, the `_torchdynamo_disable` attributes
set by `DisableContext`, ...). They change between torch releases, so they live
only here; this file is what to fix on a torch upgrade (written against torch
2.13).
"""

from __future__ import annotations

import contextlib
import enum
import os
import sys
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch
import torch._dynamo  # noqa: F401  (backends, markers and registries live here)
import torch.compiler
from torch._dynamo import eval_frame as _eval_frame
from torch._dynamo import trace_rules as _trace_rules
from torch._dynamo import decorators as _decorators

from carve.rewriters import op_tables

from . import markers


# ---- backends --------------------------------------------------------------------------------

def lookup_backend(backend: Any) -> Callable[..., Any]:
    """The backend callable `(gm, example_inputs) -> callable` for a name or a callable."""
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"carve: backend must be a name or a callable, got {type(backend).__name__}")
    try:
        return torch._dynamo.lookup_backend(backend)
    except Exception:
        known = sorted(set(torch._dynamo.list_backends()) | {"eager", "aot_eager"})
        raise ValueError(f"carve: unknown backend {backend!r}; available: {', '.join(known)}") from None


def compile_with_backend(backend: Any, gm: torch.fx.GraphModule, example_inputs: list,
                         options: dict | None) -> Callable[..., Any]:
    """Compile `gm` like torch.compile does, passing `options` to Inductor as its config patches.

    For other named backends `options` are ignored (torch.compile only forwards them to
    Inductor-like backends too); a callable backend receives just (gm, example_inputs).
    """
    fn = lookup_backend(backend)
    if options and backend == "inductor":
        from torch._inductor import config as inductor_config
        with inductor_config.patch(options):
            return fn(gm, example_inputs)
    return fn(gm, example_inputs)


@contextlib.contextmanager
def inductor_waits_deferred(defer: Callable[[dict, str, Any], None]) -> Iterator[None]:
    """While active, a module Inductor generates does not wait for its kernels' builds when it
    loads: each kernel still building is handed to `defer(module_globals, name, future)`, which
    must put a stand-in into the module's globals under `name` (runtime/kernel_builds.py).

    Inductor's generated module ends its kernel definitions with `async_compile.wait(globals())`,
    which blocks until every `async_compile.cpp_pybinding(...)` future is built and replaces
    each future by its kernel; this replaces that wait for the duration of the block.
    """
    from concurrent.futures import Future

    from torch._inductor.async_compile import AsyncCompile
    from torch._inductor.codecache import CodeCacheFuture

    wait = AsyncCompile.wait

    def wait_for_none(self: Any, scope: dict) -> None:
        building = {name: value for name, value in scope.items() if isinstance(value, (Future, CodeCacheFuture))}
        for name, future in building.items():
            defer(scope, name, future)
        wait(self, {})  # Inductor's own end-of-compile bookkeeping, with nothing left to wait for

    AsyncCompile.wait = wait_for_none  # type: ignore[method-assign]
    try:
        yield
    finally:
        AsyncCompile.wait = wait  # type: ignore[method-assign]


def inductor_compile_workers() -> tuple[list[int], list[int]]:
    """Who builds Inductor's kernels for this process: the native ids of the threads of its
    compile thread pool (each starts gcc for a C++ kernel), and the process ids of its worker
    pool's sidecar process, if one runs (its workers compile Triton kernels). Nothing is
    created: a pool not made yet is not listed."""
    from torch._inductor.async_compile import AsyncCompile

    threads: list[int] = []
    if AsyncCompile.pool.cache_info().currsize:  # functools.lru_cache: made already
        threads = [thread.native_id for thread in getattr(AsyncCompile.pool(), "_threads", ())
                   if thread.native_id is not None]
    processes: list[int] = []
    if AsyncCompile.process_pool.cache_info().currsize:
        pid = getattr(getattr(AsyncCompile.process_pool(), "process", None), "pid", None)  # a SubprocPool's sidecar
        if pid is not None:
            processes.append(pid)
    return threads, processes


# ---- capture by Dynamo ------------------------------------------------------------------------

def dynamo_backend(backend: Any, options: dict | None, dynamic: bool | None) -> Callable[..., Any]:
    """The backend object torch.compile would hand Dynamo for (backend, mode/options, dynamic)."""
    mode = None
    if options and set(options) == {"mode"}:
        mode, options = options["mode"], None
    lookup_backend(backend)  # a clear error for an unknown name, before anything runs
    if backend == "inductor":
        return torch._TorchCompileInductorWrapper(mode or ("default" if not options else None), options, dynamic)
    return torch._TorchCompileWrapper(backend, mode, options, dynamic)


def dynamo_optimize(fn: Callable[..., Any], backend: Callable[..., Any], *, fullgraph: bool,
                    dynamic: bool | None, recompile_limit: int | None) -> Callable[..., Any]:
    """`fn` captured by Dynamo: what `torch.compile(fn, ...)` returns, without going through the
    public `torch.compile` name (user code may wrap or patch it)."""
    optimized = _eval_frame.optimize(backend=backend, nopython=fullgraph, dynamic=dynamic,
                                     recompile_limit=recompile_limit)(fn)
    code = getattr(optimized, "__code__", None)
    if code is not None:
        CARVE_CAPTURE.dynamo_entry(code)
    return optimized


def dynamo_steady_entry(optimized: Callable[..., Any]) -> Callable[..., Any]:
    """A call of `optimized` (what `dynamo_optimize` returned) for a region's steady state: the
    same compiled code under the same guards, entered with what Dynamo's own wrapper does on
    such a call and none of what it does for cases that cannot arise there.

    torch.compile's wrapper (`compile_wrapper`, eval_frame.py) costs about 10 us of Python per
    call: tracing, export, fullgraph, stance, recompile isolation and error-on-break handling
    before it sets Dynamo's frame callback. A region's steady call is none of those (checked
    here, per call: the default stance, no FX or JIT trace, no Dynamo tracing context; and per
    region: a permissive capture with no enter hooks beyond Dynamo's idempotent on_enter), so
    this call only sets the callback, runs the function and restores what the wrapper restores
    (the callback, functorch's layer stack, the dispatch key sets). A guard miss still compiles
    through the same callback. Checked against torch 2.13.0; anything else, or any other
    wrapper, gets `optimized` itself."""
    closure = dict(zip(optimized.__code__.co_freevars, optimized.__closure__ or ())) \
        if isinstance(optimized, types.FunctionType) else {}
    context = closure["self"].cell_contents if "self" in closure else None
    fn = closure["fn"].cell_contents if "fn" in closure else None
    if not isinstance(context, _eval_frame.OptimizeContext) or fn is None or context.fullgraph or context.export \
            or context.error_on_graph_break is not None or context._isolate_recompiles_id != -1 \
            or [hook.__name__ for hook in context.enter_exit_hooks] != ["call_on_enter"]:
        return optimized
    callback = context.callback
    default_stance = _eval_frame._stance
    if default_stance.stance != "default" or default_stance.backend is not None \
            or default_stance.skip_guard_eval_unsafe:
        return optimized
    eval_frame_module = _eval_frame
    fx_trace = torch.fx._symbolic_trace
    jit_tracing = torch._C._is_tracing
    tracing_context = torch._guards.TracingContext.try_get
    layer_depth = torch._C._functorch.get_dynamic_layer_stack_depth
    undo_layers_to = torch._C._functorch.pop_dynamic_layer_stack_and_undo_to_depth
    included, excluded = torch._C._dispatch_tls_local_include_set, torch._C._dispatch_tls_local_exclude_set
    force_dispatch_keys = torch._C._ForceDispatchKeyGuard
    set_eval_frame = torch._C._dynamo.eval_frame.set_eval_frame

    def steady_call(*args: Any) -> Any:
        if eval_frame_module._stance is not default_stance or fx_trace._is_fx_tracing_flag or jit_tracing() \
                or tracing_context() is not None:
            return optimized(*args)
        depth = layer_depth()
        prior = set_eval_frame(None)
        try:
            with force_dispatch_keys(included(), excluded()):
                set_eval_frame(callback)
                try:
                    return fn(*args)
                finally:
                    set_eval_frame(None)
                    undo_layers_to(depth)
        finally:
            set_eval_frame(prior)

    CARVE_CAPTURE.dynamo_entry(steady_call.__code__)
    CARVE_CAPTURE.carve_entry(steady_call.__code__)  # when it hands the call to `optimized`
    steady_call.__wrapped__ = optimized  # type: ignore[attr-defined]
    return steady_call


def draws_random_outside_modules(gm: torch.fx.GraphModule) -> bool:
    """Whether `gm` draws random numbers in the compiled function's own code, not in a module's
    forward (`ix = torch.randint(len(data) - block_size, (batch_size,))`, a data sampler in a
    training loop; a dropout layer's draw has the layer in its `nn_module_stack`)."""
    for node in gm.graph.nodes:
        if node.op in ("call_function", "call_method") and not node.meta.get("nn_module_stack"):
            if op_tables.op_name(node.target) in op_tables.RANDOM_OPS:
                return True
    return False


def returns_symbolic_float(gm: torch.fx.GraphModule) -> bool:
    """Whether Dynamo's graph hands back a Python float it computed from symbolic floats.

    Dynamo returns such a float (`R = r + gamma * R` with `r`, `R` floats that changed between
    calls) as `torch.scalar_tensor(<SymFloat>)`, read back with `.item()`. torch 2.13's Inductor
    returns the first trace's value of that tensor on every later call (aot_eager is exact), so
    the float, and every gradient computed from it, is silently wrong. Checked against torch
    2.13.0; tests/autograd/test_gradients_inductor.py catches its return.
    """
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in _SCALAR_TENSOR_TARGETS and node.args:
            value = node.args[0]
            example = value.meta.get("example_value") if isinstance(value, torch.fx.Node) else value
            if isinstance(example, torch.SymFloat):
                return True
    return False


_SCALAR_TENSOR_TARGETS = (torch.scalar_tensor, torch.ops.aten.scalar_tensor.default)


def dynamo_break_reasons() -> list:
    """Dynamo's process-wide list of graph-break reasons (GraphCompileReason: reason, user_stack)."""
    return torch._dynamo.utils.graph_break_reasons


def is_dynamo_compiling() -> bool:
    return torch.compiler.is_dynamo_compiling()


def dynamo_error_on_graph_break(flag: bool) -> Any:
    """torch's own error_on_graph_break setting, which Dynamo reads while it traces."""
    return torch._dynamo.error_on_graph_break(flag)


# Dynamo's break reasons, by the words they use, to carve's rule codes (first match wins).
_DYNAMO_REASON_RULES = (
    (("recompile limit",), "CRV020"),
    (("rnn, gru, or lstm",), "CRV024"),
    (("graph_break",), "CRV001"),
    (("skip_frame",), "CRV002"),
    (("print", "logging", "logger", "builtins.input", "open("), "CRV003"),
    (("generic_jump", "data-dependent branching"), "CRV005"),
    (("nonzero", "dynamic shape operator", "dynamic output shape", "unique", "masked_select"), "CRV009"),
    (("item", "_local_scalar_dense", "data-dependent", "data dependent", "tolist", "numpy", "__bool__",
      "tensor.__int__", "tensor.__float__", "unbacked"), "CRV004"),
    (("generator",), "CRV010"),
    (("backward", "autograd.grad"), "CRV012"),
    (("disallow",), "CRV015"),
    (("disable", "skip function", "skipped function"), "CRV013"),
)


def rule_for_dynamo_reason(reason: str) -> str:
    """carve's rule code for a graph break Dynamo reported (CRV017 when none fits)."""
    text = reason.lower()
    if "marked as skipped" in text and "`torch." in text:
        return "CRV015"  # how Dynamo names a torch function disallowed in graphs
    for words, code in _DYNAMO_REASON_RULES:
        if any(word in text for word in words):
            return code
    return "CRV017"


class _CarveCaptureConfig:
    """Dynamo settings for compiles that carve starts, applied only while such a compile runs.

    Dynamo skips guards on module hooks by default (`skip_nnmodule_hook_guards`), so a hook
    registered after the first call would be missed; carve wants every read guarded.

    A frame Dynamo compiles inside carve's call that is not a region's own (a callee it could
    not inline, a function it resumes in after a break) and fails to compile (Dynamo's own bug:
    torch 2.13 raises formatting `f"{x:.2f}"` of a float it made symbolic) has run nothing yet:
    Dynamo runs it as Python (`suppress_errors`, from that compile until carve's call returns),
    where torch.compile would raise after the region's earlier statements already ran. The
    region's own frame keeps carve's handling (dynamo_capture.DynamoCapture.failed).

    `compiles` counts Dynamo's compiles: a call that sees it unchanged compiled nothing, met no
    break and has nothing to report (the one read a steady-state call makes); `starts` says where
    a call's compiles began in the break reasons, the unsupported list and the compile time.
    """

    def __init__(self) -> None:
        # Code objects of carve's regions (the copies Dynamo captures), by id.
        self._region_codes: dict[int, types.CodeType] = {}
        # suppress_errors as it was before a compile of a nested frame set it (restore_after_call).
        self._suppress_saved: list[bool] = []
        # Code objects of Dynamo's entry (the wrapper `torch.compile` returns) and of carve's calls
        # of it, by id (a code object Dynamo generates may hold a dict, and not hash): a compile is
        # carve's when the nearest Dynamo entry on the stack was called by carve.
        self._dynamo_entries: dict[int, types.CodeType] = {}
        self._carve_entries: dict[int, types.CodeType] = {}
        self.compiles = 0  # Dynamo compiles started in this process (a cheap "did it compile?")
        # What each compile met that Dynamo does not support, in order (some never reach Dynamo's
        # list of graph-break reasons: `skip_frame()`, `retain_grad()`, which skip the frame).
        self.unsupported_met: list[str] = []
        self._unsupported_at_start: list[dict] = []
        # Wall time spent in Dynamo's compiles so far (tracing and the backend), and their starts.
        self.compile_seconds = 0.0
        self._started: list[float] = []
        self.starts: list[tuple[int, int, float]] = []
        self._saved: list = []
        from torch._dynamo.callback import callback_handler

        self._handler = callback_handler
        # Dynamo must never trace these: a backward that AOT autograd compiles lazily, run inside
        # a running compiled frame, calls them under the lock Dynamo's compile holds (a hang).
        self.on_start = torch._dynamo.disable(self._start)
        self._on_end = torch._dynamo.disable(self._end)
        # Dynamo's list of start callbacks: `on_start not in start_callbacks` is the cheap check
        # that they are still registered.
        self.start_callbacks = callback_handler.start_callbacks
        self.ensure_registered()

    def ensure_registered(self) -> None:
        """`torch._dynamo.reset()` drops every compile callback, carve's too: register again."""
        self.start_callbacks = self._handler.start_callbacks
        if self.on_start not in self.start_callbacks:
            self._handler.register_start_callback(self.on_start)
            self._handler.register_end_callback(self._on_end)

    def _start(self, _args: Any) -> None:
        # Where each compile started in the reports: a call that saw `compiles` go from k to more
        # reads what its compiles added from starts[k] on.
        self.starts.append((len(torch._dynamo.utils.graph_break_reasons), len(self.unsupported_met),
                            self.compile_seconds))
        self.compiles += 1
        self._started.append(time.perf_counter())
        self._unsupported_at_start.append(dict(torch._dynamo.utils.counters["unimplemented"]))
        config = torch._dynamo.config
        self._saved.append(config.skip_nnmodule_hook_guards)
        if not self._started_by_carve():
            self.restore_after_call()  # never left on for a compile of the user's own
        else:
            config.skip_nnmodule_hook_guards = False
            code = _code_being_compiled()
            if code is not None and id(code) not in self._region_codes and not self._suppress_saved:
                self._suppress_saved.append(config.suppress_errors)
                config.suppress_errors = True

    def region_code(self, code: types.CodeType) -> None:
        """`code` is a region's own, which carve's capture handles when Dynamo fails on it."""
        self._region_codes[id(code)] = code

    def restore_after_call(self) -> None:
        """After carve's Dynamo call (returned or raised): Dynamo's suppress_errors as it was."""
        if self._suppress_saved:
            torch._dynamo.config.suppress_errors = self._suppress_saved.pop()

    def dynamo_entry(self, code: types.CodeType) -> None:
        """`code` is Dynamo's entry, the wrapper its optimize returns."""
        self._dynamo_entries[id(code)] = code

    def carve_entry(self, code: types.CodeType) -> None:
        """`code` calls Dynamo's entry for carve (a region's call)."""
        self._carve_entries[id(code)] = code

    def _started_by_carve(self) -> bool:
        """Whether the compile starting now is of code carve handed to Dynamo (a region, or a frame
        its compiled code calls), not of a user's own torch.compile. Read once per compile, so a
        region's call keeps no depth counter of its own."""
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:
            if id(frame.f_code) in self._dynamo_entries:
                caller = frame.f_back
                return caller is not None and id(caller.f_code) in self._carve_entries
            frame = frame.f_back
        return False

    def _end(self, _args: Any) -> None:
        if self._started:
            self.compile_seconds += time.perf_counter() - self._started.pop()
        if self._unsupported_at_start:
            before = self._unsupported_at_start.pop()
            now = torch._dynamo.utils.counters["unimplemented"]
            self.unsupported_met.extend(reason for reason, count in now.items() if count != before.get(reason, 0))
        if self._saved:
            torch._dynamo.config.skip_nnmodule_hook_guards = self._saved.pop()


def _code_being_compiled() -> types.CodeType | None:
    """The code object of the frame Dynamo is compiling now (read from its `_compile` frame)."""
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if _is_dynamo_compile(frame):
            compiled = frame.f_locals.get("code")
            return compiled if isinstance(compiled, types.CodeType) else None
        frame = frame.f_back
    return None


def _is_dynamo_compile(frame: types.FrameType) -> bool:
    """Whether `frame` is Dynamo's `_compile` (convert_frame.py), whose `code` is the code it compiles."""
    return frame.f_code.co_name == "_compile" and frame.f_code.co_filename.endswith(_CONVERT_FRAME_FILE)


CARVE_CAPTURE = _CarveCaptureConfig()
# A backward donating its saved buffers cannot run twice: `loss.backward(retain_graph=True)` then a
# second backward, valid in eager, raises. AOT autograd may compile a backward lazily, at its first
# backward call, outside any carve call, so the setting is process-wide once carve is imported.
torch._functorch.config.donated_buffer = False


def global_hooks_state() -> tuple[Any, ...]:
    """What carve guards of the process-wide module hook registries (Dynamo does not)."""
    return tuple(tuple(hooks) for hooks in global_module_hooks())


def dynamo_unsupported_counts() -> dict[str, int]:
    """How often Dynamo has met each unsupported construct so far (a baseline for the next call)."""
    return dict(torch._dynamo.utils.counters["unimplemented"])


def dynamo_guard_failures(code: types.CodeType) -> list[str]:
    """Why Dynamo compiled `code` again, oldest first: at each recompile, the guard that failed in
    each cached version it tried (`0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8`)."""
    return [" ".join(str(reason).split("\nUser stack trace:")[0].split())
            for reason in torch._dynamo.utils.guard_failures.get(code, ())]


def dynamo_guards(code: types.CodeType) -> list[list[str]]:
    """The guards of each version Dynamo compiled of `code`, newest first, one line per guard
    (`TENSOR_MATCH: check_tensor(L['x'], ..., size=[3], stride=[1])`, `EQUALS_MATCH: L['n'] == 2`)."""
    entries = _eval_frame._debug_get_cache_entry_list(code)
    versions = []
    for entry in entries:
        lines = []
        for line in str(entry.guard_manager).splitlines():
            text = line.lstrip("| ").removeprefix("+- ")
            if text and not text.startswith(("GuardManager", "RootGuardManager", "TREE_GUARD_MANAGER")) \
                    and not text.startswith(("DictGuardManager", "DictSubclassGuardManager")):
                lines.append(text.split("  #", 1)[0].rstrip())
        versions.append(lines)
    return versions


def dynamo_unsupported_total() -> int:
    """How many unsupported constructs Dynamo has met so far, all kinds together."""
    return sum(torch._dynamo.utils.counters["unimplemented"].values())


def dynamo_skipped_frame(code: types.CodeType, baseline: dict[str, int]) -> str | None:
    """Why Dynamo skipped the frames of `code` for good (a graph break inside one of its loops),
    if it did since `baseline` (updated); Dynamo records this nowhere but its counters, keyed by
    name, file and line, which another code object of the same function may share."""
    marker = f"frame skipped: {torch._dynamo.exc.format_frame_info(code)}"
    for reason, count in torch._dynamo.utils.counters["unimplemented"].items():
        if marker in reason and count > baseline.get(reason, 0):
            baseline[reason] = count
            return reason
    return None


def is_observed_exception(error: BaseException) -> bool:
    """Dynamo stopped because the traced Python raises an exception of the user's."""
    return "Observed exception" in str(error).split("\n", 1)[0]


# Dynamo's errors for a break under fullgraph / error_on_graph_break.
# Also the base of carve's GraphBreakError: code written for torch.compile catches a fullgraph
# refusal as `torch._dynamo.exc.Unsupported`, and catches carve's the same way.
DynamoUnsupported = torch._dynamo.exc.Unsupported
DYNAMO_UNSUPPORTED = (DynamoUnsupported,)
# The backend raised while compiling a graph Dynamo handed it.
DYNAMO_BACKEND_FAILED = (torch._dynamo.exc.BackendCompilerFailed,)


def failed_compiling(error: BaseException, code: types.CodeType) -> bool:
    """Whether `error` is Dynamo's own failure compiling `code` itself (not a function it resumes
    in after a graph break): raised before `code` ran anything, so running it as written is
    safe, and gives eager's result or eager's own exception. (Dynamo's message names the user's
    line, "from user code", for its own bugs too: `torch.tensor(a_deque)` raises
    NotImplementedError inside Dynamo's tracing, not in the user's code.)"""
    if not isinstance(error, _DYNAMO_INTERNAL_ERRORS):
        return False
    traceback = error.__traceback__
    while traceback is not None:
        frame = traceback.tb_frame
        if _is_dynamo_compile(frame):
            return frame.f_locals.get("code") is code
        traceback = traceback.tb_next
    return False


_CONVERT_FRAME_FILE = os.path.join("_dynamo", "convert_frame.py")
# What Dynamo's own bugs raise: an internal assertion, or its wrapper for any internal error.
_DYNAMO_INTERNAL_ERRORS = (AssertionError, torch._dynamo.exc.InternalTorchDynamoError)


def backend_error_text(error: BaseException) -> str:
    """The backend's own exception, as `RuntimeError: backend exploded`."""
    inner = getattr(error, "inner_exception", None) or error.__cause__ or error
    return f"{type(inner).__name__}: {inner}"


# Raised while Dynamo traces, before the frame runs: the user's code fails on these inputs (a shape
# mismatch met on fake tensors); running it as written raises eager's own exception.
DYNAMO_TRACE_ERRORS = (torch._dynamo.exc.TorchRuntimeError,)
# Raised when a nested compile region (a layer compiled once) does not trace as one graph.
DYNAMO_NESTED_REGION_REFUSED = (torch._dynamo.exc.UncapturedHigherOrderOpError,
                                torch._dynamo.exc.InternalTorchDynamoError)


def is_nested_region_refusal(error: BaseException) -> bool:
    """Dynamo refused a nested compile region (an internal error only when it names the region's
    operator, `invoke_subgraph`: any other internal error is not carve's to answer)."""
    if isinstance(error, torch._dynamo.exc.UncapturedHigherOrderOpError):
        return True
    return "invoke_subgraph" in str(error)


def failed_in_resume_function(error: BaseException) -> bool:
    """The trace error came from a function Dynamo resumes in after a graph break: the part of the
    call before the break already ran (its graph and replayed side effects)."""
    return "torch_dynamo_resume_in_" in str(error)


# ---- is_compiling ----------------------------------------------------------------------------

def _error_on_graph_break_reader() -> Callable[[], bool]:
    reader = getattr(_eval_frame, "_get_error_on_graph_break", None)
    return reader if reader is not None else (lambda: False)


# torch._dynamo.error_on_graph_break's current setting (read on every region call).
torch_error_on_graph_break = _error_on_graph_break_reader()


# ---- markers ---------------------------------------------------------------------------------

class Marker(enum.Enum):
    NONE = "none"
    GRAPH_BREAK = "graph_break"
    SKIP_FRAME = "skip_frame"
    DISABLED = "disabled"
    DISABLED_NONRECURSIVE = "disabled_nonrecursive"
    NONSTRICT_TRACE = "nonstrict_trace"
    ALLOW_IN_GRAPH = "allow_in_graph"
    DISALLOWED = "disallowed"
    CUSTOM_OP = "custom_op"
    IS_COMPILING = "is_compiling"
    ERROR_ON_GRAPH_BREAK = "error_on_graph_break"


_torch_graph_break = torch._dynamo.graph_break
_torch_skip_frame = torch._dynamo.skip_frame
_IS_COMPILING_FNS = {
    id(f): f for f in (markers.is_compiling, torch.compiler.is_compiling, torch._dynamo.is_compiling,
                       getattr(torch._dynamo.external_utils, "is_compiling", None),
                       getattr(torch._utils, "is_compiling", None), torch.compiler.is_dynamo_compiling)
    if f is not None
}

_ErrorOnGraphBreakCM = getattr(_decorators, "ErrorOnGraphBreakDecoratorContextManager", None)


def _registry_version() -> tuple[int, int, int, int]:
    return (markers.registry_version, len(_trace_rules._allowed_callable_ids()),
            len(_trace_rules._disallowed_callable_ids()), len(_trace_rules._nonstrict_trace_callable_ids()))


_cache: dict[int, tuple[Any, "Marker"]] = {}
_cache_version: tuple[int, int, int, int] = (-1, -1, -1, -1)


def classify_callable(obj: Any) -> Marker:
    """Which carve or torch marker `obj` is (or carries), Marker.NONE if none.

    Cached by id; the cache entry holds the object so the id cannot be reused,
    and the whole cache is dropped when any allow/disallow registry changes.
    """
    global _cache_version
    version = _registry_version()
    if version != _cache_version:
        _cache.clear()
        _cache_version = version
    hit = _cache.get(id(obj))
    if hit is not None and hit[0] is obj:
        return hit[1]
    result = _classify(obj)
    # Bound methods are created afresh on each attribute access: caching them only fills memory.
    if not hasattr(obj, "__self__") or isinstance(obj, type(print)):
        if len(_cache) > 4096:
            _cache.clear()
        _cache[id(obj)] = (obj, result)
    return result


def _classify(obj: Any) -> Marker:
    if obj is markers.graph_break or obj is _torch_graph_break:
        return Marker.GRAPH_BREAK
    if obj is markers.skip_frame or obj is _torch_skip_frame:
        return Marker.SKIP_FRAME
    if id(obj) in _IS_COMPILING_FNS:
        return Marker.IS_COMPILING
    if obj is markers.error_on_graph_break or obj is torch._dynamo.error_on_graph_break:
        return Marker.ERROR_ON_GRAPH_BREAK
    if isinstance(obj, markers.ErrorOnGraphBreak) or (
            _ErrorOnGraphBreakCM is not None and isinstance(obj, _ErrorOnGraphBreakCM)):
        return Marker.ERROR_ON_GRAPH_BREAK
    if getattr(obj, "__carve_error_on_graph_break__", None) is not None:
        return Marker.ERROR_ON_GRAPH_BREAK
    # Explicit carve registrations win over torch's.
    if markers.is_disallowed_in_graph(obj):
        return Marker.DISALLOWED
    if markers.is_allowed_in_graph(obj):
        return Marker.ALLOW_IN_GRAPH
    carve_disable = getattr(obj, "__carve_disable__", None)
    if carve_disable is not None:
        return Marker.DISABLED if carve_disable else Marker.DISABLED_NONRECURSIVE
    if getattr(obj, "__carve_nonstrict_trace__", False):
        return Marker.NONSTRICT_TRACE
    try:
        torch_disable = getattr(obj, "_torchdynamo_disable", False)
    except Exception:
        torch_disable = False
    if torch_disable is True:
        recursive = getattr(obj, "_torchdynamo_disable_recursive", True)
        return Marker.DISABLED if recursive is not False else Marker.DISABLED_NONRECURSIVE
    if isinstance(obj, torch._library.custom_ops.CustomOpDef):
        return Marker.CUSTOM_OP
    if isinstance(obj, (torch._ops.OpOverloadPacket, torch._ops.OpOverload)):
        qualified = cast(str, getattr(obj, "_qualified_op_name", None) or obj._schema.name)  # `ns::name`
        ns = qualified.split("::")[0]
        if ns not in ("aten", "prim", "prims"):
            return Marker.CUSTOM_OP
        return Marker.NONE
    try:
        oid = id(obj)
        if oid in _trace_rules._nonstrict_trace_callable_ids:
            return Marker.NONSTRICT_TRACE
        if oid in _trace_rules._disallowed_callable_ids:
            return Marker.DISALLOWED
        if oid in _trace_rules._allowed_callable_ids:
            return Marker.ALLOW_IN_GRAPH
    except Exception:  # pragma: no cover
        pass
    return Marker.NONE


# ---- process-wide module hooks ------------------------------------------------------------------

def global_module_hooks() -> tuple[Any, ...]:
    """torch's process-wide module hook registries (register_module_forward_hook & co.)."""
    import torch.nn.modules.module as module_impl

    names = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
             "_global_backward_pre_hooks", "_global_module_registration_hooks")
    return tuple(getattr(module_impl, name) for name in names if hasattr(module_impl, name))
