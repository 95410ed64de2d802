"""Which regions carve's own tracer may capture: regions proven *closed*.

carve's light tracer records torch operations and runs the Python between them
natively, so it is sound only where no Python outside the region's own code
runs and every value the region reads is a guarded input. A region is closed
when, on this call:

- its code reads only its arguments, its locals, constants, torch modules
  (`torch`, `torch.nn.functional` as `F`, ...) and a few pure builtins
  (`len`, `range`, `min`, ...): no closure cells, no other globals, no imports,
  no nested functions or comprehensions, no attribute or global stores;
- every argument is a plain tensor (`torch.Tensor` or `nn.Parameter`, no
  subclass that could run Python in `__torch_function__`) or an immutable
  Python value (numbers, strings, None, dtypes, devices, sizes, slices and
  tuples of those).

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
import types
from typing import Any, Dict, Optional, Tuple

import torch

from carve.rewriters.unbound import UNBOUND  # plain Python: no libcst, no torch

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

_OPEN_OPCODES = frozenset(
    name for name in ("LOAD_DEREF", "LOAD_CLOSURE", "LOAD_CLASSDEREF", "STORE_DEREF", "IMPORT_NAME", "IMPORT_FROM",
                      "STORE_ATTR", "DELETE_ATTR", "STORE_GLOBAL", "DELETE_GLOBAL", "MAKE_FUNCTION",
                      "LOAD_BUILD_CLASS", "YIELD_VALUE", "SETUP_WITH", "BEFORE_WITH", "LOAD_FROM_DICT_OR_DEREF")
    if name in dis.opmap)

# code object -> its global names, or None when the code itself is open.
_code_globals: Dict[types.CodeType, Optional[Tuple[str, ...]]] = {}


def _global_names(code: types.CodeType) -> Optional[Tuple[str, ...]]:
    """The globals `code` reads, or None if its instructions alone make it open."""
    if code in _code_globals:
        return _code_globals[code]
    names: Optional[Tuple[str, ...]] = None
    if not code.co_freevars and not code.co_cellvars and not any(
            isinstance(c, types.CodeType) for c in code.co_consts):
        found = []
        for instruction in dis.get_instructions(code):
            if instruction.opname in _OPEN_OPCODES:
                break
            if instruction.opname == "LOAD_GLOBAL":
                found.append(instruction.argval)
        else:
            names = tuple(dict.fromkeys(found))
    _code_globals[code] = names
    return names


def _is_torch_module(value: Any) -> bool:
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


def _closed_value(value: Any) -> bool:
    kind = type(value)
    if kind in _PLAIN_TENSORS:
        return True
    if kind in _IMMUTABLE_TYPES or kind is torch.Size:
        return True
    if kind is tuple:
        return all(_closed_value(v) for v in value)
    return value is _UNBOUND


def is_closed(fn: Any, args: tuple) -> bool:
    """True if carve's own tracer can capture `fn(*args)` completely (see the module docstring)."""
    if not isinstance(fn, types.FunctionType):
        return False
    names = _global_names(fn.__code__)
    if names is None:
        return False
    if not all(_closed_global(fn, name) for name in names):
        return False
    return all(_closed_value(a) for a in args)


def open_reason(fn: Any, args: tuple) -> str:
    """Why `fn(*args)` is not closed, for `carve.explain` and the logs."""
    if not isinstance(fn, types.FunctionType):
        return "not a Python function"
    names = _global_names(fn.__code__)
    if names is None:
        return "closure cells, nested functions, imports or attribute/global stores in the region"
    for name in names:
        if not _closed_global(fn, name):
            return f"reads global {name!r}"
    for i, a in enumerate(args):
        if not _closed_value(a):
            return f"argument {i} is a {type(a).__name__}"
    return "closed"
