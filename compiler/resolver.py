"""Resolve the calls of a function against the running program.

The static analysis asks, for every call, what the callee is. Here the
answer comes from the live objects the name is bound to (closure cells,
globals, builtins, and the first argument for `self.layer(x)`), so aliases and
torch's own markers are recognised by identity:

    gb = torch._dynamo.graph_break      gb()            -> GRAPH_BREAK
    helper = torch.compiler.disable(h)  helper(x)       -> DISABLED
    def noisy(x): print(x); ...         noisy(x)        -> USER_FUNCTION with a CRV003 finding
    @torch.no_grad()                    evaluate(m)     -> USER_FUNCTION: evaluate's own body,
    def evaluate(m): ...                                   behind torch's wrapper, is analysed

User callees are analysed from their own source (cached per code object), so
a break three calls deep is reported at the call in the compiled function.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import random
import sys
import types

import libcst as cst

from carve.rewriters.analysis import TRACEABLE_CONTEXT_MANAGERS, ModuleContext, analyze_function
from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.findings import Finding
from carve.rewriters.names import dotted_name
from carve.rewriters.rules import crv010_generator as generator_rule
from carve.rewriters.rules import crv019_python_side_effect as python_side_effect
from carve.rewriters.rules import crv022_handler_misses_graph_error as handler_misses_graph_error
from carve.runtime import compat
from carve.runtime.compat import Marker
from carve.runtime.user_code import is_user_code

from carve.source import SourceUnavailable, function_source

IO_BUILTINS = {builtins.print, builtins.input, builtins.open, builtins.breakpoint}
MAX_CALLEE_DEPTH = 4
# Library wrappers (torch.no_grad, autocast, ...) looked through to reach the user's function.
MAX_WRAPPER_LAYERS = 8
# code object -> CalleeInfo for analysed user functions (and None while in progress).
_callee_cache: dict[types.CodeType, CalleeInfo | None] = {}


def add_module_aliases(imports, fn) -> None:
    """Teach a function-only import table the modules its file imported (`np` -> numpy).

    The decorator path parses just the function's source, so `import numpy as np` at the top
    of the user's file is known only through the function's live globals.
    """
    known = _torch_context_manager_names()
    for name, value in getattr(fn, "__globals__", {}).items():
        if name in imports.aliases:
            continue
        if isinstance(value, types.ModuleType):
            imports.aliases[name] = value.__name__
        elif id(value) in known:  # `from torch.nn.attention import sdpa_kernel`
            imports.aliases[name] = known[id(value)]


@functools.lru_cache(maxsize=1)
def _torch_context_manager_names() -> dict[int, str]:
    """id(object) -> the name the rules spell it by, for torch's own context managers."""
    names: dict[int, str] = {}
    for dotted in sorted(TRACEABLE_CONTEXT_MANAGERS):
        module_name, _, attribute = dotted.rpartition(".")
        try:
            value = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):
            continue
        names.setdefault(id(value), dotted)
    return names


class LiveResolver:
    def __init__(self, fn, first_arg=None, *, has_first_arg: bool = False, depth: int = 0) -> None:
        self.fn = fn
        self.globals = getattr(fn, "__globals__", {})
        code = fn.__code__
        self.closure = dict(zip(code.co_freevars, fn.__closure__ or ()))
        self.first_param = code.co_varnames[0] if code.co_argcount else None
        self.first_arg = first_arg
        self.has_first_arg = has_first_arg
        self.depth = depth
        # The first call's other arguments, by parameter name: `rng.uniform()` on a
        # random.Random passed in is found (a resolved call can only make a statement eager).
        self.arguments: dict = {}

    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        if not dotted:
            return None
        if any(isinstance(arg.value, cst.Name) and isinstance(self.arguments.get(arg.value.value), random.Random)
               for arg in call.args):
            # The callee may draw from it: run the call as Python (it is compiled on its own,
            # where the draw is found and kept eager).
            return CalleeInfo(CalleeKind.USER_FUNCTION, dotted, findings=(Finding(
                python_side_effect.RULE.code, f"{dotted}() is given a random.Random, whose draws are Python state", 0,
                frozen_by_tracing=True),))
        found, obj = self._lookup(dotted)
        if not found:
            return None
        return classify(obj, dotted, self.depth)

    def _lookup(self, dotted: str):
        head, *rest = dotted.split(".")
        if head in self.closure:
            try:
                obj = self.closure[head].cell_contents
            except ValueError:
                return False, None
        elif head == self.first_param and self.has_first_arg:
            obj = self.first_arg
        elif head in self.arguments:
            obj = self.arguments[head]
            if not isinstance(obj, random.Random):
                return False, None  # other arguments may differ on later calls: unknown
        elif head in self.globals:
            obj = self.globals[head]
        elif hasattr(builtins, head) and head not in self.fn.__code__.co_varnames:
            obj = getattr(builtins, head)
        else:
            return False, None
        for attribute in rest:
            try:
                obj = inspect_getattr(obj, attribute)
            except AttributeError:
                return False, None
        return True, obj


def inspect_getattr(obj, attribute: str):
    """getattr without running properties of user objects (a property could have side effects)."""
    import inspect

    static = inspect.getattr_static(obj, attribute)
    if isinstance(static, property):
        raise AttributeError(attribute)
    return getattr(obj, attribute)


def classify(obj, name: str, depth: int = 0) -> CalleeInfo | None:
    """What calling `obj` means for the graph."""
    from carve.api import CompiledFunction, CompiledModule

    try:
        if obj in IO_BUILTINS:
            return CalleeInfo(CalleeKind.IO, name)
    except TypeError:
        pass  # unhashable
    marker = compat.classify_callable(obj)
    simple = {
        Marker.GRAPH_BREAK: CalleeKind.GRAPH_BREAK,
        Marker.SKIP_FRAME: CalleeKind.SKIP_FRAME,
        Marker.DISABLED: CalleeKind.DISABLED,
        Marker.DISABLED_NONRECURSIVE: CalleeKind.DISABLED,
        Marker.DISALLOWED: CalleeKind.DISALLOWED,
        Marker.NONSTRICT_TRACE: CalleeKind.TRACEABLE,
        Marker.ALLOW_IN_GRAPH: CalleeKind.TRACEABLE,
        Marker.CUSTOM_OP: CalleeKind.TRACEABLE,
        Marker.IS_COMPILING: CalleeKind.TRACEABLE,
    }
    if marker in simple:
        return CalleeInfo(simple[marker], name)
    state = _python_state_call(obj, name)
    if state is not None:
        return state
    if isinstance(obj, CompiledModule):
        obj = obj._orig_mod
    function: object  # a Python function is checked for below
    if isinstance(obj, CompiledFunction):
        function = obj.fn
    elif _is_module(obj):
        function = getattr(type(obj).forward, "__func__", type(obj).forward)
    elif isinstance(obj, types.MethodType):
        function = obj.__func__
    elif isinstance(obj, types.FunctionType):
        function = obj
    else:
        return None
    if not isinstance(function, types.FunctionType):
        return None
    function = wrapped_user_function(function) or function
    if not is_user_code(function.__code__):
        return None
    if function.__name__ == "<lambda>":
        return CalleeInfo(CalleeKind.USER_FUNCTION, name)
    return _analyse_user_function(function, name, depth)


def wrapped_user_function(wrapper: types.FunctionType) -> types.FunctionType | None:
    """The user function a library's `functools.wraps` wrapper calls through a closure cell, or None.

        @torch.no_grad()                    decorate_context(*args, **kwargs):    # torch's code
        def evaluate(model): ...                with ctx_factory():
                                                    return func(*args, **kwargs)   # func: evaluate

    A call of the wrapper is a call of `evaluate` for the analysis (its breaks are the caller's),
    and `api.compile_nested` compiles `evaluate` inside a copy of the wrapper (`api._rewrap`).
    Stacked library wrappers are looked through one at a time; a wrapper that is the user's own
    code is the user function itself (its body, which calls the wrapped one, is analysed).
    """
    function = wrapper
    for _ in range(MAX_WRAPPER_LAYERS):
        if is_user_code(function.__code__):
            return function if function is not wrapper else None
        inner = getattr(function, "__wrapped__", None)
        if not isinstance(inner, types.FunctionType) or not _held_in_cell(function, inner):
            return None  # a wrapper that cannot be re-pointed at a compiled function
        function = inner
    return None


def _held_in_cell(function: types.FunctionType, value) -> bool:
    for cell in function.__closure__ or ():
        try:
            if cell.cell_contents is value:
                return True
        except ValueError:  # an empty cell
            continue
    return False


def _python_state_call(obj, name: str) -> CalleeInfo | None:
    """A call whose result is Python state a graph would freeze, so it stays Python (CRV019):

        rng = random.Random(0); rng.random()       # a draw from a Python RNG instance
        @functools.lru_cache                       # a cached helper: eager returns the cached
        def scale(name): return CONFIG[name]       # value, a trace would re-read CONFIG
    """
    if isinstance(obj, functools._lru_cache_wrapper):
        wrapped = getattr(obj, "__wrapped__", None)
        code = getattr(wrapped, "__code__", None)
        if code is not None and is_user_code(code):
            return CalleeInfo(CalleeKind.USER_FUNCTION, name, findings=(Finding(
                python_side_effect.RULE.code, f"{name}() is an lru_cache: its cache is Python state", code.co_firstlineno,
                frozen_by_tracing=True),),
                filename=code.co_filename)
    if isinstance(getattr(obj, "__self__", None), random.Random) and callable(obj):
        return CalleeInfo(CalleeKind.USER_FUNCTION, name, findings=(Finding(
            python_side_effect.RULE.code, f"{name}() draws from a random.Random instance", 0, frozen_by_tracing=True),))
    return None


def _is_module(obj) -> bool:
    torch_nn = sys.modules.get("torch.nn")
    return torch_nn is not None and isinstance(obj, torch_nn.Module)


def _analyse_user_function(function: types.FunctionType, name: str, depth: int) -> CalleeInfo:
    code = function.__code__
    if code in _callee_cache:
        cached = _callee_cache[code]
        return cached if cached is not None else CalleeInfo(CalleeKind.USER_FUNCTION, name)
    if depth >= MAX_CALLEE_DEPTH:
        return CalleeInfo(CalleeKind.USER_FUNCTION, name)
    _callee_cache[code] = None  # recursion guard
    try:
        source = function_source(function)
    except SourceUnavailable:
        info = CalleeInfo(CalleeKind.USER_FUNCTION, name)
    else:
        context = ModuleContext(source.module, source.filename, source.first_line - 1)
        add_module_aliases(context.imports, function)
        resolver = LiveResolver(function, depth=depth + 1)
        analysis = analyze_function(source.node, context, resolver)
        findings = list(analysis.breaks)
        whole = analysis.whole_function
        # A generator function is called and consumed inline by the capture (Dynamo traces
        # generators); only what its body does breaks the caller's graph.
        if whole is not None and whole.code != generator_rule.RULE.code and whole not in findings:
            findings.insert(0, whole)
        findings = [f for f in findings if f.code != generator_rule.RULE.code]
        local = _local_containers(source.node)
        # A handler that must see what the callee's graph raises (CRV022): traced inline, the callee's
        # try would be inside the caller's graph; its call runs eagerly and the callee compiles alone.
        findings += [f for f in analysis.findings if f.code == handler_misses_graph_error.RULE.code]
        findings += [f for f in analysis.findings if f.code == python_side_effect.RULE.code and not _on_local(f, local)]
        info = CalleeInfo(CalleeKind.USER_FUNCTION, name, tuple(findings), source.filename, for_compiler=True)
    _callee_cache[code] = info
    return info


class _LocalContainers(cst.CSTVisitor):
    """Names a function binds to a container it creates itself (`outs = []`, `d = dict()`)."""

    MAKERS = ("list", "dict", "set", "collections.deque", "collections.OrderedDict", "collections.defaultdict")

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        fresh = isinstance(value, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)) or (
            isinstance(value, cst.Call) and (dotted_name(value.func) or "") in self.MAKERS)
        if fresh:
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.names.add(target.target.value)


def _local_containers(func: cst.FunctionDef) -> set[str]:
    visitor = _LocalContainers()
    func.body.visit(visitor)
    return visitor.names


def _on_local(finding, local: set[str]) -> bool:
    """A side effect on a container the callee made itself is invisible to its caller."""
    return finding.subject in local
