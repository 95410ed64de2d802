"""Real-input tracing of a graph region into a torch.fx graph.

`trace_region(fn, args)` runs `fn(*args)` once, for real, and records every
torch-level operation it performs into an FX graph:

    def region(x, w):            graph():
        y = x @ w                    x = placeholder; w = placeholder
        return y.relu() + 1          matmul = torch.matmul(x, w)
                                     relu = call_method relu(matmul); add = call_method __add__(relu, 1)
                                     return (add,)

The first call's result *is* this execution's result: nothing runs twice, so
side effects are never doubled and autograd sees exactly the eager operations.

How it records: a `TorchFunctionMode` sees every torch function, Tensor method
and operator (module calls reach it through `F.linear` & co.); tensors map to
FX nodes by `id` (the tracer keeps them alive so ids stay unique). A
`sys.setprofile` hook, installed only during the trace, sees Python-level calls
to markers (graph_break, skip_frame, disabled functions, nonstrict_trace,
allow_in_graph functions, autograd.Function.apply) and C calls to I/O builtins.

What it refuses to freeze into a graph (DESIGN.md, "Soundness"): anything that
reads tensor data into Python (CRV004), data-dependent shapes (CRV009), calls
to disallowed or disabled functions (CRV015/CRV013), explicit breaks
(CRV001/CRV002), I/O (CRV003), backward calls (CRV012), and anything it cannot
represent faithfully, such as a tensor that is not a graph input or a global
state change it cannot replay (CRV017). On such a break the tracer records the
first `BreakEvent`, stops recording and lets the function run on eagerly to
completion (the result is still right), or raises `GraphBreakError` when graph
breaks are errors. Tensors are never baked into the graph as constants:
arguments, module parameters/buffers and tensors read from the region's
globals and closure cells are graph inputs with a `Source` telling later calls
where to fetch them.
"""

from __future__ import annotations

import dis
import operator
import os
import sys
from dataclasses import dataclass, field
from collections.abc import Callable
from typing import Any

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch.overrides import TorchFunctionMode

from carve.rewriters import op_tables  # plain data: no libcst, no torch

from . import compat, state
from .compat import Marker
from .errors import BreakEvent, GraphBreakError, StackEntry, source_line


# ---- sources: where a graph input comes from on later calls ---------------------------------

@dataclass(frozen=True)
class Source:
    """Where a value lives, relative to a call of the region.

    root: ("arg", i) | ("global", name) | ("closure", name)
    path: steps from the root: ("item", key), ("attr", name), ("module", name),
          ("param", name), ("buffer", name).
    Example: a Linear's weight inside args[0] is
    Source(("arg", 0), (("module", "layer"), ("param", "weight"))).
    """

    root: tuple[str, Any]
    path: tuple[tuple[str, Any], ...] = ()

    def child(self, kind: str, key: Any) -> "Source":
        return Source(self.root, self.path + ((kind, key),))

    def name(self) -> str:
        kind, key = self.root
        text = f"args[{key}]" if kind == "arg" else key
        for step, k in self.path:
            text += f"[{k!r}]" if step == "item" else f".{k}"
        return text


_CONST_TYPES = (int, float, bool, complex, str, bytes, type(None), torch.dtype, torch.device,
                torch.memory_format, torch.layout, torch.Size, slice, type(Ellipsis))

_RETURN_VALUE = dis.opmap["RETURN_VALUE"]
_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_RUNTIME_DIR = os.path.dirname(__file__) + os.sep
_STDLIB_DIR = os.path.dirname(os.__file__) + os.sep

# Tensor -> Python conversions (CRV004): what the user writes and what Python calls underneath.
_CONVERSIONS = op_tables.CONVERSION_METHODS | op_tables.CONVERSION_PROTOCOL
# Ops whose output shape depends on tensor data (CRV009).
_DATA_DEPENDENT = op_tables.DATA_DEPENDENT_SHAPE_METHODS | op_tables.UNBACKED_SIZE_METHODS
# Calls that run the autograd engine (CRV012): `x.backward()`, `torch.autograd.grad(...)`.
_AUTOGRAD = op_tables.AUTOGRAD_METHODS | {name.rsplit(".", 1)[1] for name in op_tables.AUTOGRAD_FUNCTIONS}
# Tensor methods whose effect is on autograd's Python-visible state, not on a value: a replayed
# graph's outputs are new tensors (aot_eager, Inductor) that would not carry it (CRV017).
_AUTOGRAD_STATE = {"retain_grad", "register_hook", "register_post_accumulate_grad_hook", "requires_grad_"}
# Tensor metadata the guards pin down (dtype, device, shape, strides/contiguity, requires_grad):
# reading it yields Python values that stay valid under the guards.
_METADATA = {"size", "dim", "ndimension", "numel", "nelement", "stride", "is_contiguous", "element_size",
             "is_floating_point", "is_complex", "is_signed", "get_device", "__len__", "type",
             "shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "is_cpu", "is_sparse",
             "layout", "is_quantized", "is_meta", "is_mps", "is_xpu", "itemsize", "is_tensor",
             "result_type", "promote_types", "can_cast", "is_grad_enabled", "get_default_dtype",
             "is_autocast_enabled", "is_inference_mode_enabled", "is_inference", "__instancecheck__"}
# Attribute reads that return a view of the tensor: recorded as getattr nodes.
_VIEW_ATTRS = {"T", "mT", "H", "mH", "real", "imag"}

_TENSOR_OWNERS = (compat.TENSOR_BASE, torch.Tensor)
_set_grad_enabled = compat.set_grad_enabled


def _plain_scalar(value: Any) -> Any:
    if type(value) in (bool, int, float, complex):
        return value
    # Typed as plain `type`s: mypy would otherwise check `plain(value)` for every pairing.
    plains: tuple[type, ...] = (bool, int, float, complex)
    for plain in plains:
        if isinstance(value, plain) and type(value) is not plain:
            return plain(value)
    return value


def _func_name(func: Any) -> str:
    if type(func).__name__ == "method-wrapper":  # property getter: Tensor.shape.__get__
        return getattr(getattr(func, "__self__", None), "__name__", "")
    return getattr(func, "__name__", "")


def _is_tensor_method(func: Any) -> bool:
    owner = getattr(func, "__objclass__", None)
    if owner is not None:
        return owner in _TENSOR_OWNERS
    qualname = getattr(func, "__qualname__", "")
    return qualname.startswith(("Tensor.", "TensorBase.")) and getattr(func, "__module__", "") in (
        "torch._tensor", "torch", "torch._C", None)


@dataclass
class OutputSpec:
    """How to rebuild `fn`'s return value from the graph's outputs.

    leaves[i] is ("out", k) for the graph's k-th output, ("const", value), or ("arg", i) for
    the region's i-th argument itself (a container handed back by identity).
    kind: "tensor" (a bare tensor: output 0), "tuple" (a plain tuple of graph outputs
    in order), or "tree" (general: unflatten with treespec).
    """

    treespec: Any
    leaves: list[tuple[str, Any]]
    kind: str


@dataclass
class GuardInputs:
    """What the tracer saw that guards must pin down (consumed by guards.GuardSet)."""

    args: tuple
    # (source, value) for every value found walking args, globals and closure cells
    # (tensors, modules, containers, constants, other objects).
    values: list[tuple[Source, Any]] = field(default_factory=list)
    # Names of fn's globals the region reads, with their values at trace time (missing names skipped).
    global_names: dict[str, Any] = field(default_factory=dict)
    # Globals read by callees traced through: (globals dict, name, value).
    callee_globals: list[tuple[dict, str, Any]] = field(default_factory=list)
    closure: dict[str, Any] = field(default_factory=dict)
    # torch global state when the trace started.
    global_state: Any = None
    grad_enabled: bool = True
    inference_mode: bool = False
    default_dtype: Any = None


@dataclass
class TraceResult:
    graph_module: fx.GraphModule | None
    input_sources: list[Source]
    output_spec: OutputSpec | None
    result: Any
    break_event: BreakEvent | None
    op_count: int
    guard_inputs: GuardInputs
    example_inputs: list[torch.Tensor] = field(default_factory=list)


# The rule of a region carve's tracer cannot record (Dynamo can).
UNTRACEABLE = "CRV017"


class _Untraceable(Exception):
    """Internal: stop recording with CRV017 (never escapes the tracer)."""


def _user_frame(filename: str) -> bool:
    return not (filename.startswith(_TORCH_DIR) or filename.startswith(_RUNTIME_DIR)
                or filename.startswith(_STDLIB_DIR) or filename.startswith("<frozen"))


def _nested_names(code: Any) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if hasattr(const, "co_names"):
            names |= _nested_names(const)
    return names


class _Tracer(TorchFunctionMode):
    def __init__(self, fn: Callable[..., Any], stop_on_break: bool) -> None:
        super().__init__()
        self.fn = fn
        self.fn_code = fn.__code__
        self.stop_on_break = stop_on_break
        self.eogb_depth = state.error_on_graph_break_depth()
        self.torch_eogb = compat.torch_error_on_graph_break()
        self.graph = fx.Graph()
        self.env: dict[int, fx.Node] = {}
        self.keep: list[Any] = []  # everything whose id is a key somewhere stays alive
        self.touched: set = set()
        self.recording = True
        self.break_event: BreakEvent | None = None
        self.op_count = 0
        self.opaque_frame: Any = None
        self.opaque_call: tuple[Any, tuple, dict] | None = None
        self.nonstrict_frames: list[Any] = []
        self.code_kinds: dict[Any, Any] = {}
        self.prev_profile: Any = None
        self.saved_tracing = 0
        self.saved_torch_flag = False
        self.active = False
        self.grad_enabled = torch.is_grad_enabled()
        self.inference = torch.is_inference_mode_enabled()
        self.autocast = (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda"))
        self.callee_globals: dict[tuple[int, str], tuple[dict, str, Any]] = {}
        self.sources: list[Source] = []
        self.placeholders: list[fx.Node] = []
        self.lifted: list[bool] = []
        self.input_tensors: list[torch.Tensor] = []
        self.in_handler = 0
        # Tensors a nonstrict_trace'd function reads without taking them as inputs: constants,
        # as torch's nonstrict_trace treats them (name -> tensor, held by the GraphModule).
        self.constants: dict[str, torch.Tensor] = {}

    # ---- inputs -----------------------------------------------------------------------------

    def add_input(self, tensor: torch.Tensor, source: Source, lifted: bool) -> None:
        if id(tensor) in self.env:
            return  # the same tensor reached twice (tied weights, an arg also a global)
        name = "in_" + "".join(c if c.isalnum() else "_" for c in source.name())
        node = self.graph.placeholder(name)
        self.env[id(tensor)] = node
        self.keep.append(tensor)
        self.sources.append(source)
        self.placeholders.append(node)
        self.lifted.append(lifted)
        self.input_tensors.append(tensor)

    # ---- start / stop -----------------------------------------------------------------------

    def start(self) -> None:
        self.saved_tracing = state.set_tracing(state.tracing_depth() + 1)
        self.saved_torch_flag = compat.set_torch_compiling_flag(True)
        self.prev_profile = sys.getprofile()
        self.__enter__()
        sys.setprofile(self._profile)
        self.active = True

    def stop(self) -> None:
        """Stop recording for good: the rest of the function runs eagerly."""
        self.recording = False
        if self.active:
            self.active = False
            sys.setprofile(self.prev_profile)
            state.set_tracing(self.saved_tracing)
            compat.set_torch_compiling_flag(self.saved_torch_flag)

    def finish(self) -> None:
        self.stop()
        self.__exit__(None, None, None)

    # ---- breaks -----------------------------------------------------------------------------

    def _should_raise(self) -> bool:
        if state.fullgraph_active():
            return True
        if state.error_on_graph_break_depth() > self.eogb_depth:
            return state.error_on_graph_break_setting()
        if compat.torch_error_on_graph_break() != self.torch_eogb:
            return compat.torch_error_on_graph_break()
        return self.stop_on_break

    def _event(self, code: str, message: str, frame: Any) -> BreakEvent:
        frames = []
        f = frame
        while f is not None and f.f_code is not self.fn_code:
            frames.append(f)
            f = f.f_back
        if f is not None:
            frames.append(f)
        frames.reverse()  # region frame first
        stack: list[StackEntry] = []
        for fr in frames:
            filename = fr.f_code.co_filename
            if fr is f or _user_frame(filename):
                stack.append((filename, fr.f_lineno, fr.f_code.co_name, source_line(filename, fr.f_lineno)))
        if not stack:
            filename = self.fn_code.co_filename
            stack.append((filename, self.fn_code.co_firstlineno, self.fn_code.co_name,
                          source_line(filename, self.fn_code.co_firstlineno)))
        filename, lineno = stack[0][0], stack[0][1]
        return BreakEvent(code, message, filename, lineno, stack)

    def graph_break(self, code: str, message: str, frame: Any) -> None:
        if not self.recording:
            return
        event = self._event(code, message, frame)
        self.break_event = event
        # CRV017 is carve's tracer reaching its own limit, not a graph break: the region runs on
        # eagerly and Dynamo captures it from the next call, also under fullgraph.
        raise_it = code != UNTRACEABLE and self._should_raise()
        self.stop()
        if raise_it:
            raise GraphBreakError(event)

    # ---- TorchFunctionMode ------------------------------------------------------------------

    def __torch_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if not self.recording or self.opaque_frame is not None:
            return func(*args, **kwargs)
        try:
            plan = self._plan(func, args, kwargs)
        except _Untraceable as e:
            self.graph_break(UNTRACEABLE, str(e), sys._getframe(1))
            plan = None
        # Run the operation for real, exactly once; nothing in the handler is recorded
        # (the mode is off inside it) and profile events from torch's own Python are ignored.
        self.in_handler += 1
        try:
            if plan is not None and plan[0] == "iter":
                parts = args[0].unbind(0)
                self._emit(("call_method",) + plan[1:], parts)
                return iter(parts)
            result = func(*args, **kwargs)
        finally:
            self.in_handler -= 1
        if plan is None or not self.recording:
            return result
        if isinstance(result, torch.Tensor) and result.requires_grad and result.is_leaf and not any(
                result is arg for arg in args):
            # `torch.zeros((), requires_grad=True)`: a new leaf of autograd, which a graph run
            # under AOT autograd returns detached (its gradient would never be seen). An input
            # handed back (`p.float()` of a float parameter, `p -= g` under no_grad) is not new.
            self.graph_break(UNTRACEABLE, f"{_func_name(func)}() makes a tensor that requires grad "
                             "(a new autograd leaf)", sys._getframe(1))
            return result
        try:
            self._emit(plan, result)
        except _Untraceable as e:
            self.graph_break(UNTRACEABLE, str(e), sys._getframe(1))
        return result

    def _plan(self, func: Any, args: tuple, kwargs: dict) -> Any:
        """Decide what to do with an op before it runs: break, ignore (metadata) or record.

        Returns None (nothing to record) or (kind, target, node_args, node_kwargs, result_hook).
        """
        name = _func_name(func)
        tensor_method = _is_tensor_method(func)
        if name in _CONVERSIONS and (tensor_method or name in ("equal", "allclose", "is_nonzero")):
            what = f"Tensor.{name}()" if tensor_method else f"torch.{name}()"
            kind = {"__bool__": "bool()", "__int__": "int()", "__float__": "float()",
                    "__index__": "operator.index()", "__format__": "format()", "__repr__": "repr()",
                    "__str__": "str()"}.get(name)
            message = (f"{kind} of a tensor reads its value into Python" if kind else
                       f"{what} converts a tensor to a Python value")
            self.graph_break("CRV004", message, sys._getframe(2))
            return None
        if name in _DATA_DEPENDENT or (name == "repeat_interleave" and len(args) > 1
                                       and isinstance(args[1], torch.Tensor)) or (
                name == "where" and len(args) + len(kwargs) == 1) or (
                name == "__getitem__" and _has_bool_index(args[1] if len(args) > 1 else None)):
            what = "boolean-mask indexing" if name == "__getitem__" else f"{name}()"
            self.graph_break("CRV009", f"{what} produces a tensor whose shape depends on the data",
                             sys._getframe(2))
            return None
        if name in _AUTOGRAD and (tensor_method or func is torch.autograd.grad):
            self.graph_break("CRV012", f"{name}() runs the autograd engine", sys._getframe(2))
            return None
        if name in _AUTOGRAD_STATE and tensor_method:
            raise _Untraceable(f"Tensor.{name}() changes autograd state a graph cannot replay")
        marker = compat.classify_callable(func)
        if marker is Marker.DISALLOWED:
            self.graph_break("CRV015", f"{getattr(func, '__qualname__', name)} is disallowed in graphs",
                             sys._getframe(2))
            return None
        if marker is Marker.GRAPH_BREAK or marker is Marker.SKIP_FRAME:
            if not self.nonstrict_frames:
                code = "CRV001" if marker is Marker.GRAPH_BREAK else "CRV002"
                self.graph_break(code, f"{name}() called", sys._getframe(2))
            return None
        for a in pytree.tree_leaves((args, kwargs)):
            if isinstance(a, torch.Tensor):
                self.touched.add(id(a))
        if name in _METADATA:
            return None
        self._check_global_state()
        if type(func).__name__ == "method-wrapper":  # a Tensor property
            if name not in _VIEW_ATTRS:
                raise _Untraceable(f"reads Tensor.{name}, which carve does not guard")
            return ("call_function", getattr, self._map_args((args[0], name), {}), None)
        if func is _set_grad_enabled:
            return ("grad_mode", _set_grad_enabled, self._map_args(args, kwargs), None)
        if name == "__iter__" and tensor_method:
            # `for row in x` is iter(x.unbind(0)): record the unbind.
            return ("iter", "unbind", self._map_args((args[0], 0), {}), None)
        kind = "call_method" if tensor_method else "call_function"
        target = func.__name__ if tensor_method else func
        return (kind, target, self._map_args(args, kwargs), None)

    def _emit(self, plan: Any, result: Any) -> None:
        kind, target, (node_args, node_kwargs), _ = plan
        if kind == "grad_mode":
            self.graph.call_function(target, node_args, node_kwargs)
            self.grad_enabled = torch.is_grad_enabled()
            return
        if kind == "call_method":
            node = self.graph.call_method(target, node_args, node_kwargs)
        else:
            node = self.graph.call_function(target, node_args, node_kwargs)
        self.op_count += 1
        self._bind_result(node, result)

    def _check_global_state(self) -> None:
        if (torch.is_inference_mode_enabled() != self.inference
                or (torch.is_autocast_enabled("cpu"), torch.is_autocast_enabled("cuda")) != self.autocast):
            raise _Untraceable("changes inference mode or autocast inside the region")
        if torch.is_grad_enabled() != self.grad_enabled:
            raise _Untraceable("changes grad mode in a way carve cannot record")

    def _constant(self, tensor: torch.Tensor) -> fx.Node:
        name = f"_nonstrict_constant_{len(self.constants)}"
        self.constants[name] = tensor
        self.keep.append(tensor)
        node = self.graph.get_attr(name)
        self.env[id(tensor)] = node
        return node

    def _map_args(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        leaves, spec = pytree.tree_flatten((args, kwargs))
        mapped = []
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor):
                node = self.env.get(id(leaf))
                if node is None and self.nonstrict_frames:
                    node = self._constant(leaf)
                if node is None:
                    raise _Untraceable("reads a tensor that is not a graph input (a global or attribute "
                                       "read inside a callee, or a tensor made outside the trace)")
                mapped.append(node)
            elif isinstance(leaf, _CONST_TYPES):
                # NumPy scalars subclass float/int: a graph's code must hold the plain Python value.
                mapped.append(_plain_scalar(leaf))
            else:
                raise _Untraceable(f"passes a {type(leaf).__name__} to a torch operation; "
                                   "only tensors and plain constants can be graph values")
        return pytree.tree_unflatten(mapped, spec)

    def _bind_result(self, node: fx.Node, result: Any) -> None:
        if isinstance(result, torch.Tensor):
            self.env[id(result)] = node
            self.keep.append(result)
            return
        if result is None:
            return
        if isinstance(result, (tuple, list)):
            for i, item in enumerate(result):
                if isinstance(item, (torch.Tensor, tuple, list)):
                    self._bind_result(self.graph.call_function(operator.getitem, (node, i)), item)
                elif not isinstance(item, _CONST_TYPES):
                    raise _Untraceable(f"a torch operation returned a {type(item).__name__}")
            self.keep.append(result)
            return
        if isinstance(result, _CONST_TYPES):
            # A Python value from an op carve does not know to be pure metadata: be safe.
            raise _Untraceable(f"a torch operation returned a Python {type(result).__name__} computed "
                               "from tensors")
        raise _Untraceable(f"a torch operation returned a {type(result).__name__}")

    # ---- sys.setprofile ---------------------------------------------------------------------

    def _profile(self, frame: Any, event: str, arg: Any) -> None:
        if self.in_handler:
            return
        try:
            if event == "call":
                if self.opaque_frame is not None:
                    return
                code = frame.f_code
                kind = self.code_kinds.get(code, _MISSING)
                if kind is _MISSING:
                    kind = self._classify_code(frame)
                    self.code_kinds[code] = kind
                if kind is None:
                    return
                self._on_call(kind, frame)
            elif event == "return":
                if frame is self.opaque_frame:
                    self._finish_opaque(frame, arg)
                elif self.nonstrict_frames and frame is self.nonstrict_frames[-1]:
                    self.nonstrict_frames.pop()
            elif event == "c_call":
                if self.opaque_frame is not None or self.nonstrict_frames:
                    return
                try:
                    what = compat.IO_BUILTINS.get(arg)
                except TypeError:
                    what = None
                if what is None:
                    owner = getattr(arg, "__self__", None)
                    if owner is not None and (owner is sys.stdout or owner is sys.stderr):
                        what = f"sys.{'stdout' if owner is sys.stdout else 'stderr'}.{arg.__name__}()"
                    elif owner is compat.RANDOM_INSTANCE or arg in compat.FROZEN_VALUE_BUILTINS \
                            or compat.is_numpy_random(arg, owner):
                        what = compat.FROZEN_VALUE_BUILTINS.get(arg) or f"random.{arg.__name__}()"
                        raise _Untraceable(f"calls {what}: a cached graph would freeze its value")
                    else:
                        setter = compat.global_state_setter(arg, owner)
                        if setter is not None:
                            raise _Untraceable(f"calls {setter}: a cached graph would not replay the change")
                if what is not None:
                    self.graph_break("CRV003", f"{what} has a side effect a graph cannot hold", frame)
        except _Untraceable as e:
            self.graph_break(UNTRACEABLE, str(e), frame)

    def _classify_code(self, frame: Any) -> Any:
        code = frame.f_code
        marker = compat.CODE_MARKERS.get(code)
        if marker is not None:
            return marker
        if code is compat.AUTOGRAD_FUNCTION_APPLY_CODE:
            return "autograd_function"
        if code in compat.IO_CODES:
            return "io"
        user = _user_frame(code.co_filename) and "-packages" + os.sep not in code.co_filename
        fn = _find_function(frame, registry_only=not user)
        if fn is not None:
            marker = compat.classify_callable(fn)
            if marker in (Marker.ALLOW_IN_GRAPH, Marker.DISALLOWED, Marker.DISABLED,
                          Marker.DISABLED_NONRECURSIVE, Marker.GRAPH_BREAK, Marker.SKIP_FRAME):
                return (marker, fn)
        if user and code is not self.fn_code:
            # A user callee traced through: the globals it reads are pinned by guards.
            g = frame.f_globals
            for name in _nested_names(code):
                if name in g and (id(g), name) not in self.callee_globals:
                    self.callee_globals[(id(g), name)] = (g, name, g[name])
        return None

    def _on_call(self, kind: Any, frame: Any) -> None:
        fn = None
        if isinstance(kind, tuple):
            kind, fn = kind
        caller = frame.f_back
        if not self.recording:
            return
        if kind is Marker.GRAPH_BREAK:
            if not self.nonstrict_frames:
                msg = frame.f_locals.get("msg") or ""
                self.graph_break("CRV001", "graph_break() called" + (f": {msg}" if msg else ""), caller)
        elif kind is Marker.SKIP_FRAME:
            if not self.nonstrict_frames:
                msg = frame.f_locals.get("msg") or ""
                self.graph_break("CRV002", "skip_frame() called" + (f": {msg}" if msg else ""), caller)
        elif kind in (Marker.DISABLED, Marker.DISABLED_NONRECURSIVE):
            name = getattr(fn, "__qualname__", None) or compat.disabled_inner_name(frame)
            self.graph_break("CRV013", f"{name} is marked disable: it runs eagerly", caller)
        elif kind is Marker.NONSTRICT_TRACE:
            self.nonstrict_frames.append(frame)
        elif kind == "io":
            if not self.nonstrict_frames:
                self.graph_break("CRV003", f"{frame.f_code.co_name}() logs: a side effect a graph cannot hold",
                                 caller)
        elif kind is Marker.DISALLOWED:
            self.graph_break("CRV015", f"{getattr(fn, '__qualname__', fn)} is disallowed in graphs", caller)
        elif kind is Marker.ALLOW_IN_GRAPH:
            self._start_opaque(frame, fn, *_frame_call_args(frame))
        elif kind == "autograd_function":
            loc = frame.f_locals
            cls = loc.get("cls")
            self._start_opaque(frame, autograd_function_apply(cls), tuple(loc.get("args", ())),
                               dict(loc.get("kwargs", {})))

    def _start_opaque(self, frame: Any, target: Any, args: tuple, kwargs: dict) -> None:
        """An opaque call (allow_in_graph function, autograd.Function.apply): one node, not traced inside."""
        node_args = self._map_args(args, kwargs)  # map now: the callee may mutate its inputs
        if any(isinstance(a, torch.Tensor) for a in pytree.tree_leaves((args, kwargs))):
            for a in pytree.tree_leaves((args, kwargs)):
                if isinstance(a, torch.Tensor):
                    self.touched.add(id(a))
        self.opaque_frame = frame
        self.opaque_call = (target, node_args[0], node_args[1])

    def _finish_opaque(self, frame: Any, result: Any) -> None:
        target, node_args, node_kwargs = self.opaque_call  # type: ignore[misc]
        self.opaque_frame = None
        self.opaque_call = None
        if frame.f_code.co_code[frame.f_lasti] != _RETURN_VALUE:
            raise _Untraceable(f"{getattr(target, '__qualname__', target)} raised an exception")
        node = self.graph.call_function(target, node_args, node_kwargs)
        self.op_count += 1
        self._bind_result(node, result)


_MISSING = object()


class AutogradFunctionApply:
    """`SomeFunction.apply` as a graph node target (FX cannot name a bound classmethod)."""

    def __init__(self, cls: type[torch.autograd.Function]) -> None:
        self.cls = cls
        self.__name__ = f"{cls.__name__}_apply"
        self.__qualname__ = self.__name__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.cls.apply(*args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.cls.__qualname__}.apply"


_apply_targets: dict[type, AutogradFunctionApply] = {}


def autograd_function_apply(cls: type[torch.autograd.Function]) -> AutogradFunctionApply:
    target = _apply_targets.get(cls)
    if target is None:
        target = _apply_targets[cls] = AutogradFunctionApply(cls)
    return target


def _has_bool_index(index: Any) -> bool:
    if isinstance(index, torch.Tensor):
        return index.dtype in (torch.bool, torch.uint8)
    if isinstance(index, (tuple, list)):
        return any(_has_bool_index(i) for i in index)
    return False


def _find_function(frame: Any, registry_only: bool = False) -> Any:
    """The function object whose code `frame` runs, looked up where the caller could have found it.

    A frame only knows its code object, and closures made by one `def` share it: candidates
    from the caller's locals and globals, then carve's registries, are checked against the
    frame's free variables so the very closure being called is the one returned.
    """
    code = frame.f_code
    from . import markers
    candidates: list[Any] = []
    caller = frame.f_back
    if caller is not None and not registry_only:
        for obj in caller.f_locals.values():
            if getattr(obj, "__code__", None) is code:
                candidates.append(obj)
        g = caller.f_globals
        for name in caller.f_code.co_names:
            obj = g.get(name)
            if getattr(obj, "__code__", None) is code:
                candidates.append(obj)
    for registry in (markers._allowed, markers._disallowed):
        for fn in registry.values():
            if getattr(fn, "__code__", None) is code:
                candidates.append(fn)
    if not code.co_freevars:
        return candidates[0] if candidates else None
    frame_locals = frame.f_locals
    for fn in candidates:
        cells = getattr(fn, "__closure__", None) or ()
        try:
            if all(frame_locals.get(name, _MISSING) is cell.cell_contents
                   for name, cell in zip(code.co_freevars, cells)):
                return fn
        except ValueError:  # an empty cell
            continue
    return None


_MISSING = object()


def _frame_call_args(frame: Any) -> tuple[tuple, dict]:
    """Rebuild (args, kwargs) of the call that created `frame`, from its locals at the 'call' event."""
    code = frame.f_code
    loc = frame.f_locals
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    args = [loc[n] for n in names[:n_pos]]
    kwargs = {n: loc[n] for n in names[n_pos:n_pos + n_kw]}
    i = n_pos + n_kw
    if code.co_flags & 0x04:  # CO_VARARGS
        args.extend(loc[names[i]])
        i += 1
    if code.co_flags & 0x08:  # CO_VARKEYWORDS
        kwargs.update(loc[names[i]])
    return tuple(args), kwargs


# ---- entry point ----------------------------------------------------------------------------

def _walk_inputs(tracer: _Tracer, value: Any, source: Source, values: list[tuple[Source, Any]],
                 lift: bool, depth: int = 0) -> None:
    """Register graph inputs (tensors, module parameters/buffers) found in `value`."""
    values.append((source, value))
    if isinstance(value, torch.Tensor):
        tracer.add_input(value, source, lifted=lift)
    elif isinstance(value, torch.nn.Module):
        for mod_name, mod in value.named_modules():
            mod_source = source
            for part in mod_name.split(".") if mod_name else ():
                mod_source = mod_source.child("module", part)
            if mod is not value:
                values.append((mod_source, mod))
            for pname, p in mod._parameters.items():
                if p is not None:
                    tracer.add_input(p, mod_source.child("param", pname), lifted=True)
            for bname, b in mod._buffers.items():
                if b is not None:
                    tracer.add_input(b, mod_source.child("buffer", bname), lifted=True)
    elif type(value) in (tuple, torch.Size) or (depth < 4 and type(value) is list):
        # Every item of a tuple is guarded, at any depth (tuples cannot hold themselves), and a
        # torch.Size's sizes too: `x.reshape(shape)` bakes them into the graph.
        for i, item in enumerate(value):
            _walk_inputs(tracer, item, source.child("item", i), values, lift, depth + 1)
    elif depth < 4 and type(value) is dict:
        for k, item in value.items():
            if isinstance(k, (str, int)) or (type(k) is tuple and all(isinstance(e, (str, int)) for e in k)):
                _walk_inputs(tracer, item, source.child("item", k), values, lift, depth + 1)


def _region_reads(fn: Callable[..., Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Globals (by name) and closure cells (by free-variable name) the region function reads."""
    g = fn.__globals__
    globals_read = {name: g[name] for name in sorted(_nested_names(fn.__code__)) if name in g}
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # empty cell
                pass
    return globals_read, closure


def trace_region(fn: Callable[..., Any], args: tuple, *, stop_on_break: bool) -> TraceResult:
    """Run `fn(*args)` once for real, recording its torch operations into an FX graph."""
    tracer = _Tracer(fn, stop_on_break)
    guard_inputs = GuardInputs(args=args, global_state=compat.global_state_guard(),
                               grad_enabled=torch.is_grad_enabled(),
                               inference_mode=torch.is_inference_mode_enabled(),
                               default_dtype=torch.get_default_dtype())
    for i, a in enumerate(args):
        _walk_inputs(tracer, a, Source(("arg", i)), guard_inputs.values, lift=False)
    globals_read, closure = _region_reads(fn)
    guard_inputs.global_names = globals_read
    guard_inputs.closure = closure
    for name, value in globals_read.items():
        if isinstance(value, (torch.Tensor, torch.nn.Module)):
            _walk_inputs(tracer, value, Source(("global", name)), guard_inputs.values, lift=True)
    for name, value in closure.items():
        _walk_inputs(tracer, value, Source(("closure", name)), guard_inputs.values, lift=True)

    tracer.start()
    try:
        result = fn(*args)
    except BaseException:
        tracer.finish()
        raise
    tracer.finish()
    guard_inputs.callee_globals = list(tracer.callee_globals.values())

    if tracer.break_event is not None:
        return TraceResult(None, tracer.sources, None, result, tracer.break_event, tracer.op_count,
                           guard_inputs)
    try:
        gm, sources, example_inputs, output_spec = _finish_graph(tracer, result, guard_inputs)
    except _Untraceable as e:
        filename, lineno = fn.__code__.co_filename, _return_line(fn)
        event = BreakEvent(UNTRACEABLE, str(e), filename, lineno,
                           [(filename, lineno, fn.__code__.co_name, source_line(filename, lineno))])
        return TraceResult(None, tracer.sources, None, result, event, tracer.op_count, guard_inputs)
    return TraceResult(gm, sources, output_spec, result, None, tracer.op_count, guard_inputs, example_inputs)


def _return_line(fn: Callable[..., Any]) -> int:
    last = fn.__code__.co_firstlineno
    for _, _, line in fn.__code__.co_lines():
        if line is not None:
            last = max(last, line)
    return last


def _finish_graph(tracer: _Tracer, result: Any, guard_inputs: GuardInputs):
    # A container argument handed back (`ys = xs`) must come back as that very object on
    # every call, not as a copy rebuilt from its items: it is an ("arg", i) leaf.
    containers = [(i, a) for i, a in enumerate(guard_inputs.args)
                  if isinstance(a, (list, dict, set)) or (not isinstance(a, (torch.Tensor, tuple)) and
                                                          not isinstance(a, _CONST_TYPES))]
    def _is_argument(value: Any) -> bool:
        return any(value is a for _, a in containers)

    leaves, treespec = pytree.tree_flatten(result, is_leaf=_is_argument if containers else None)
    guarded_ids = {id(v) for _, v in guard_inputs.values}
    guarded_ids |= {id(v) for v in guard_inputs.global_names.values()}
    out_nodes: list[fx.Node] = []
    spec_leaves: list[tuple[str, Any]] = []
    for leaf in leaves:
        argument = next((i for i, a in containers if leaf is a), None)
        if argument is not None:
            spec_leaves.append(("arg", argument))
        elif isinstance(leaf, torch.Tensor):
            node = tracer.env.get(id(leaf))
            if node is None:
                raise _Untraceable("returns a tensor that is neither an input nor computed in the region")
            spec_leaves.append(("out", len(out_nodes)))
            out_nodes.append(node)
        elif isinstance(leaf, _CONST_TYPES) or id(leaf) in guarded_ids:
            spec_leaves.append(("const", leaf))
        else:
            raise _Untraceable(f"returns a {type(leaf).__name__} created in the region; a cached graph "
                               "would hand back the same object on every call")
    if tracer.grad_enabled != torch.is_grad_enabled():
        raise _Untraceable("leaves grad mode changed")
    tracer.graph.output(tuple(out_nodes))

    # Drop lifted inputs (parameters, globals) the region never touched: nothing to guard or fetch.
    sources: list[Source] = []
    example_inputs: list[torch.Tensor] = []
    for node, source, lifted, tensor in zip(tracer.placeholders, tracer.sources, tracer.lifted,
                                            tracer.input_tensors):
        if lifted and not node.users and id(tensor) not in tracer.touched:
            tracer.graph.erase_node(node)
            continue
        sources.append(source)
        example_inputs.append(tensor)
    root = torch.nn.Module()
    for name, tensor in tracer.constants.items():
        setattr(root, name, tensor)
    gm = fx.GraphModule(root, tracer.graph)
    gm.recompile()

    if treespec.is_leaf() and len(leaves) == 1 and isinstance(leaves[0], torch.Tensor):
        kind = "tensor"
    elif treespec.type is tuple and all(k == "out" for k, _ in spec_leaves) \
            and all(c.is_leaf() for c in treespec.children()) \
            and [i for _, i in spec_leaves] == list(range(len(spec_leaves))):
        kind = "tuple"
    else:
        kind = "tree"
    return gm, sources, example_inputs, OutputSpec(treespec, spec_leaves, kind)
