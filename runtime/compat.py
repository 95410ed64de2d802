"""Everything carve knows about torch's internals, in one place.

carve is its own frontend, but it must agree with torch.compile on markers
written for torch (`torch._dynamo.graph_break`, `torch.compiler.disable`,
`allow_in_graph`, ...), find backends by name the way torch.compile does, and
make `torch.compiler.is_compiling()` answer True while it traces. Those need
private torch APIs (`torch._dynamo.trace_rules` registries, the
`_torchdynamo_disable` attributes set by `DisableContext`, the
`torch.compiler._is_compiling_flag` global...). They change between torch
releases, so they live only here; this file is what to fix on a torch upgrade
(written against torch 2.13).
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import types
import warnings
from collections.abc import Callable, Iterator
from typing import Any, cast

import torch
import torch._dynamo  # noqa: F401  (backends, markers and registries live here)
import torch.compiler
from torch._dynamo import eval_frame as _eval_frame
from torch._dynamo import trace_rules as _trace_rules
from torch._dynamo import decorators as _decorators

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
    return _eval_frame.optimize(backend=backend, nopython=fullgraph, dynamic=dynamic,
                                recompile_limit=recompile_limit)(fn)


def dynamo_break_reasons() -> list:
    """Dynamo's process-wide list of graph-break reasons (GraphCompileReason: reason, user_stack)."""
    return torch._dynamo.utils.graph_break_reasons


def is_dynamo_compiling() -> bool:
    return torch.compiler.is_dynamo_compiling()


def dynamo_error_on_graph_break(flag: bool) -> Any:
    """torch's own error_on_graph_break setting, which Dynamo reads while it traces."""
    return torch._dynamo.error_on_graph_break(flag)


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_CARVE_RUNTIME_DIR = os.path.dirname(__file__) + os.sep
_STDLIB_DIR = os.path.dirname(os.__file__) + os.sep


def is_user_file(filename: str) -> bool:
    """A frame of the user's program: not torch, not carve's runtime, not the standard library."""
    return not (filename.startswith((_TORCH_DIR, _CARVE_RUNTIME_DIR, _STDLIB_DIR)) or filename.startswith("<"))


# Dynamo's break reasons, by the words they use, to carve's rule codes (first match wins).
_DYNAMO_REASON_RULES = (
    (("graph_break",), "CRV001"),
    (("skip_frame",), "CRV002"),
    (("print", "logging", "logger", "builtins.input", "open("), "CRV003"),
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
    for words, code in _DYNAMO_REASON_RULES:
        if any(word in text for word in words):
            return code
    return "CRV017"


class _CarveCaptureConfig:
    """Dynamo settings for compiles that carve starts, applied only while such a compile runs.

    Dynamo skips guards on module hooks by default (`skip_nnmodule_hook_guards`), so a hook
    registered after the first call would be missed; carve wants every read guarded.
    """

    def __init__(self) -> None:
        self.active = 0  # depth of carve's Dynamo calls in progress (compiles start inside them)
        self.compiles = 0  # Dynamo compiles started in this process (a cheap "did it compile?")
        self._saved: list = []
        from torch._dynamo.callback import callback_handler

        self._handler = callback_handler
        # Dynamo must never trace these: a backward that AOT autograd compiles lazily, run inside
        # a running compiled frame, calls them under the lock Dynamo's compile holds (a hang).
        self._on_start = torch._dynamo.disable(self._start)
        self._on_end = torch._dynamo.disable(self._end)
        self.ensure_registered()

    def ensure_registered(self) -> None:
        """`torch._dynamo.reset()` drops every compile callback, carve's too: register again."""
        if self._on_start not in self._handler.start_callbacks:
            self._handler.register_start_callback(self._on_start)
            self._handler.register_end_callback(self._on_end)

    def _start(self, _args: Any) -> None:
        self.compiles += 1
        config = torch._dynamo.config
        self._saved.append(config.skip_nnmodule_hook_guards)
        if self.active:
            config.skip_nnmodule_hook_guards = False

    def _end(self, _args: Any) -> None:
        if self._saved:
            torch._dynamo.config.skip_nnmodule_hook_guards = self._saved.pop()


CARVE_CAPTURE = _CarveCaptureConfig()


def global_hooks_state() -> tuple[Any, ...]:
    """What carve guards of the process-wide module hook registries (Dynamo does not)."""
    return tuple(tuple(hooks) for hooks in global_module_hooks())


def dynamo_unsupported_counts() -> dict[str, int]:
    """How often Dynamo has met each unsupported construct so far (a baseline for the next call)."""
    return dict(torch._dynamo.utils.counters["unimplemented"])


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


def mark_dynamic_hint(tensor: torch.Tensor, dim: int) -> None:
    """Ask Dynamo to trace `dim` of `tensor` as a symbolic size (it may still specialise it)."""
    torch._dynamo.maybe_mark_dynamic(tensor, dim)


def has_dynamic_marks(tensor: torch.Tensor) -> bool:
    """The user marked a dimension of `tensor` with torch._dynamo.mark_dynamic (or carve's)."""
    return bool(getattr(tensor, "_dynamo_dynamic_indices", None))


# Dynamo's errors for a break under fullgraph / error_on_graph_break.
# Also the base of carve's GraphBreakError: code written for torch.compile catches a fullgraph
# refusal as `torch._dynamo.exc.Unsupported`, and catches carve's the same way.
DynamoUnsupported = torch._dynamo.exc.Unsupported
DYNAMO_UNSUPPORTED = (DynamoUnsupported,)
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

def set_torch_compiling_flag(value: bool) -> bool:
    """Set what torch.compiler.is_compiling() answers; returns the previous value."""
    old = torch.compiler._is_compiling_flag
    torch.compiler._is_compiling_flag = value
    return old


def torch_error_on_graph_break() -> bool:
    """torch._dynamo.error_on_graph_break's current setting (a global in torch)."""
    try:
        return bool(_eval_frame._get_error_on_graph_break())
    except Exception:  # pragma: no cover - older/newer torch
        return False


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

# Dummy instances reveal the code objects of torch's marker wrappers.
_TORCH_DISABLE_CODE = torch._dynamo.disable(lambda: None).__code__
_TORCH_DISABLE_NONRECURSIVE_CODE = getattr(
    _decorators, "_nonrecursive_disable_wrapper_code",
    torch._dynamo.disable(lambda: None, recursive=False).__code__)
_keep_nonstrict_dummy = torch._dynamo.nonstrict_trace(lambda: None)
_TORCH_NONSTRICT_CODE = _keep_nonstrict_dummy.__code__

_AUTOGRAD_FUNCTION_APPLY_CODE = torch.autograd.Function.apply.__func__.__code__  # type: ignore[attr-defined]


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


# ---- what the tracer recognises by code object (sys.setprofile 'call' events) -----------------

CODE_MARKERS: dict[Any, Marker] = {
    markers.MARKER_CODES["graph_break"]: Marker.GRAPH_BREAK,
    markers.MARKER_CODES["skip_frame"]: Marker.SKIP_FRAME,
    markers.MARKER_CODES["disable_recursive"]: Marker.DISABLED,
    markers.MARKER_CODES["disable_nonrecursive"]: Marker.DISABLED_NONRECURSIVE,
    markers.MARKER_CODES["nonstrict_trace"]: Marker.NONSTRICT_TRACE,
    _torch_graph_break.__code__: Marker.GRAPH_BREAK,
    _torch_skip_frame.__code__: Marker.SKIP_FRAME,
    _TORCH_DISABLE_CODE: Marker.DISABLED,
    _TORCH_DISABLE_NONRECURSIVE_CODE: Marker.DISABLED_NONRECURSIVE,
    _TORCH_NONSTRICT_CODE: Marker.NONSTRICT_TRACE,
}

AUTOGRAD_FUNCTION_APPLY_CODE = _AUTOGRAD_FUNCTION_APPLY_CODE


def disabled_inner_name(frame: Any) -> str:
    fn = frame.f_locals.get("fn")
    return getattr(fn, "__qualname__", getattr(fn, "__name__", "<function>"))


def _logging_codes() -> dict[Any, str]:
    codes = {}
    for name in ("debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"):
        for owner in (logging.Logger, logging.LoggerAdapter, logging):
            f = getattr(owner, name, None)
            code = getattr(f, "__code__", None)
            if code is not None:
                codes[code] = f"logging.{name}()"
    return codes


# Python-level I/O: calls to these code objects are CRV003.
IO_CODES: dict[Any, str] = _logging_codes()
# C-level I/O builtins (sys.setprofile 'c_call' events).
IO_BUILTINS: dict[Any, str] = {
    print: "print()", input: "input()", open: "open()", breakpoint: "breakpoint()",
    warnings.warn: "warnings.warn()", warnings.warn_explicit: "warnings.warn_explicit()",
}


# ---- torch's C-level state the fast path reads and guards ----------------------------------------

# The TorchFunctionMode / TorchDispatchMode stacks (length, mode at index) and the functorch
# transform in force: a mode or transform changes what ops make, so a recorded graph needs none.
function_mode_count = torch._C._len_torch_function_stack
dispatch_mode_count = torch._C._len_torch_dispatch_stack
function_mode_at = torch._C._get_function_stack_at
dispatch_mode_at = torch._C._get_dispatch_stack_at
functorch_transform = torch._C._functorch.peek_interpreter_stack
# The ATen functions torch re-exports as `torch.*` (what the tracer records without a Python frame).
ATEN_FUNCTIONS = torch._C._VariableFunctions
# The C base of torch.Tensor (methods found on it are tensor methods) and grad mode's setter.
TENSOR_BASE = torch._C.TensorBase
set_grad_enabled = torch._C._set_grad_enabled


def modes_active() -> bool:
    """A torch function/dispatch mode or a functorch transform is in force."""
    return bool(function_mode_count() or dispatch_mode_count() or functorch_transform() is not None)


# ---- global torch state guard ------------------------------------------------------------------

class _PyGlobalState:
    """Fallback for GlobalStateGuard: grad mode, autocast, default dtype, deterministic algorithms."""

    def __init__(self) -> None:
        self.state = self._now()

    @staticmethod
    def _now() -> tuple:
        return (torch.is_grad_enabled(), torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"),
                torch.get_default_dtype(), torch.are_deterministic_algorithms_enabled())

    def check(self) -> bool:
        return self._now() == self.state

    def reason(self) -> str:
        names = ("grad_mode", "autocast(cpu)", "autocast(cuda)", "default_dtype", "deterministic_algorithms")
        return ", ".join(n for n, a, b in zip(names, self.state, self._now()) if a != b)


def global_state_guard() -> Any:
    """A snapshot of torch's global state (grad mode, autocast, default dtype, ...) with .check()/.reason().

    torch's own `GlobalStateGuard` (what Dynamo uses) checks all of it in one C++ call.
    """
    try:
        from torch._C._dynamo.guards import GlobalStateGuard
        return GlobalStateGuard()
    except Exception:  # pragma: no cover
        return _PyGlobalState()


# Calls whose result a graph would freeze (a cached graph returns the trace-time value).
import random as _random
import time as _time

FROZEN_VALUE_BUILTINS: dict[Any, str] = {
    _time.time: "time.time()", _time.perf_counter: "time.perf_counter()", _time.monotonic: "time.monotonic()",
    _time.time_ns: "time.time_ns()", _time.perf_counter_ns: "time.perf_counter_ns()",
}
# C functions that change torch's global state: a graph replays tensor ops only.
_GLOBAL_STATE_SETTERS: dict[Any, str] = {
    torch._C._set_default_dtype: "torch.set_default_dtype()",
}
_GENERATOR_STATE_METHODS = {"set_state": "torch.set_rng_state()", "manual_seed": "torch.manual_seed()",
                            "seed": "torch.seed()"}


def global_module_hooks() -> tuple[Any, ...]:
    """torch's process-wide module hook registries (register_module_forward_hook & co.)."""
    import torch.nn.modules.module as module_impl

    names = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
             "_global_backward_pre_hooks", "_global_module_registration_hooks")
    return tuple(getattr(module_impl, name) for name in names if hasattr(module_impl, name))


def global_state_setter(function: Any, owner: Any) -> str | None:
    """What a C call inside a trace changes of torch's global state (None: nothing we know of)."""
    try:
        found = _GLOBAL_STATE_SETTERS.get(function)
    except TypeError:
        return None
    if found is None and isinstance(owner, torch._C.Generator):
        found = _GENERATOR_STATE_METHODS.get(getattr(function, "__name__", ""))
    return found


def is_numpy_random(function: Any, owner: Any) -> bool:
    """NumPy's random functions (methods of a generator, some compiled with Cython): values a
    graph would freeze."""
    if owner is not None and type(owner).__module__.startswith("numpy.random"):
        return True
    return (getattr(function, "__module__", None) or "").startswith("numpy.random")


RANDOM_INSTANCE = _random._inst  # the module-level random.random() & co. are its bound methods
