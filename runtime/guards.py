"""Guards: the facts a compiled graph depends on, checked by one generated function.

A cached graph is valid only while everything its trace depended on still
holds. `GuardSet.build` collects those facts from a `TraceResult`:

- every tensor the region receives or lifts (arguments, module parameters and
  buffers, tensors in the region's globals and closure cells): exact type,
  dtype, device, shape, requires_grad, exact strides, and no instance attributes;
  tensors that were the same object at trace time must stay the same object;
- Python scalars, strings and None among the arguments by type and value (so
  True and 1 differ), containers by type and length/keys, other objects by
  identity;
- `nn.Module`s by identity, plus every submodule's `training` flag and plain
  attributes (ints, floats, bools, strings, None), which forward code branches on;
- the globals and closure cells the region reads, and the globals of the user
  callees it traced through, by value (constants) or identity (anything else);
- torch's global state: grad mode, autocast, default dtype, inference mode, and the
  TorchFunctionMode / TorchDispatchMode stacks (`torch.set_default_device` pushes a mode),
  no functorch transform (vmap, torch.func.grad) active.

The checks become the source text of ONE Python function (exec'd), so the
hot path is a single call:

    def check(args):
        if len(args) != 1: return False
        v0 = args[0]
        if type(v0) is not T0 or v0.dtype is not D0 or v0.shape != S0 ...: return False
        if not GS.check(): return False
        return True

The same statements, with a different failure action and tail, make the
graph region's fast path (guard, fetch inputs, call the compiled graph) and
`failure_reason` (which guard failed, for recompile logs).
"""

from __future__ import annotations

import copy
import dis
import inspect
import math
import types
from functools import lru_cache
from collections.abc import Callable
from typing import Any

import torch

from . import compat
from .tracer import Source, TraceResult

_VALUE_TYPES = (int, float, bool, str, bytes, complex, type(None))
# What nn.Module.__init__ itself puts in an instance's __dict__ (not user state).
_MODULE_INTERNALS = frozenset(vars(torch.nn.Module())) - {"training"}
# Hooks that run around forward/backward: a module with any keeps an identity guard.
_MODULE_HOOK_DICTS = ("_backward_hooks", "_backward_pre_hooks", "_forward_hooks", "_forward_pre_hooks")
_ROOT_LOADS = {"LOAD_FAST": "local", "LOAD_GLOBAL": "global", "LOAD_DEREF": "closure", "LOAD_NAME": "global"}
_ATTR_LOADS = {"LOAD_ATTR", "LOAD_METHOD"}


@lru_cache(maxsize=4096)
def attribute_chains(code: types.CodeType) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """(kind, root name, attributes) of every `root.a.b` the code (and its nested code) reads.

        def region(x, cfg):             (("local", "cfg", ("scale",)),
            return x * cfg.scale + K.b   ("global", "K", ("b",)))
    """
    chains = set()
    stack = [code]
    while stack:
        current = stack.pop()
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
        root = None
        attrs: list[str] = []
        for instruction in dis.get_instructions(current):
            if instruction.opname in _ATTR_LOADS and root is not None:
                attrs.append(instruction.argval)
                continue
            if root is not None and attrs:
                chains.add((root[0], root[1], tuple(attrs)))
            root, attrs = None, []
            kind = _ROOT_LOADS.get(instruction.opname)
            if kind is not None:
                root = (kind, instruction.argval)
        if root is not None and attrs:
            chains.add((root[0], root[1], tuple(attrs)))
    return tuple(sorted(chains))
_MISSING = object()


def _mutates(gm: Any) -> bool:
    for node in gm.graph.nodes:
        if node.op not in ("call_method", "call_function"):
            continue
        name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
        schema = getattr(node.target, "_schema", None)
        if (name.endswith("_") and not name.startswith("__")) or name == "__setitem__" or "out" in node.kwargs \
                or (schema is not None and schema.is_mutable):
            return True
    return False


def any_autocast() -> bool:
    return torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda")


class GuardSet:
    """The facts one graph of carve's own tracer depends on (see the module docstring for the
    full list), compiled into one generated function checked before the graph runs again:

        guards = GuardSet.build(trace, args, region_fn)
        guards.check(args)            # -> False when a shape, dtype, value read, grad mode...
        guards.failure_reason(args)   #    changed; which one, for the recompile log

    Only regions proven closed (runtime/closed.py) use it; Dynamo's regions use Dynamo's guards.
    """

    # Set by `build`: what the guards read (the function's globals and closure cells), and the
    # global-state snapshot that says what changed.
    _globals: dict[str, Any]
    _cells: dict[str, Any]
    _state: Any

    def __init__(self) -> None:
        self.ns: dict[str, Any] = {"MISSING": _MISSING, "torch": torch, "_is_grad_enabled": torch.is_grad_enabled,
                                   "_get_default_dtype": torch.get_default_dtype,
                                   "_is_inference": torch.is_inference_mode_enabled}
        # ("let", code) assigns a local; ("check", condition, guard index) fails when condition is False.
        self.lines: list[tuple[str, str, int]] = []
        self.descriptions: list[str] = []
        self.var_of: dict[Source, str] = {}
        self._consts: dict[int, str] = {}
        self._check: Callable[[tuple], bool] | None = None
        self._reason: Callable[[tuple], str | None] | None = None

    # ---- building -------------------------------------------------------------------------

    def const(self, value: Any, hint: str = "C") -> str:
        """A name for `value` in the generated code's namespace."""
        key = id(value)
        name = self._consts.get(key)
        if name is None or self.ns.get(name) is not value:
            name = f"{hint}{len(self.ns)}"
            self.ns[name] = value
            self._consts[key] = name
        return name

    def var(self, source: Source) -> str:
        """A local variable holding the value at `source` (assigned once, parent first)."""
        name = self.var_of.get(source)
        if name is not None:
            return name
        if source.path:
            parent = self.var(Source(source.root, source.path[:-1]))
            step, key = source.path[-1]
            expr = parent + {"item": f"[{key!r}]", "attr": f".{key}", "module": f"._modules[{key!r}]",
                             "param": f"._parameters[{key!r}]", "buffer": f"._buffers[{key!r}]"}[step]
        else:
            kind, key = source.root
            if kind == "arg":
                expr = f"args[{key}]"
            elif kind == "global":
                expr = f"{self.const(self._globals, 'G')}[{key!r}]"
            elif kind == "closure":
                expr = f"{self.const(self._cells[key], 'CELL')}.cell_contents"
            else:
                raise ValueError(f"unknown source root {source.root}")
        name = f"v{len(self.var_of)}"
        self.var_of[source] = name
        self.lines.append(("let", f"{name} = {expr}", -1))
        return name

    def add(self, description: str, *conditions: str) -> None:
        index = len(self.descriptions)
        self.descriptions.append(description)
        for cond in conditions:
            self.lines.append(("check", cond, index))

    def guard_tensor(self, source: Source, t: torch.Tensor) -> None:
        v = self.var(source)
        conds = [f"type({v}) is {self.const(type(t), 'T')}",
                 f"{v}.dtype is {self.const(t.dtype, 'D')}",
                 f"{v}.shape == {self.const(t.shape, 'S')}",
                 f"{v}.requires_grad is {t.requires_grad}",
                 f"{v}.device == {self.const(t.device, 'DEV')}"]
        # Strides, not is_contiguous(): contiguity ignores size-1 dimensions, whose stride a
        # traced x.stride() would still have read.
        conds.append(f"{v}.stride() == {self.const(t.stride(), 'ST')}")
        if not t.__dict__:
            # No attributes of its own (closed.py): a region reading `x.scale` is not closed.
            conds.append(f"not {v}.__dict__")
        layout = f"strides={t.stride()}"
        self.add(f"{source.name()}: {type(t).__name__} dtype={t.dtype} device={t.device} "
                 f"shape={tuple(t.shape)} requires_grad={t.requires_grad} {layout}", *conds)

    def guard_value(self, source: Source, value: Any) -> None:
        v = self.var(source)
        if value is None:
            self.add(f"{source.name()} is None", f"{v} is None")
        elif type(value) in _VALUE_TYPES:
            if type(value) is float and math.isnan(value):
                cond = f"{v} != {v}"
            elif type(value) is float and value == 0.0:
                # -0.0 == 0.0, but 1 / x tells them apart: guard the sign too.
                cond = f"{v} == 0.0 and str({v}) == {str(value)!r}"
            elif type(value) is complex:
                # str tells apart the signs of zero parts and matches NaN parts, which == does not.
                cond = f"str({v}) == {str(value)!r}"
            else:
                cond = f"{v} == {self.const(value, 'K')}"
            self.add(f"{source.name()} == {value!r} ({type(value).__name__})",
                     f"type({v}) is {type(value).__name__}", cond)
        elif isinstance(value, torch.dtype):
            self.add(f"{source.name()} is {value}", f"{v} is {self.const(value, 'D')}")
        elif isinstance(value, torch.device):
            self.add(f"{source.name()} == {value!r}", f"type({v}) is torch.device",
                     f"{v} == {self.const(value, 'DEV')}")
        elif type(value) in (tuple, list, torch.Size):
            self.add(f"{source.name()}: {type(value).__name__} of length {len(value)}",
                     f"type({v}) is {self.const(type(value), 'T')}", f"len({v}) == {len(value)}")
        elif type(value) in (set, frozenset) and len(value) <= 64 and all(type(e) in _VALUE_TYPES for e in value):
            self.add(f"{source.name()} == {value!r}", f"type({v}) is {type(value).__name__}",
                     f"{v} == {self.const(frozenset(value), 'K')}")
        elif type(value) is dict:
            self.add(f"{source.name()}: dict with keys {list(value)}",
                     f"type({v}) is dict", f"list({v}) == {self.const(list(value), 'KEYS')}")
        else:
            self.add(f"{source.name()} is the same {type(value).__name__} object",
                     f"{v} is {self.const(value, 'OBJ')}")

    def guard_instance_state(self, source: Source, mod: torch.nn.Module) -> None:
        """Every attribute the user set on a module or object (private ones too): numbers and strings by value,
        anything else (functions, config objects, plain tensors) by identity."""
        v = self.var(source)
        conds, parts = [], []
        for key, value in sorted(vars(mod).items()):
            if key in _MODULE_INTERNALS:
                continue
            if type(value) in _VALUE_TYPES:
                if type(value) is float and math.isnan(value):
                    continue
                conds.append(f"{v}.__dict__.get({key!r}, MISSING) == {self.const(value, 'K')}")
                parts.append(f"{key}={value!r}")
            else:
                conds.append(f"{v}.__dict__.get({key!r}, MISSING) is {self.const(value, 'OBJ')}")
                parts.append(f"{key} is the same {type(value).__name__}")
        if conds:
            self.add(f"{source.name()} ({type(mod).__name__}): {', '.join(parts)}", *conds)

    def guard_module_structure(self, source: Source, mod: torch.nn.Module) -> None:
        """The class and the names of submodules, parameters and buffers, and no hooks.

        Not the module's identity: its parameters and buffers are graph inputs fetched by
        name on each call, so blocks of one structure share one graph (a loop over twelve
        identical blocks compiles once instead of twelve times).
        """
        v = self.var(source)
        conds = [f"type({v}) is {self.const(type(mod), 'T')}"]
        for attribute in ("_modules", "_parameters", "_buffers"):
            keys = list(getattr(mod, attribute))
            conds.append(f"list({v}.{attribute}) == {self.const(keys, 'KEYS')}")
        hooks = [h for h in _MODULE_HOOK_DICTS if getattr(mod, h, None)]
        if hooks:  # hooks run Python around forward: keep the very module
            conds.append(f"{v} is {self.const(mod, 'OBJ')}")
        else:
            conds.extend(f"not getattr({v}, {h!r}, None)" for h in _MODULE_HOOK_DICTS)
        self.add(f"{source.name()}: a {type(mod).__name__} with submodules {list(mod._modules)}, "
                 f"parameters {list(mod._parameters)}, buffers {list(mod._buffers)}", *conds)

    def guard_attribute_chains(self, fn: Callable[..., Any], args: tuple, walked: set) -> None:
        """Values the region reads through attributes of plain objects (`cfg.scale`, `K.sizes`).

        A graph freezes them; guard them so a changed attribute retraces. Module parameters,
        buffers and submodules are inputs or guarded already; a chain stops at properties
        (evaluating them on every call could have effects) and at tensors (their metadata
        is guarded as graph inputs).
        """
        code = fn.__code__
        positional = code.co_varnames[:code.co_argcount]
        cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
        for kind, name, attrs in attribute_chains(code):
            if kind == "local" and name in positional:
                source, value = Source(("arg", positional.index(name))), args[positional.index(name)]
            elif kind == "global" and name in fn.__globals__:
                source, value = Source(("global", name)), fn.__globals__[name]
            elif kind == "closure" and name in cells:
                try:
                    source, value = Source(("closure", name)), cells[name].cell_contents
                except ValueError:
                    continue
            else:
                continue
            for attr in attrs:
                if isinstance(value, (torch.Tensor, types.ModuleType)) or (
                        callable(value) and not isinstance(value, torch.nn.Module)):
                    break  # tensor metadata and called code are not plain values
                if isinstance(value, torch.nn.Module):
                    step = next((k for k, d in (("module", value._modules), ("param", value._parameters),
                                                ("buffer", value._buffers)) if attr in d), None)
                    if step is not None:
                        source, value = source.child(step, attr), getattr(value, attr)
                        continue
                static = inspect.getattr_static(value, attr, _MISSING)
                if static is _MISSING or isinstance(static, property):
                    break
                source, value = source.child("attr", attr), getattr(value, attr)
            else:
                if source.path and source not in walked and not isinstance(value, (torch.Tensor, torch.nn.Module)) \
                        and not callable(value):
                    walked.add(source)
                    self.guard_plain_value(source, value)

    def guard_plain_value(self, source: Source, value: Any) -> None:
        """By value for numbers, strings and (nested) tuples/lists of them; by identity otherwise."""
        if type(value) in (tuple, list, dict) and _plain(value):
            v = self.var(source)
            # A snapshot: the live container may be mutated in place later.
            self.add(f"{source.name()} == {value!r}", f"type({v}) is {type(value).__name__}",
                     f"{v} == {self.const(copy.deepcopy(value), 'K')}")
        else:
            self.guard_value(source, value)

    def guard_mode_stacks(self) -> None:
        """The TorchFunctionMode and TorchDispatchMode stacks as at trace time (torch.set_default_device
        pushes one), and no functorch transform: a mode changes what the ops make, and a replayed
        graph does not run it; a transform's wrapped tensors cannot go through a compiled graph."""
        self.ns["_function_modes"] = compat.function_mode_count
        self.ns["_dispatch_modes"] = compat.dispatch_mode_count
        conds, parts = [], []
        for length, at, kind in ((compat.function_mode_count, compat.function_mode_at, "function"),
                                 (compat.dispatch_mode_count, compat.dispatch_mode_at, "dispatch")):
            modes = [at(i) for i in range(length())]
            conds.append(f"_{kind}_modes() == {len(modes)}")
            if modes:
                getter = self.const(at, "AT")
                conds.extend(f"{getter}({i}) is {self.const(mode, 'MODE')}" for i, mode in enumerate(modes))
            parts.append(f"{kind} modes {[type(m).__name__ for m in modes]}")
        functorch = compat.functorch_transform()
        if functorch is None:
            self.ns["_functorch_level"] = compat.functorch_transform
            conds.append("_functorch_level() is None")
            parts.append("no functorch transform")
        self.add("torch mode stacks as at trace time: " + ", ".join(parts), *conds)

    # ---- the one entry point --------------------------------------------------------------

    @classmethod
    def build(cls, trace: TraceResult, args: tuple, fn: Callable[..., Any]) -> "GuardSet":
        gs = cls()
        gi = trace.guard_inputs
        gs._globals = fn.__globals__
        gs._cells = {}
        if fn.__closure__:
            gs._cells = dict(zip(fn.__code__.co_freevars, fn.__closure__))
        gs.lines.append(("check", f"len(args) == {len(args)}", len(gs.descriptions)))
        gs.descriptions.append(f"called with {len(args)} arguments")

        seen_tensors: dict[int, Source] = {}
        tensor_at: dict[Source, torch.Tensor] = {}

        def tensor(source: Source, t: torch.Tensor) -> None:
            first = seen_tensors.get(id(t))
            if first is not None:
                gs.add(f"{source.name()} is the same tensor as {first.name()}",
                       f"{gs.var(source)} is {gs.var(first)}")
                return
            seen_tensors[id(t)] = source
            tensor_at[source] = t
            gs.guard_tensor(source, t)

        walked = set()
        graph_inputs = set(trace.input_sources)
        for source, value in gi.values:
            walked.add(source)
            if isinstance(value, torch.Tensor):
                if source.root[0] == "arg" or source in graph_inputs:
                    tensor(source, value)
            elif isinstance(value, torch.nn.Module):
                gs.guard_module_structure(source, value)
                gs.guard_instance_state(source, value)
            else:
                gs.guard_value(source, value)
                if _plain_object(value):
                    # Its attributes may be read by paths bytecode chains do not show
                    # (`cfgs[0].scale`, `getattr(cfg, name)`): guard them as a module's.
                    gs.guard_instance_state(source, value)
        # Lifted parameters/buffers: fetched afresh each call, so guard their metadata.
        for source, t in zip(trace.input_sources, trace.example_inputs):
            if id(t) not in seen_tensors:
                tensor(source, t)
        # A graph that mutates tensors depends on which inputs share memory: a write through one
        # is seen through the others eagerly, and backends functionalize the graph on the sharing
        # seen at trace time (two views of one storage are two distinct objects).
        distinct = list(seen_tensors.values())
        if trace.graph_module is not None and 1 < len(distinct) <= 64 and _mutates(trace.graph_module):
            tensors = [tensor_at[source] for source in distinct]
            pattern = storage_pattern(tensors)
            names = ", ".join(gs.var(s) for s in distinct)
            gs.ns["storage_pattern"] = storage_pattern
            gs.add(f"the graph mutates tensors: inputs share storage as at trace time {pattern}",
                   f"storage_pattern(({names},)) == {pattern!r}")
            for index, (source, t) in enumerate(zip(distinct, tensors)):
                if pattern.count(pattern[index]) > 1:
                    gs.add(f"{source.name()} starts at storage offset {t.storage_offset()}",
                           f"{gs.var(source)}.storage_offset() == {t.storage_offset()}")
        gs.guard_attribute_chains(fn, args, walked)
        for name, value in gi.global_names.items():
            source = Source(("global", name))
            if source not in walked:
                gs.guard_plain_value(source, value)
        for name, value in gi.closure.items():
            source = Source(("closure", name))
            if source not in walked:
                gs.guard_value(source, value)
        region_globals = fn.__globals__
        for g, name, value in gi.callee_globals:
            if g is region_globals and name in gi.global_names:
                continue
            d = gs.const(g, "G")
            if type(value) in _VALUE_TYPES:
                gs.add(f"global {name!r} of a callee == {value!r}",
                       f"type({d}.get({name!r})) is {type(value).__name__}",
                       f"{d}.get({name!r}) == {gs.const(value, 'K')}")
            else:
                gs.add(f"global {name!r} of a callee is the same {type(value).__name__} object",
                       f"{d}.get({name!r}, MISSING) is {gs.const(value, 'OBJ')}")
        state = gi.global_state if gi.global_state is not None else compat.global_state_guard()
        # One C++ call (torch's GlobalStateGuard) checks grad mode, autocast, default dtype, ...
        gs.add(f"torch global state as at trace time: grad_enabled={gi.grad_enabled}, "
               f"default_dtype={gi.default_dtype}, autocast off={not any_autocast()}",
               f"{gs.const(state, 'GS')}.check()")
        gs.add(f"inference mode is {gi.inference_mode}", f"_is_inference() is {gi.inference_mode}")
        gs.guard_mode_stacks()
        hooks = compat.global_module_hooks()
        gs.add(f"global module hooks as at trace time ({sum(len(h) for h in hooks)})",
               *(f"len({gs.const(h, 'HOOKS')}) == {len(h)}" if h else f"not {gs.const(h, 'HOOKS')}"
                 for h in hooks))
        gs._state = state
        return gs

    # ---- generated functions ---------------------------------------------------------------

    def render(self, name: str, fail: Callable[[int], str], tail: list[str]) -> str:
        """Source of `def name(args)`: the guard statements, `fail(i)` on guard i failing, then `tail`.

        Consecutive conditions of one guard are joined with `and`; a guard that raises
        (a missing key or attribute) counts as failed. `tail` runs outside the try, so an
        exception from the compiled graph is the user's exception, never a guard failure.
        """
        body: list[str] = []
        pending: list[str] = []
        pending_index = -1

        def flush() -> None:
            if pending:
                body.append(f"if not ({' and '.join(pending)}): {fail(pending_index)}")
                pending.clear()

        for kind, code, index in self.lines:
            if kind == "let":
                flush()
                body.append(code)
            else:
                if index != pending_index:
                    flush()
                    pending_index = index
                pending.append(code)
        flush()
        inner = "\n".join("        " + line for line in body)
        rest = "\n".join("    " + line for line in tail)
        return (f"def {name}(args):\n    try:\n{inner}\n"
                f"    except Exception:\n        {fail(-1)}\n{rest}\n")

    def compile(self, source: str, name: str, extra: dict[str, Any] | None = None) -> Callable[..., Any]:
        ns = dict(self.ns)
        if extra:
            ns.update(extra)
        exec(compile(source, f"<carve guards {name}>", "exec"), ns)
        return ns[name]

    def check(self, args: tuple) -> bool:
        if self._check is None:
            self._check = self.compile(self.render("check", lambda i: "return False", ["return True"]), "check")
        return self._check(args)

    def failure_reason(self, args: tuple) -> str | None:
        """The first guard that fails for `args`, described; None if all pass."""
        if self._reason is None:
            def fail(i: int) -> str:
                return f"return DESCS[{i}]" if i >= 0 else "return 'a guard raised an exception'"
            self._reason = self.compile(self.render("reason", fail, ["return None"]), "reason",
                                        {"DESCS": self.descriptions})
        reason = self._reason(args)
        if reason is not None and reason.startswith("torch global state") and hasattr(self._state, "reason"):
            reason += f" (changed: {self._state.reason()})"
        return reason

    def describe(self) -> list[str]:
        return list(self.descriptions)

    def source(self) -> str:
        return self.render("check", lambda i: "return False", ["return True"])


def storage_pattern(tensors: Any) -> tuple:
    """For each tensor, the index of the first tensor sharing its storage: (0, 1, 0) when the first
    and the third share memory."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(t.untyped_storage()._cdata, i) for i, t in enumerate(tensors))


def _plain_object(value: Any) -> bool:
    """A user object whose instance attributes are worth guarding (not a function or a type)."""
    if isinstance(value, (type, types.FunctionType, types.MethodType, types.ModuleType, torch.Tensor)):
        return False
    attributes = getattr(value, "__dict__", None)
    return isinstance(attributes, dict) and len(attributes) <= 64


def _plain(value: Any) -> bool:
    if type(value) in (tuple, list):
        return len(value) <= 64 and all(_plain(v) for v in value)
    if type(value) is dict:
        return len(value) <= 64 and all(type(k) in _VALUE_TYPES and _plain(v) for k, v in value.items())
    return type(value) in _VALUE_TYPES
