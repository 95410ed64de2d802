"""`carve.compile`: the decorator, for every callable torch.compile accepts.

    @carve.compile                          # inductor, graph breaks allowed
    def f(x): ...

    @carve.compile(backend="eager", fullgraph=True)
    def g(x): ...

    model = carve.compile(MyModule())       # an nn.Module of MyModule's class with a compiled
                                            # forward; parameters, state_dict, hooks, train()
                                            # are the module's own
    step = carve.compile(torch.no_grad()(f))   # the decorator's wrapper runs as written and
                                               # f's body is compiled
    gelu = carve.compile(F.gelu)            # no source: one graph of the whole call (Dynamo)
    p = carve.compile(functools.partial(f, scale=2))   # the partial's arguments are kept

Nothing is parsed until the first call. A function whose source carve cannot
read or handle runs eagerly, and carve says why once (fullgraph: an error).
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import types
import weakref
from collections.abc import Callable
from typing import Any

from carve import as_written
from carve.explain_session import fresh_tables, register_regionset, unregister_regionset
from carve.report import track as track_for_report
from carve.pipeline import Build, build, follow_defaults
from carve.regionset import options_from
from carve.runtime import state
from carve.runtime.log import log_once, perf_log
from carve.runtime.config import CompileOptions
from carve.runtime.errors import GraphBreakError
from carve.runtime.whole_call_check import WholeCallCheck
from carve.rewriters.rules import crv017_untraceable as untraceable
from carve.rewriters.rules import crv023_reads_own_frame as reads_own_frame
from carve.rewriters.verify import OutlineVerificationError
from carve.runtime.region import GraphRegion
from carve.runtime.user_code import is_torch_file, is_user_code
from torch.compiler import is_dynamo_compiling as _is_dynamo_compiling
from carve.source import SourceUnavailable, where

log = logging.getLogger("carve")
_thread_state = state._state
_NOT_SEEN = object()

# Rebuilding a function for breaks found while tracing stops after this many rebuilds.
MAX_REBUILDS = 16
# Compiled versions kept per function or module class (one per distinct options).
MAX_VERSIONS = 8


def compile(fn=None, *, fullgraph: bool = False, backend="inductor", dynamic=None, options=None,
            mode=None, recompile_limit: int = 8, disable: bool = False):
    """Compile `fn` with carve: torch.compile's signature and semantics, with graph breaks found
    before the program runs and the regions around them still compiled.

        @carve.compile(backend="aot_eager")
        def step(model, x):
            y = model(x)
            print(y.mean())         # stays Python; the tensor work around it is compiled
            return y.relu()

    Args:
        fn: any callable torch.compile accepts: a function (decorated by `functools.wraps`
            wrappers, `torch.no_grad()`, autocast: their behaviour is kept), a bound method,
            an `nn.Module` (the result is an `nn.Module` of the same class, same state_dict
            keys), `functools.partial`, a callable object, a builtin or torch function. None
            returns a decorator.
        fullgraph: one graph or `carve.GraphBreakError` naming the user's file and line.
        backend: a torch.compile backend name ("inductor", "aot_eager", "eager") or a callable
            `(GraphModule, example_inputs) -> callable`.
        dynamic: None (sizes become symbolic once they change), True (symbolic from the first
            call), False (every size specialised).
        options, mode: Inductor options, as torch.compile (mode presets fill `options`).
        recompile_limit: compiled versions kept per region; inputs that match none of them then
            run eagerly (CRV020, said once on `carve.recompiles`).
        disable: return `fn` itself (as `torch.compile(disable=True)`).

    Returns:
        A callable of the same kind as `fn` that compiles on its first call. Invalid arguments
        raise `TypeError`/`ValueError` at once, before anything is compiled.
    """
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
    """What `carve.compile(target)` returns, for each kind of callable torch.compile accepts."""
    if isinstance(target, (CompiledFunction, CompiledModule, WholeCall)) or compiled_function_of(target):
        return target
    if _is_module(target):
        return compile_module(target, options)
    if isinstance(target, types.MethodType):
        return types.MethodType(_wrap(target.__func__, options), target.__self__)
    if isinstance(target, (staticmethod, classmethod)):
        return type(target)(_wrap(target.__func__, options))
    if isinstance(target, functools.partial):
        # The partial's own arguments and keywords are kept; the function it calls is compiled.
        return functools.partial(_wrap(target.func, options), *target.args, **target.keywords)
    if isinstance(target, types.FunctionType):
        return _wrap_function(target, options)
    if not callable(target):
        raise TypeError(f"carve.compile expects a callable, got {type(target).__name__}")
    call = getattr(type(target), "__call__", None)  # noqa: B004 - the class's own method, not callability
    if isinstance(call, types.FunctionType) and not _is_torch_code(call):
        # An object with its own __call__: that method is what compiles, bound to the object.
        return types.MethodType(_wrap_function(call, options), target)
    # Builtins and C functions (torch.sin, F.gelu) have no source: one graph of the whole call.
    return WholeCall(target, options)


def _wrap_function(fn: types.FunctionType, options: CompileOptions):
    """A Python function: its own source is compiled; a decorator's wrapper is kept around it."""
    inner = getattr(fn, "__wrapped__", None)
    if inner is not None and callable(inner):
        rewrapped = _rewrap(fn, inner, options)
        # A wrapper that does not hold the function in a closure cell cannot be re-pointed:
        # Dynamo captures the whole call, wrapper included.
        return rewrapped if rewrapped is not None else WholeCall(fn, options)
    if _is_torch_code(fn):
        return WholeCall(fn, options)
    return _version(_nested, fn, options, lambda: CompiledFunction(fn, options))


def _version(table: "weakref.WeakKeyDictionary", key, options: CompileOptions, make, *,
             skip_local_definitions: bool = True, current: Callable[[Any], bool] | None = None):
    """The version of `key` compiled with `options` (equal options: the same version), made by
    `make()` the first time.

    Compiling the same code again reuses what was compiled, as torch.compile reuses Dynamo's
    cache on the code object: `carve.compile(model)` inside a helper called every step, each
    block of a model compiled on its own, `carve.compile(model.generate)` per request. A new
    version for each would parse the source and trace every region again, each time.
    """
    explain_tables = fresh_tables()
    if explain_tables is not None:
        # carve.explain: compiled afresh, once per run (a callee called in a loop is one version),
        # and not kept after it.
        table = explain_tables.setdefault(id(table), weakref.WeakKeyDictionary())
    if skip_local_definitions and "<locals>" in getattr(key, "__qualname__", ""):
        # Made again on every call of the function that defines it: an entry would keep each
        # one (a function and its closure, a class) alive. Each is compiled on its own.
        return make()
    versions = table.setdefault(key, [])
    if current is not None:  # versions made for what `key` no longer is are dropped
        versions[:] = [(known, version) for known, version in versions if current(version)]
    for known_options, version in versions:
        if known_options is options or known_options == options:
            return version
    if len(versions) >= MAX_VERSIONS:
        del versions[0]  # the oldest: a backend made anew for each compile must not pile up
    version = make()
    versions.append((options, version))
    return version


def _rewrap(wrapper: types.FunctionType, inner, options: CompileOptions):
    """The decorator's wrapper, as written, around the compiled function it wraps.

        @torch.no_grad()                    decorate_context(*args, **kwargs):    # torch's, eager
        def generate(self, idx, n, t=1.0):      with ctx_factory():
            ...                                     return func(*args, **kwargs)   # func: compiled

    `functools.wraps` wrappers (torch.no_grad, autocast, transformers' can_return_tuple and
    output capturing, argument checks) call the function they wrap through a closure cell: a
    copy of the wrapper whose cell holds the compiled function keeps the wrapper's behaviour,
    defaults and signature, and compiles the body. Stacked decorators unwrap one at a time.
    """
    closure = wrapper.__closure__ or ()
    index = next((i for i, cell in enumerate(closure) if _cell_holds(cell, inner)), None)
    if index is None:
        return None
    compiled_inner = _wrap(inner, options)
    cells = list(closure)
    cells[index] = types.CellType(compiled_inner)  # the other cells stay shared: the wrapper's state is one
    copy = types.FunctionType(wrapper.__code__, wrapper.__globals__, wrapper.__name__, wrapper.__defaults__,
                              tuple(cells))
    copy.__kwdefaults__ = wrapper.__kwdefaults__
    copy.__dict__.update(wrapper.__dict__)
    copy.__qualname__ = wrapper.__qualname__
    copy.__doc__ = wrapper.__doc__
    copy.__module__ = wrapper.__module__
    # functools.wraps' attribute, and carve's own: what carve.explain finds behind the wrapper
    copy.__wrapped__ = compiled_inner  # type: ignore[attr-defined] # an attribute of a function
    copy.__carve_compiled__ = compiled_function_of(compiled_inner)  # type: ignore[attr-defined]
    return copy


def _cell_holds(cell, value) -> bool:
    try:
        return cell.cell_contents is value
    except ValueError:  # an empty cell
        return False


def compiled_function_of(obj):
    """The CompiledFunction behind what carve.compile returned (through wrappers and methods)."""
    if isinstance(obj, CompiledFunction):
        return obj
    if isinstance(obj, types.MethodType):
        return compiled_function_of(obj.__func__)
    if isinstance(obj, CompiledModule):
        return compiled_function_of(type(obj).forward)  # type: ignore[attr-defined] # set on each compiled class
    return getattr(obj, "__carve_compiled__", None) if isinstance(obj, types.FunctionType) else None


def _is_torch_code(fn) -> bool:
    """torch's own Python (F.relu, torch's context-manager decorators): Dynamo traces it whole."""
    code = getattr(fn, "__code__", None)
    return code is not None and is_torch_file(code.co_filename)


def _is_module(obj) -> bool:
    import torch

    return isinstance(obj, torch.nn.Module)


class CompiledFunction:
    """A function compiled by carve; behaves like the function (and binds like one as a method)."""

    def __init__(self, fn: types.FunctionType, options: CompileOptions) -> None:
        # First: the function's __dict__ is copied onto this object, and a `functools.wraps`
        # wrapper of another carve.compile object carries that object's state in its own.
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = options
        # What a call runs: the split, a whole call, the function itself (eager), or a lambda's region.
        self._impl: Callable[..., Any] | None = None
        self._whole_call_check: WholeCallCheck | None = None  # see _weigh_whole_calls
        # What a call passing exactly `_forward_arity` positional arguments may run instead of
        # `_impl`: the one region a function's body is, or a whole call's region (`_forwarding`).
        self._forward: Callable[..., Any] | None = None
        self._forward_arity = -1
        self._build: Build | None = None
        self._forced_breaks: dict[int, tuple[str, str]] = {}
        self._rebuilds = 0
        self._eager_reason: str | None = None
        # The defaults the function had at the last call that went the slow way: while they are
        # the same objects, the compiled version already took them.
        self._defaults_seen: object = _NOT_SEEN
        self._kwdefaults_seen: object = _NOT_SEEN
        # Whether every region has settled as Python, checked on some calls (compiler/as_written.py):
        # calls left until the next check (0: none scheduled), the call count the check is due at,
        # and the function's calls once it runs as written (None until then).
        self._settle_countdown = 0
        self._settle_at = 0
        self._may_run_as_written = False
        self._as_written: Callable[..., Any] | None = None
        track_for_report(self)  # CARVE_REPORT=DIR: its page is written at exit (a weak reference)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<carve.compile of {self.fn.__qualname__} at {where(self.fn)}>"

    # The function's defaults, read and rebound through the compiled object too: one set of
    # defaults, which every call takes as it is then (as eager does).
    @property
    def __defaults__(self):
        return self.fn.__defaults__

    @__defaults__.setter
    def __defaults__(self, value) -> None:
        self.fn.__defaults__ = value

    @property
    def __kwdefaults__(self):
        return self.fn.__kwdefaults__

    @__kwdefaults__.setter
    def __kwdefaults__(self, value) -> None:
        self.fn.__kwdefaults__ = value

    def __call__(self, *args, **kwargs):
        forward = self._forward
        if forward is not None and not kwargs and len(args) == self._forward_arity:
            return forward(*args)  # the region's call checks what this one would (see _forwarding)
        impl = self._impl
        if impl is not None and not _thread_state.scoped and not _is_dynamo_compiling():
            fn = self.fn
            if fn.__defaults__ is self._defaults_seen and fn.__kwdefaults__ is self._kwdefaults_seen \
                    and not self.options.fullgraph:
                if self._settle_countdown:
                    self._settle_countdown -= 1
                    if self._settle_countdown <= 0:  # below 0 only when threads raced: check anyway
                        impl = self._check_settled()
                return impl(*args, **kwargs)  # every call but the first, unless something changed
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        if _is_dynamo_compiling() or _thread_state.disabled:
            # Dynamo is capturing a region that calls this function: it traces the body inline.
            # Under carve.disable it runs as written.
            return self.fn(*args, **kwargs)
        impl = self._impl
        if impl is None:
            impl = self._make(args)
            self._forward = self._forwarding(impl)
            self._forward_arity = self.fn.__code__.co_argcount
            if self.fn.__name__ == "forward" and args and _is_module(args[0]) and _first_parameter_is_self(self.fn):
                self._compile_as_the_model(impl)
        fn = self.fn
        self._defaults_seen, self._kwdefaults_seen = fn.__defaults__, fn.__kwdefaults__
        build = self._build
        if build is not None and (build.function.__defaults__ is not fn.__defaults__
                                  or build.function.__kwdefaults__ is not fn.__kwdefaults__):
            follow_defaults(build.function, fn)  # rebound since the last call
        if self.options.fullgraph:
            with state.fullgraph_scope(True):
                return impl(*args, **kwargs)
        return impl(*args, **kwargs)

    # -- building --------------------------------------------------------------------------
    def _compile_as_the_model(self, impl) -> None:
        """A module's `forward` is the model: its regions are compiled from their first call, as
        torch.compile(model) compiles it, not priced as the glue around a model is
        (runtime/cost_check.py, `worth_compiling`): its compile is one torch.compile's users pay
        too, for the steady state they compiled the model for."""
        regions = [impl.region, impl.positional] if isinstance(impl, WholeCall) else (
            self._build.regions.regions if self._build is not None and impl is self._build.function else [])
        for region in regions:
            if region is not None:
                region.compile_from_the_first_call()

    def _forwarding(self, impl):
        """The region a call passing every parameter positionally can call directly, or None.

        The body is one region taking the parameters as they are (`Build.forwarding_region`), or
        Dynamo captures the whole call with the function itself as the region: the region's own
        call then does all this object's call would (Dynamo tracing around it, carve.disable,
        carve's scopes) with one Python frame less. Not under fullgraph, whose scope this object
        opens; not for functions with *args, keyword-only parameters or positional-only ones."""
        code = self.fn.__code__
        if self.options.fullgraph or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS) \
                or code.co_kwonlyargcount or code.co_posonlyargcount:
            return None
        if isinstance(impl, WholeCall):
            return impl._positional_call
        build = self._build
        return build.forwarding_region() if build is not None and impl is build.function else None

    def _make(self, args):
        if self.fn.__name__ == "<lambda>":
            self._impl = self._lambda_region()
            return self._impl
        try:
            self._build = build(self.fn, self.options, args, self._forced_breaks)
        except SourceUnavailable as error:
            # Dynamo reads bytecode, not source: the whole call is still captured.
            log.warning("carve: %s; torch._dynamo captures the whole call", error)
            self._impl = WholeCall(self.fn, self.options)
            return self._impl
        except GraphBreakError as refusal:
            if not self.options.fullgraph:
                raise
            # carve's split would make more than one graph, but where torch.compile traces what
            # carve keeps Python (`LOG.append(1)`, `y.nonzero()` between tensor statements), one
            # graph of the whole call still exists: Dynamo captures the call with fullgraph=True,
            # as torch.compile(fullgraph=True) would, and a real break is its GraphBreakError.
            self._impl = WholeCall(self.fn, self.options, static_refusal=refusal)
            return self._impl
        except OutlineVerificationError:
            raise  # CARVE_VERIFY (carve's tests): an invariant broke, which must fail the test
        except Exception as error:  # carve's own failure must never cost the user a result
            if self.options.fullgraph:
                raise
            log.warning("carve: could not compile %s (%s: %s); running it eagerly",
                        self.fn.__qualname__, type(error).__name__, error, exc_info=log.isEnabledFor(logging.DEBUG))
            return self._run_eagerly(f"{type(error).__name__}: {error}")
        if self._build.reads_own_frame_across_a_break:
            unregister_regionset(self._build.regions)
            reason = (f"it reads its own local variables by name (locals(), vars(), eval, exec: "
                      f"{reads_own_frame.RULE.code}) and breaks the graph, so compiled code would show it other names")
            if args and _is_module(args[0]) and _first_parameter_is_self(self.fn):
                return self._run_with_compiled_module(reason, type(args[0]).__name__)
            return self._run_eagerly(reason)
        self._build.regions.on_skip = self._on_skip
        _running_builds[self._build.function.__code__] = self
        self._build.regions.on_kept_for_backward = self._weigh_whole_calls
        if self._build.torch_compile_would_not_break:
            # Under fullgraph carve's split passed `_fullgraph_refusal`: one graph, with at most
            # Python before or after it. Where Dynamo refuses that Python (`next(iterator_arg)`)
            # the split is the fallback, as it runs nothing before the refusal.
            split = self._build.function if self.options.fullgraph else None
            if split is None:
                unregister_regionset(self._build.regions)
            self._impl = WholeCall(self.fn, self.options, findings=self._build.regions.findings, fullgraph_split=split)
            return self._impl
        self._impl = self._build.function
        self._schedule_settle_checks()
        return self._impl

    def _lambda_region(self):
        code = self.fn.__code__
        where_: dict[str, Any] = dict(options=self.options, filename=code.co_filename, first_line=code.co_firstlineno,
                      last_line=code.co_firstlineno)
        region = GraphRegion(self.fn, name="<lambda>", **where_)
        keyword_region = None

        def call_lambda(*args, **kwargs):
            nonlocal keyword_region
            if kwargs:
                if keyword_region is None:
                    keyword_region = GraphRegion(_call_with_keywords(self.fn), name="<lambda>", **where_)
                return keyword_region(args, kwargs)
            return region(*args)

        return call_lambda

    def _run_eagerly(self, reason: str):
        if self.options.fullgraph:
            raise GraphBreakError.from_parts(untraceable.RULE.code, reason, self.fn.__code__.co_filename, self.fn.__code__.co_firstlineno)
        if self._eager_reason is None:
            log.warning("carve: running %s eagerly: %s", self.fn.__qualname__, reason)
        self._eager_reason = reason
        self._impl = self.fn
        return self.fn

    def _run_with_compiled_module(self, reason: str, class_name: str):
        """A module's method carve cannot compile (transformers' `generate` reads its own frame)
        runs as written with `self` the module compiled (`compile_module`: the same module, its
        forward compiled), so every `self(...)` it makes, each decoding step, runs compiled, as
        `carve.compile(model).generate(...)` would:

            generate = carve.compile(model.generate)    # generate: Python; model's forward: compiled
        """
        if self.options.fullgraph:
            return self._run_eagerly(reason)
        fn, options = self.fn, self.options
        if self._eager_reason is None:
            log.warning("carve: running %s as written, with the %s's forward compiled (as carve.compile(model) "
                        "would): %s", fn.__qualname__, class_name, reason)
        self._eager_reason = reason

        def with_compiled_module(module, *args, **kwargs):
            return fn(module_view(module, options), *args, **kwargs)

        self._impl = with_compiled_module
        return with_compiled_module

    # -- running as written (compiler/as_written.py) ----------------------------------------
    def _schedule_settle_checks(self) -> None:
        """A new build: whether it may ever run as written is decided once; if so, checks from its
        second call (compiler/as_written.py)."""
        build = self._build
        self._may_run_as_written = not self.options.fullgraph and build is not None \
            and as_written.may_run_as_written(self.fn, build.function)
        self._restart_settle_checks()

    def _restart_settle_checks(self) -> None:
        """The rewritten function runs: checks from the next call on, counted as from the second."""
        self._as_written = None
        if not self._may_run_as_written:
            self._settle_countdown = 0
            return
        self._settle_countdown = as_written.calls_until_next_check(1)
        self._settle_at = 1 + self._settle_countdown  # the call the check is due at

    def _check_settled(self):
        """Due on some calls: once every region has settled as Python (its callees and models
        too), the function runs as written from this call on. Returns what this call runs."""
        build = self._build
        if build is not None and self._impl is build.function and self.settled_as_written():
            self._as_written = self._impl = as_written.call_as_written(self.fn, build.function)
            build.regions.as_written_from = self._settle_at  # for the report (CARVE_REPORT)
            log_once(("as written", self.fn.__code__), perf_log, logging.INFO,
                     "function %s (%s) runs as written from now on: every region runs as Python",
                     self.fn.__qualname__, where(self.fn))
        else:
            gap = as_written.calls_until_next_check(self._settle_at)
            self._settle_at += gap
            self._settle_countdown = gap
        return self._impl

    def settled_as_written(self, seen: set | None = None) -> bool:
        """Whether this function's calls may run its code as written (compiler/as_written.py)."""
        seen = set() if seen is None else seen
        if self in seen:
            return True  # asked already, higher up (recursion): the others decide
        seen.add(self)
        impl = self._impl
        if impl is not None and (impl is self.fn or impl is self._as_written):
            return True  # run as written already (or eagerly, for a reason said once)
        build = self._build
        if impl is None or build is None or impl is not build.function or not self._may_run_as_written:
            return False  # not yet called, not the rewritten function, or never to run as written
        return as_written.settled(build.regions, seen)

    def _weigh_whole_calls(self, region) -> None:
        """The cost check kept `region` compiled for its backward, unweighed: this function's next
        calls weigh it whole, the backward included when they run it (runtime/whole_call_check.py).
        Meanwhile every call goes through the weighing; then as before."""
        if self._impl is not None and self._impl is self._as_written and self._build is not None:
            # A region of a model it calls was handed here: back to the rewritten function.
            self._impl = self._build.function
            self._restart_settle_checks()
        check = self._whole_call_check
        if check is None or check.done:
            calls, forward = self._impl, self._forward
            if calls is None:
                return

            def restore() -> None:
                if self._impl is weighed:  # not rebuilt meanwhile
                    self._impl, self._forward = calls, forward

            check = self._whole_call_check = WholeCallCheck(on_done=restore, on_backward_outside=self._hand_to_caller)
            weighed = check.wrap(calls)
            self._impl, self._forward = weighed, None
        check.add(region)

    def _hand_to_caller(self, regions: list) -> None:
        """The backward of `regions` runs outside this function's calls (a model's forward): the
        carve function running this one, nearest on the stack, weighs them by its own whole
        calls, which may hold the backward (runtime/whole_call_check.py). None: they stay compiled."""
        frame: types.FrameType | None = sys._getframe(1)
        while frame is not None:
            caller = _running_builds.get(frame.f_code)
            if caller is not None and caller is not self:
                for region in regions:
                    caller._weigh_whole_calls(region)
                return
            frame = frame.f_back

    def _on_skip(self, lines: dict) -> None:
        """Dynamo skipped a region because a break inside one of its loops was reached: those
        lines run as Python from the next call (the rebuilt partition keeps the loop Python)."""
        new = {line: found for line, found in lines.items() if line not in self._forced_breaks}
        if not new or self._rebuilds >= MAX_REBUILDS:
            return
        self._forced_breaks.update(new)
        self._rebuilds += 1
        self._impl = self._forward = None

    # -- introspection (carve.explain, tests) ------------------------------------------------
    @property
    def generated_source(self) -> str | None:
        return self._build.text if self._build else None

    @property
    def regions(self):
        if isinstance(self._impl, WholeCall) and not self._impl.split_runs:
            return self._impl.regions
        return self._build.regions.regions if self._build else []


_NO_KEYWORDS: dict = {}
# The code of each build's rewritten function -> its CompiledFunction (weakly): which carve
# function a frame on the stack runs (CompiledFunction._hand_to_caller).
_running_builds: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()


def _first_parameter_is_self(fn) -> bool:
    code = fn.__code__
    return code.co_argcount > 0 and code.co_varnames[0] == "self"


def _call_with_keywords(fn):
    """`fn` called as `call(args, kwargs)`: a region's arguments are positional."""

    def call(args, kwargs):
        return fn(*args, **kwargs)

    # Dynamo keeps one cache per code object: each wrapped callable gets its own.
    call.__code__ = call.__code__.replace()
    call.__name__ = getattr(fn, "__name__", "call")
    call.__qualname__ = getattr(fn, "__qualname__", call.__name__)
    return call


class WholeCall:
    """A callable with no source of its own to compile (a builtin, a C function, torch's Python,
    a class-based decorator's wrapper): Dynamo captures the whole call as one region.

        gelu = carve.compile(F.gelu)        # one graph of F.gelu, under carve's guards and options
    """

    def __init__(self, target, options: CompileOptions, static_refusal: GraphBreakError | None = None,
                 findings: dict | None = None, fullgraph_split=None) -> None:
        self.target = target
        # carve's own one-graph split of the function, run when Dynamo's fullgraph capture of
        # the whole call refuses (a refusal comes from the trace, before anything has run).
        self.fullgraph_split = fullgraph_split
        self.split_runs = False
        self.options = options
        # What carve's own analysis found first (fullgraph): when Dynamo breaks at that line,
        # carve's rule names the construct better than Dynamo's message.
        self.static_refusal = static_refusal
        name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) or type(target).__name__
        code = getattr(target, "__code__", None)
        first_line = code.co_firstlineno if code else 0
        last_line = max((line for _, _, line in code.co_lines() if line), default=first_line) if code else 0
        where_: dict[str, Any] = dict(name=name, options=options, filename=code.co_filename if code else f"<{name}>",
                      first_line=first_line, last_line=last_line)
        self.region = GraphRegion(_call_with_keywords(target), **where_)
        # A Python function called with positional arguments is captured as itself, so Dynamo
        # sees its arguments as torch.compile would (an input iterator, a list, a module).
        self.positional = GraphRegion(target, **where_) if isinstance(target, types.FunctionType) else None
        # What a call with positional arguments runs when fullgraph is off (see __call__).
        self._positional_call = self.positional.caller if self.positional is not None and not options.fullgraph else None
        for region in (self.region, self.positional):
            if region is not None:
                region.capture_reason = "the whole call is one region"
        # What carve.explain reads of a RegionSet: the static findings, no eager statements.
        self.name, self.filename = name, where_["filename"]
        self.findings = findings or {}
        self.eager_calls: dict = {}
        register_regionset(self)
        functools.update_wrapper(self, target, updated=())

    def __call__(self, *args, **kwargs):
        positional = self._positional_call
        if positional is not None and not kwargs and not _thread_state.scoped and not _is_dynamo_compiling():
            return positional(*args)  # the region's own call: without fullgraph nothing below applies
        if _is_dynamo_compiling() or _thread_state.disabled:
            return self.target(*args, **kwargs)
        if self.options.fullgraph:
            with state.fullgraph_scope(True):
                if self.split_runs:
                    return self.fullgraph_split(*args, **kwargs)
                return self._call(args, kwargs)
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict):
        try:
            if not kwargs and self.positional is not None:
                return self.positional(*args)
            return self.region(args, kwargs or _NO_KEYWORDS)
        except GraphBreakError as error:
            if self.fullgraph_split is not None:
                log.info("carve: Dynamo refuses one graph of the whole call of %s (%s); carve's split runs it",
                         self.name, error)
                self.split_runs = True
                for region in (self.positional, self.region):
                    if region is not None:
                        region.break_events.clear()  # Dynamo's refusal, not a break of the program
                return self.fullgraph_split(*args, **kwargs)
            refusal = self.static_refusal
            if refusal is not None and (error.filename, error.lineno) == (refusal.filename, refusal.lineno):
                raise refusal from None
            raise

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return types.MethodType(self, instance)

    def __repr__(self) -> str:
        return f"<carve.compile of {self.region.__qualname__} (one graph of the whole call)>"

    @property
    def regions(self):
        """The regions calls have gone through (a graph needs a capture or a cache entry)."""
        if self.split_runs:
            return []  # carve's split runs the calls: its RegionSet reports them
        used = [region for region in (self.positional, self.region)
                if region is not None and region.capture.compiles]
        return used or [self.region]


class CompiledModule:
    """The base of the class `carve.compile(module)` returns: the module itself, with a compiled
    forward.

        compiled = carve.compile(model)
        isinstance(compiled, type(model))       # True: a subclass made for this module
        compiled.state_dict().keys() == model.state_dict().keys()   # no "_orig_mod." prefix
        nn.Sequential(compiled, head)           # a module like any other

    The compiled module shares the original's attribute dictionary, so parameters, buffers,
    submodules, hooks and the training flag are one state seen through either object;
    `nn.Module.__call__` (or the module's own `__call__`) runs hooks around the compiled
    forward, as eager does. `copy.deepcopy` gives an independent compiled module; pickling gives
    the original class (compiled code is not pickled, as with torch.compile).
    """

    _carve_original_class: type
    _carve_options: CompileOptions

    @property
    def _orig_mod(self):
        """The module as its own class (for carve.explain and code written for torch.compile)."""
        original = _originals.get(self)
        if original is None:
            original = object.__new__(self._carve_original_class)
            original.__dict__ = self.__dict__  # type: ignore[assignment] # the same dict: one module, two classes
            _originals[self] = original
        return original

    @property
    def _compiled_forward(self):
        return compiled_function_of(type(self).forward)  # type: ignore[attr-defined] # set on each compiled class

    def __reduce_ex__(self, protocol):
        state = self.__getstate__() if hasattr(self, "__getstate__") else self.__dict__
        return _restore_module, (self._carve_original_class, state)

    def __deepcopy__(self, memo):
        import copy

        twin = object.__new__(type(self))
        memo[id(self)] = twin
        twin.__dict__ = copy.deepcopy(self.__dict__, memo)
        return twin


def module_view(module, options: CompileOptions):
    """`module` compiled as carve.compile(module) compiles it, made once per module and options:
    the same compiled module for each caller (a method run as written, every region that calls
    the model). A module compiled already (by carve or torch.compile) is itself."""
    import torch

    if isinstance(module, (CompiledModule, torch._dynamo.eval_frame.OptimizedModule)):
        return module
    # A view of the class the module had (a parametrization registered on it since swaps the class
    # for one whose properties compute the weights) would read the old attributes: compiled afresh.
    return _version(_module_views, module, options, lambda: compile_module(module, options),
                    skip_local_definitions=False,
                    current=lambda view: view._carve_original_class is type(module))


def _restore_module(cls, state):
    """Unpickle a compiled module as a module of its original class."""
    module = object.__new__(cls)
    module.__setstate__(state)
    return module


# compiled module -> the original module object (same attribute dictionary).
_originals: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# module class -> [(options, its compiled class)], for carve.compile(module).
_compiled_classes: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def compile_module(module, options: CompileOptions):
    """A new object of a subclass of the module's class, sharing its state, whose forward is
    compiled (see CompiledModule)."""
    cls = type(module)
    # One compiled class per (class, options): every module of the class, compiled now or later,
    # shares the compiled forward and its graphs (Dynamo guards each region's module argument).
    compiled_class = _version(_compiled_classes, cls, options, lambda: _compiled_class(cls, options, _wrap))
    compiled = object.__new__(compiled_class)
    compiled.__dict__ = module.__dict__
    _originals[compiled] = module
    return compiled


def _compiled_class(cls, options: CompileOptions, wrap):
    """The subclass of `cls` whose forward is `cls.forward` compiled by `wrap`."""
    namespace = {
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__doc__,
        "forward": _compiled_class_forward(cls, options, wrap),
        "_carve_original_class": cls,
        "_carve_options": options,
    }
    return types.new_class(cls.__name__, (CompiledModule, cls), exec_body=lambda ns: ns.update(namespace))


def _compiled_class_forward(cls, options: CompileOptions, wrap):
    """The forward of a compiled module's class: the original class's forward *as it is now*,
    compiled. A forward patched onto the class after compiling is compiled and run, as
    torch.compile's module wrapper looks forward up on every call.

        compiled = carve.compile(net); compiled(x)
        Net.forward = new_forward          # the next call compiles and runs new_forward
    """
    versions: dict = {}

    def forward(self, *args, **kwargs):
        current = cls.forward
        compiled = versions.get(current)
        if compiled is None:
            compiled = versions[current] = wrap(current, options)
            forward.__carve_compiled__ = compiled_function_of(compiled)  # type: ignore[attr-defined]
            forward.__carve_version__ = compiled  # type: ignore[attr-defined]
        return compiled(self, *args, **kwargs)

    compiled = versions[cls.forward] = wrap(cls.forward, options)
    forward.__carve_compiled__ = compiled_function_of(compiled)  # type: ignore[attr-defined]
    forward.__carve_version__ = compiled  # type: ignore[attr-defined]  # what runs: a WholeCall for torch's forwards
    forward.__wrapped__ = cls.forward  # type: ignore[attr-defined] # functools.wraps' attribute
    for attribute in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(forward, attribute, getattr(cls.forward, attribute, None))
    return forward


# module -> [(options, its compiled module)], for modules called from statements that stay Python,
# and module class -> [(options, its compiled class)].
_nested_modules: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# module -> [(options, the module compiled as carve.compile(module) compiles it)], for a method of
# the module run as written (CompiledFunction._run_with_compiled_module).
_module_views: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_nested_classes: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

# function -> [(options, its carve-compiled version)], for `RegionSet.compiled` (nested frames)
# and carve.compile (see _version): a function is compiled once per options, however reached.
_nested: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


_SUSPENDABLE_CODE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def compile_nested(fn, options: CompileOptions):
    """The compiled version of a callee that breaks its caller's graph; plain callables pass through."""
    if isinstance(fn, (CompiledFunction, CompiledModule)) or state.is_disabled():
        return fn
    if isinstance(fn, types.MethodType):
        compiled = compile_nested(fn.__func__, options)
        return fn if compiled is fn.__func__ else types.MethodType(compiled, fn.__self__)
    if _is_module(fn):
        # Called through nn.Module.__call__, so its hooks run around the compiled forward.
        compiled_forward = compile_nested(type(fn).forward, options)
        if compiled_forward is type(fn).forward:
            return fn
        cls = type(fn)

        def compiled_module():
            # One compiled class per (class, options): blocks of one class share their compiled
            # forward (and its graphs), as they share the class's forward in eager.
            compiled = object.__new__(
                _version(_nested_classes, cls, options, lambda: _compiled_class(cls, options, compile_nested)))
            compiled.__dict__ = fn.__dict__  # carve keeps no reference to the module itself
            return compiled

        return _version(_nested_modules, fn, options, compiled_module, skip_local_definitions=False)
    if not isinstance(fn, types.FunctionType) or fn.__name__ == "<lambda>":
        return fn
    from carve.resolver import wrapped_user_function
    from carve.runtime.compat import Marker, classify_callable

    if classify_callable(fn) is not Marker.NONE:
        return fn
    if not is_user_code(fn.__code__):
        inner = wrapped_user_function(fn)
        if inner is None or (fn.__code__.co_flags | inner.__code__.co_flags) & _SUSPENDABLE_CODE:
            return fn
        # A library's functools.wraps wrapper (torch.no_grad(), autocast as a decorator) around a
        # user function: the wrapper runs as written around the compiled function, made once.
        wrapped = fn.__wrapped__  # type: ignore[attr-defined] # functools.wraps' attribute
        return _version(_nested, fn, options, lambda: _rewrap(fn, wrapped, options) or fn, skip_local_definitions=False)
    if fn.__code__.co_flags & _SUSPENDABLE_CODE:
        # Calling a generator (or coroutine) function runs none of its body: it returns the
        # suspended frame, which the caller's `next()`/`send()`/`await` resume as Python.
        return fn
    # A nested function defined once and called on every step is compiled once, local or not.
    return _version(_nested, fn, options, lambda: CompiledFunction(fn, options), skip_local_definitions=False)


def compile_definition(fn, options: CompileOptions, definitions: dict):
    """The compiled version of a function the compiled function defines (`RegionSet.compiled_definition`).

        for i in range(steps):
            def closure(): ...              # a new function object on every iteration and call,
            optimizer.step(closure)         # over one code object

    The first function made from a code object is compiled (a CompiledFunction, stored in
    `definitions` by code object); each function the def makes, the first too, is handed out as
    a SharedDefinition calling that one build, so the source is parsed once and its regions keep
    one Dynamo cache. The functions must be the same but for identity: the same globals and
    default values, and no closure cells. A closure over the enclosing function's variables
    (its regions would need the new cells), a generator, and a def whose default values differ
    from the first's run as written.
    """
    if state.is_disabled() or not isinstance(fn, types.FunctionType) or fn.__closure__ \
            or fn.__code__.co_flags & _SUSPENDABLE_CODE or not is_user_code(fn.__code__):
        return fn
    first = definitions.get(fn.__code__)
    if first is None:
        definitions[fn.__code__] = first = CompiledFunction(fn, options)
    elif first.fn.__globals__ is not fn.__globals__ or not _same_values(first.fn.__defaults__, fn.__defaults__) \
            or not _same_values(first.fn.__kwdefaults__, fn.__kwdefaults__):
        return fn
    # The first function too is a SharedDefinition: a region reading the name sees one type on
    # every call (Dynamo guards it), whichever function the def made.
    return SharedDefinition(fn, first)


def _same_values(a: tuple | dict | None, b: tuple | dict | None) -> bool:
    """Default values that are the same objects (`def f(n=1)` made twice: one tuple; `def f(*, n=1)`:
    two dicts holding the same objects)."""
    if a is b:
        return True
    if a is None or b is None or len(a) != len(b):
        return False
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(a[key] is b[key] for key in a)
    return isinstance(a, tuple) and isinstance(b, tuple) and all(x is y for x, y in zip(a, b))


class SharedDefinition(CompiledFunction):
    """A function made by a nested `def`, compiled (see compile_definition): calls run the build
    of the first function that def made, with its regions and their Dynamo caches.

        closure_1 = compile_definition(closure, ...)        # builds on its first call
        closure_2 = compile_definition(closure_again, ...)  # runs closure_1's build: no parsing

    Each is its own object, as each `def` makes its own function in eager. Inside a region's
    trace the call is the function itself, which Dynamo traces inline.
    """

    def __init__(self, fn: types.FunctionType, first: CompiledFunction) -> None:  # its state is `first`'s
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.options = first.options
        self.first = first
        self._defaults_made = fn.__defaults__, fn.__kwdefaults__

    def __call__(self, *args, **kwargs):
        fn = self.fn
        if _is_dynamo_compiling():
            return fn(*args, **kwargs)  # a region calls it: Dynamo traces the function inline
        if fn.__defaults__ is self._defaults_made[0] and fn.__kwdefaults__ is self._defaults_made[1]:
            return self.first(*args, **kwargs)
        return fn(*args, **kwargs)  # its defaults were rebound since: it is no longer the first's twin

    def __repr__(self) -> str:
        return f"<carve.compile of {self.fn.__qualname__} at {where(self.fn)} (built once for every def of it)>"

    # What carve.explain and the tests read: the first function's build.
    @property
    def _impl(self):  # type: ignore[override] # read from `first`, never set here
        return self.first._impl

    @property
    def _build(self):  # type: ignore[override] # read from `first`, never set here
        return self.first._build
