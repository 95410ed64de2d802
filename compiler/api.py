"""`carve.compile`: the decorator, for functions, methods, lambdas and modules.

    @carve.compile                          # inductor, graph breaks allowed
    def f(x): ...

    @carve.compile(backend="eager", fullgraph=True)
    def g(x): ...

    model = carve.compile(MyModule())       # compiles forward; parameters, state_dict,
                                            # train()/eval() are the module's own

Nothing is parsed until the first call. A function whose source carve cannot
read or handle runs eagerly, and carve says why once (fullgraph: an error).
"""

from __future__ import annotations

import functools
import logging
import types
import weakref

from carve.pipeline import Build, build
from carve.regionset import options_from
from carve.runtime import state
from carve.runtime.config import CompileOptions
from carve.runtime.errors import BreakEvent, GraphBreakError
from carve.runtime.region import GraphRegion
from carve.source import SourceUnavailable, where

log = logging.getLogger("carve")
# Rebuilding a function for breaks found while tracing stops after this many rebuilds.
MAX_REBUILDS = 16


def compile(fn=None, *, fullgraph: bool = False, backend="inductor", dynamic=None, options=None,
            mode=None, recompile_limit: int = 8, disable: bool = False):
    """Compile `fn` (a function, method, lambda or nn.Module) with carve; see the module docstring."""
    compile_options = options_from(backend, fullgraph, dynamic, options, mode, recompile_limit)
    if not isinstance(disable, bool):
        raise TypeError(f"carve.compile: disable must be a bool, got {disable!r}")

    def wrap(target):
        if disable:
            return target
        return _wrap(target, compile_options)

    if fn is None:
        return wrap
    return wrap(fn)


def _wrap(target, options: CompileOptions):
    if isinstance(target, (CompiledFunction, CompiledModule)):
        return target
    if _is_module(target):
        return CompiledModule(target, options)
    if isinstance(target, types.MethodType):
        return types.MethodType(CompiledFunction(target.__func__, options), target.__self__)
    if isinstance(target, (staticmethod, classmethod)):
        return type(target)(CompiledFunction(target.__func__, options))
    if not isinstance(target, types.FunctionType):
        if callable(target):
            raise TypeError(
                f"carve.compile expects a Python function, method, lambda or nn.Module; "
                f"got {type(target).__name__} (builtins and C functions have no source to compile)"
            )
        raise TypeError(f"carve.compile expects a callable, got {type(target).__name__}")
    return CompiledFunction(target, options)


def _dynamo_compiling() -> bool:
    from carve.runtime.compat import is_dynamo_compiling

    return is_dynamo_compiling()


def _is_module(obj) -> bool:
    import torch

    return isinstance(obj, torch.nn.Module)


class CompiledFunction:
    """A function compiled by carve; behaves like the function (and binds like one as a method)."""

    def __init__(self, fn: types.FunctionType, options: CompileOptions) -> None:
        self.fn = fn
        self.options = options
        self._impl = None
        self._build: Build | None = None
        self._forced_breaks: dict[int, tuple[str, str]] = {}
        self._rebuilds = 0
        self._eager_reason: str | None = None
        functools.update_wrapper(self, fn)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<carve.compile of {self.fn.__qualname__} at {where(self.fn)}>"

    def __call__(self, *args, **kwargs):
        if _dynamo_compiling():
            # Dynamo is capturing a region that calls this function: it traces the body inline.
            return self.fn(*args, **kwargs)
        if state.is_compiling() or state.is_disabled():
            # Inside another region's trace the function is traced inline (one graph);
            # under carve.disable it runs as written.
            return self.fn(*args, **kwargs)
        impl = self._impl
        if impl is None:
            impl = self._make(args)
        if self.options.fullgraph:
            with state.fullgraph_scope(True):
                return impl(*args, **kwargs)
        return impl(*args, **kwargs)

    # -- building --------------------------------------------------------------------------
    def _make(self, args):
        if self.fn.__name__ == "<lambda>":
            self._impl = self._lambda_region()
            return self._impl
        try:
            self._build = build(self.fn, self.options, args, self._forced_breaks)
        except SourceUnavailable as error:
            return self._run_eagerly(str(error))
        except GraphBreakError:
            raise
        except Exception as error:  # carve's own failure must never cost the user a result
            if self.options.fullgraph:
                raise
            log.warning("carve: could not compile %s (%s: %s); running it eagerly",
                        self.fn.__qualname__, type(error).__name__, error, exc_info=log.isEnabledFor(logging.DEBUG))
            return self._run_eagerly(f"{type(error).__name__}: {error}")
        self._build.regions.on_break = self._on_break
        self._impl = self._build.function
        return self._impl

    def _lambda_region(self):
        code = self.fn.__code__
        region = GraphRegion(self.fn, name="<lambda>", options=self.options, filename=code.co_filename,
                             first_line=code.co_firstlineno, last_line=code.co_firstlineno)

        def call_lambda(*args, **kwargs):
            if kwargs:
                return self.fn(*args, **kwargs)
            return region(*args)

        return call_lambda

    def _run_eagerly(self, reason: str):
        if self.options.fullgraph:
            raise GraphBreakError.from_parts("CRV017", reason, self.fn.__code__.co_filename, self.fn.__code__.co_firstlineno)
        if self._eager_reason is None:
            log.warning("carve: running %s eagerly: %s", self.fn.__qualname__, reason)
        self._eager_reason = reason
        self._impl = self.fn
        return self.fn

    def _on_break(self, event: BreakEvent) -> None:
        """A trace found a break static analysis missed: re-split at that line on the next call."""
        if event.lineno in self._forced_breaks or self._rebuilds >= MAX_REBUILDS:
            return  # the region stays eager; rebuilding would not change the split
        code, message = event.code, event.message
        if len(event.user_stack) > 1:
            # The break is inside a callee: whether it is an error is decided there (by the
            # callee's own error_on_graph_break setting), not at this call site.
            filename, line, function, _ = event.user_stack[-1]
            code, message = "CRV016", f"{function}() breaks the graph at {filename}:{line} ({event.code}: {event.message})"
        self._forced_breaks[event.lineno] = (code, message)
        self._rebuilds += 1
        self._impl = None

    # -- introspection (carve.explain, tests) ------------------------------------------------
    @property
    def generated_source(self) -> str | None:
        return self._build.text if self._build else None

    @property
    def regions(self):
        return self._build.regions.regions if self._build else []


class CompiledModule:
    """An nn.Module whose forward runs through carve; everything else is the module's own."""

    def __init__(self, module, options: CompileOptions) -> None:
        object.__setattr__(self, "_orig_mod", module)
        forward = type(module).forward
        object.__setattr__(self, "_compiled_forward", CompiledFunction(forward, options))
        object.__setattr__(self, "options", options)

    def __call__(self, *args, **kwargs):
        module = self._orig_mod
        if _has_hooks(module):
            # Hooks run as nn.Module.__call__ runs them, around the compiled forward.
            module.forward = types.MethodType(self._compiled_forward, module)
            try:
                return module(*args, **kwargs)
            finally:
                del module.forward
        return self._compiled_forward(module, *args, **kwargs)

    def forward(self, *args, **kwargs):
        return self._compiled_forward(self._orig_mod, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._orig_mod, name)

    def __setattr__(self, name, value):
        setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        delattr(self._orig_mod, name)

    def __repr__(self) -> str:
        return f"CarveCompiled({self._orig_mod!r})"

    def __dir__(self):
        return dir(self._orig_mod)

    def train(self, mode: bool = True):
        self._orig_mod.train(mode)
        return self

    def eval(self):
        self._orig_mod.eval()
        return self

    def to(self, *args, **kwargs):
        self._orig_mod.to(*args, **kwargs)
        return self


def _has_hooks(module) -> bool:
    import torch.nn.modules.module as module_impl

    return bool(
        module._forward_hooks or module._forward_pre_hooks or module._backward_hooks
        or getattr(module_impl, "_global_forward_hooks", None) or getattr(module_impl, "_global_forward_pre_hooks", None)
    )


# callee -> [(options, its carve-compiled version)], for `RegionSet.compiled` (nested frames):
# a callee reached from callers compiled with different options is compiled once per options.
_nested: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def compile_nested(fn, options: CompileOptions):
    """The compiled version of a callee that breaks its caller's graph; plain callables pass through."""
    if isinstance(fn, (CompiledFunction, CompiledModule)) or state.is_disabled():
        return fn
    if isinstance(fn, types.MethodType):
        compiled = compile_nested(fn.__func__, options)
        return fn if compiled is fn.__func__ else types.MethodType(compiled, fn.__self__)
    if _is_module(fn):
        compiled_forward = compile_nested(type(fn).forward, options)
        return fn if compiled_forward is type(fn).forward else functools.partial(compiled_forward, fn)
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return fn
    from carve.resolver import is_user_code
    from carve.runtime.compat import Marker, classify_callable

    if not is_user_code(fn.__code__) or classify_callable(fn) is not Marker.NONE:
        return fn
    versions = _nested.setdefault(fn, [])
    for known_options, compiled in versions:
        if known_options is options or known_options == options:
            return compiled
    compiled = CompiledFunction(fn, options)
    versions.append((options, compiled))
    return compiled
