"""Which regions carve's own tracer may capture: regions proven *closed*.

carve's light tracer records torch operations and runs the Python between them
natively, so it is sound only where no Python outside the region's own code
runs and every value the region reads is a guarded input. A region is closed
when, on this call:

- its code reads only its arguments, its locals, constants, torch modules
  (`torch`, `torch.nn.functional` as `F`, ...) and a few pure builtins
  (`len`, `range`, `min`, ...): no closure cells, no other globals, no imports,
  no nested functions or comprehensions, no attribute or global stores;
- what it reads through a torch module is stateless (`torch.float32`,
  `torch.pi`) or an operation the tracer records (`torch.sin`, `F.relu`,
  `torch.zeros`) or whose result is guarded (`torch.is_grad_enabled()`), never
  other Python state (`torch.initial_seed()`, `torch.backends.mkldnn.enabled`);
- every argument is a plain tensor (`torch.Tensor` or `nn.Parameter`, no
  subclass that could run Python in `__torch_function__`, no attributes of its
  own such as `x.scale = 2.0`) or an immutable Python value (numbers, strings,
  None, dtypes, devices, sizes, slices and tuples of those);
- no TorchFunctionMode or TorchDispatchMode is active (`torch.set_default_device`
  is one): a mode runs Python on every op and changes what a factory function
  makes, which a replayed graph would not do; nor a functorch transform (vmap,
  torch.func.grad), whose wrapped tensors a compiled graph cannot take.

Then every call the region makes is a torch function, a tensor method or a
pure builtin, and every read is an argument (guarded by the fast path) or a
torch module (guarded by identity as a global). Example:

    def _f_graph_region_0(x, scale):      closed: tensor and float arguments,
        y = torch.sin(x) * scale                  torch functions, tensor methods
        return y.relu()

    def _forward_graph_region_0(self, x):  not closed: `self` is a module whose
        return self.block(x)                      forward, attributes and hooks are
                                                  Python carve cannot see -> Dynamo

Everything else is captured by Dynamo (`dynamo_capture.py`).
"""

from __future__ import annotations

import builtins
import dis
import inspect
import types
from typing import Any, TypeGuard

import torch

from carve.rewriters.unbound import UNBOUND  # plain Python: no libcst, no torch

from . import compat

# Builtins that call nothing of the user's on the values a closed region can hold.
_PURE_BUILTINS = frozenset({
    "len", "range", "min", "max", "abs", "int", "float", "bool", "complex", "tuple", "slice", "isinstance",
    "enumerate", "zip", "reversed", "round", "divmod", "pow", "sum", "str", "Ellipsis", "None", "True",
    "False", "type", "ValueError", "TypeError", "RuntimeError", "IndexError", "KeyError", "AssertionError",
    "NotImplementedError", "ZeroDivisionError", "ArithmeticError", "Exception",
})
_BUILTIN_VALUES = {name: getattr(builtins, name) for name in _PURE_BUILTINS if hasattr(builtins, name)}

_IMMUTABLE_TYPES = (int, float, bool, complex, str, bytes, type(None), torch.dtype, torch.device, torch.layout,
                    torch.memory_format, slice, type(Ellipsis))
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)
_UNBOUND = UNBOUND

# Instructions that make a region open by themselves, each with what it is in the user's terms
# (for `carve.explain`).
_OPEN_CONSTRUCTS = {
    "LOAD_DEREF": "a closure cell", "LOAD_CLOSURE": "a closure cell", "LOAD_CLASSDEREF": "a closure cell",
    "STORE_DEREF": "a closure cell", "LOAD_FROM_DICT_OR_DEREF": "a closure cell", "IMPORT_NAME": "an import",
    "IMPORT_FROM": "an import", "STORE_ATTR": "an attribute store", "DELETE_ATTR": "an attribute deletion",
    "STORE_GLOBAL": "a global store", "DELETE_GLOBAL": "a global deletion", "MAKE_FUNCTION": "a nested function",
    "LOAD_BUILD_CLASS": "a class definition", "YIELD_VALUE": "a yield", "SETUP_WITH": "a `with` block",
    "BEFORE_WITH": "a `with` block",
}
_OPEN_OPCODES = frozenset(name for name in _OPEN_CONSTRUCTS if name in dis.opmap)

# code object -> the globals it reads, each with the attribute chain read from it
# (`torch.nn.functional.relu` is ("torch", ("nn", "functional", "relu"))), or None when the
# code itself is open.
_code_globals: dict[types.CodeType, tuple[tuple[str, tuple[str, ...]], ...] | None] = {}
_ATTRIBUTE_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})


def _global_reads(code: types.CodeType) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """The globals `code` reads with their attribute chains, or None if its instructions alone
    make it open."""
    if code in _code_globals:
        return _code_globals[code]
    reads: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    if not code.co_freevars and not code.co_cellvars and not any(
            isinstance(c, types.CodeType) for c in code.co_consts):
        found: list = []
        chain: list | None = None
        for instruction in dis.get_instructions(code):
            if instruction.opname in _OPEN_OPCODES:
                break
            if chain is not None and instruction.opname in _ATTRIBUTE_LOADS:
                chain.append(instruction.argval)
                continue
            if chain is not None:
                found.append((chain[0], tuple(chain[1:])))
                chain = None
            if instruction.opname == "LOAD_GLOBAL":
                chain = [instruction.argval]
        else:
            if chain is not None:
                found.append((chain[0], tuple(chain[1:])))
            reads = tuple(dict.fromkeys(found))
    _code_globals[code] = reads
    return reads




def _open_construct(code: types.CodeType) -> str:
    """The construct that makes `code` open by its instructions alone, in words."""
    if code.co_freevars or code.co_cellvars:
        return "closure cells in the region"
    if any(isinstance(c, types.CodeType) for c in code.co_consts):
        return "a nested function, lambda or comprehension in the region"
    for instruction in dis.get_instructions(code):
        if instruction.opname in _OPEN_OPCODES:
            return f"{_OPEN_CONSTRUCTS[instruction.opname]} in the region"
    return "the region's code"


def _is_torch_module(value: Any) -> TypeGuard[types.ModuleType]:
    if not isinstance(value, types.ModuleType):
        return False
    name = value.__name__
    return name == "torch" or name.startswith("torch.")


def _closed_global(fn: types.FunctionType, name: str) -> bool:
    namespace = fn.__globals__
    if name in namespace:
        value = namespace[name]
        # carve's own "not bound" marker, which generated regions compare names against.
        return _is_torch_module(value) or value is _UNBOUND
    value = _BUILTIN_VALUES.get(name)
    if value is None:
        return False
    module_builtins = namespace.get("__builtins__", builtins)
    actual = module_builtins.get(name) if isinstance(module_builtins, dict) else getattr(module_builtins, name, None)
    return actual is value


# What a closed region may reach through a torch module (`torch.sin`, `F.relu`, `torch.float32`):
# values that hold no state, and callables whose every call the tracer's TorchFunctionMode sees
# (torch's overridable functions and the ATen functions in torch._C._VariableFunctions, factories
# included) or whose result the guards pin down (grad mode, default dtype, ...). Anything else a
# torch module holds may read Python state no guard covers (`torch.initial_seed()`,
# `torch.is_anomaly_enabled()`, `torch.backends.mkldnn.enabled`): such regions go to Dynamo.
_torch_callables: frozenset | None = None
_TORCH_CONSTANTS = frozenset({"pi", "e", "inf", "nan", "newaxis"})
_PURE_TORCH_VALUES = (torch.dtype, torch.device, torch.layout, torch.memory_format, torch.finfo, torch.iinfo)
_PURE_TORCH_TYPES = (torch.Size, torch.finfo, torch.iinfo, torch.device, torch.dtype)


def _hashable(values: Any) -> set:
    found = set()
    for value in values:
        try:
            found.add(value)
        except TypeError:
            pass
    return found


def _traced_torch_callables() -> frozenset:
    global _torch_callables
    if _torch_callables is None:
        seen = set()
        for functions in torch.overrides.get_overridable_functions().values():
            seen |= _hashable(functions)
        variable_functions = compat.ATEN_FUNCTIONS
        seen |= _hashable(getattr(variable_functions, name) for name in dir(variable_functions)
                          if not name.startswith("__"))
        # Guarded by the global state guard (tracer.py's _METADATA) or recorded (grad mode).
        seen |= {torch.is_grad_enabled, torch.get_default_dtype, torch.is_autocast_enabled,
                 torch.is_inference_mode_enabled, torch.is_tensor, torch.set_grad_enabled}
        _torch_callables = frozenset(seen)
    return _torch_callables


def _closed_torch_read(module: types.ModuleType, attrs: tuple[str, ...]) -> bool:
    """True if reading `module.a.b...` (and calling it) cannot depend on unguarded Python state."""
    if not attrs:
        return False  # the module itself as a value: it could be read through later
    value: Any = module
    for i, attr in enumerate(attrs):
        if not _is_torch_module(value):
            break  # the rest of the chain reads attributes of `value` (`torch.float32.itemsize`)
        owner, value = value, getattr(value, attr, _MISSING)
        if value is _MISSING:
            return False
        if not isinstance(value, types.ModuleType) and attr in _TORCH_CONSTANTS and owner is torch:
            return i == len(attrs) - 1
    if isinstance(value, types.ModuleType):
        return False  # a module as a value could be read through later
    if isinstance(value, _PURE_TORCH_VALUES):
        return True
    if isinstance(value, type):
        return value in _PURE_TORCH_TYPES or value in _PLAIN_TENSORS
    if compat.classify_callable(value) is not compat.Marker.NONE:
        return True  # carve's and torch's markers: the tracer handles them
    try:
        return value in _traced_torch_callables()
    except TypeError:
        return False


_MISSING = object()


def _open_global_read(fn: types.FunctionType) -> str | None:
    """The first global read of `fn` that makes it open, as text; None if all are closed."""
    namespace = fn.__globals__
    for name, attrs in _global_reads(fn.__code__) or ():
        if not _closed_global(fn, name):
            return name
        value = namespace.get(name)
        if _is_torch_module(value) and not _closed_torch_read(value, attrs):
            return ".".join((name,) + attrs)
    return None


def _closed_value(value: Any) -> bool:
    kind = type(value)
    if kind in _PLAIN_TENSORS:
        # No attributes of its own (`x.scale = 2.0`): the region could read them, and the guards
        # check tensors by metadata, not by identity.
        return not value.__dict__
    if kind in _IMMUTABLE_TYPES or kind is torch.Size:
        return True
    if kind is tuple:
        return all(_closed_value(v) for v in value)
    return value is _UNBOUND


# Kinds of class attribute implemented in C: calling or reading one runs no Python of anyone's.
_C_ATTRIBUTE_KINDS = (types.MethodDescriptorType, types.GetSetDescriptorType, types.WrapperDescriptorType,
                      types.BuiltinFunctionType, types.MemberDescriptorType, types.ClassMethodDescriptorType,
                      types.MethodWrapperType)


def _torch_defined(value: Any) -> bool:
    """A class attribute of torch's own: C-implemented, or Python in a torch module."""
    if isinstance(value, _C_ATTRIBUTE_KINDS) or isinstance(value, _IMMUTABLE_TYPES):
        return True
    if isinstance(value, property):
        return all(f is None or _torch_defined(f) for f in (value.fget, value.fset, value.fdel))
    if isinstance(value, (staticmethod, classmethod)):
        return _torch_defined(value.__func__)
    if not callable(value) and not hasattr(type(value), "__get__"):
        return True  # plain data (`__annotations__`): reading it runs nothing
    module = getattr(value, "__module__", None) or ""
    return isinstance(value, (types.FunctionType, type)) and (module == "torch" or module.startswith("torch."))


def _user_tensor_attribute(code: types.CodeType) -> str | None:
    """A name the code reads that the tensor classes define outside torch (a method patched onto
    `torch.Tensor`): calling it runs Python the tracer does not see."""
    for name in code.co_names:
        for cls in _PLAIN_TENSORS:
            value = inspect.getattr_static(cls, name, _MISSING)
            if value is not _MISSING and not _torch_defined(value):
                return name
    return None


def is_closed(fn: Any, args: tuple) -> bool:
    """True if carve's own tracer can capture `fn(*args)` completely (see the module docstring)."""
    if not isinstance(fn, types.FunctionType) or compat.modes_active():
        return False
    if _global_reads(fn.__code__) is None or _open_global_read(fn) is not None:
        return False
    if _user_tensor_attribute(fn.__code__) is not None:
        return False
    return all(_closed_value(a) for a in args)


def open_reason(fn: Any, args: tuple) -> str:
    """Why `fn(*args)` is not closed, for `carve.explain` and the logs."""
    if not isinstance(fn, types.FunctionType):
        return "not a Python function"
    if compat.modes_active():
        return ("a TorchFunctionMode, TorchDispatchMode or functorch transform is active "
                "(torch.set_default_device, vmap, torch.func.grad, ...)")
    if _global_reads(fn.__code__) is None:
        return _open_construct(fn.__code__)
    read = _open_global_read(fn)
    if read is not None:
        return f"reads global {read!r}"
    attribute = _user_tensor_attribute(fn.__code__)
    if attribute is not None:
        return f"calls tensor attribute {attribute!r}, defined outside torch"
    for i, a in enumerate(args):
        if not _closed_value(a):
            own = " with attributes of its own" if isinstance(a, torch.Tensor) and a.__dict__ else ""
            return f"argument {i} is a {type(a).__name__}{own}"
    return "closed"
