"""Is a region worth compiling, and is its compiled call slower than its Python? Decided once per region.

Before any compile, the region's first PYTHON_FIRST_CALLS calls run its Python, timed
(`worth_compiling`):

    call 1:      as Python, timed, its torch operations counted (OpCounter)
                                          -> mostly inside module calls: from call 2 on, Python
                                             with the models it calls compiled, as
                                             torch.compile(model) places them
                                             (GraphRegion._run_with_compiled_models)
    calls 1, 2:  as Python, timed         -> Python for good when no compile could pay back:
                                             PAYBACK_CALLS calls of its Python (the fastest of
                                             the two; its backward counted as twice its forward)
                                             take less time than a lower bound of its compile
                                             (`compile_estimate`: SMALLEST_COMPILE, and
                                             COMPILE_PER_OP an operation); else compiled from
                                             call 3 on

A module's `forward` is not priced at all (compiled from its first call: the compiler's
`CompiledFunction._compile_as_the_model`).

An Inductor compile costs half a second at least; a region of a few small ops (a learning-rate
formula, a logging branch, an optimizer's bookkeeping) would need thousands of calls to earn it
back, and its compile is time the user waits for nothing. A region whose first call draws random
numbers goes on to its compile unless both ways draw eager's (below), whatever its time.
Dynamo's `eager` and `aot_eager` backends are compiled from the first call: they are what a
user picks to see a capture (the capture is what they look at, from the first call), and a
compile costs them a trace, not a kernel build (`prices_compiles`).

Then, once compiled:

A region of a few small tensor ops called once per iteration of a Python loop can cost more
compiled than as written: Dynamo's guards, the graph call and, under autograd, the compiled
function's bookkeeping outweigh the kernels they save. carve then keeps the faster of the two:

    calls 1..WARM_CALLS after the first graph:  compiled, not timed (caches warm, guards settle)
    the next 2 * SAMPLES calls:                 compiled and as Python, alternately, each timed
    then:                                       compiled for good, or Python for good if the
                                                fastest compiled call took SLOWER times the
                                                fastest Python run or more

Both ways give eager's answer (a region's graph is its Python), so the timed calls change no
value. A region whose results require grad is weighed only while its compiled call is short
(`TIMED_UNDER`): the timing sees the forward, and a longer forward's compiled backward, which
it cannot see, is where compiling pays. A region that builds no autograd graph (inference,
`no_grad`, an optimizer update) is weighed whatever its length: its call is all its cost.

A region whose graph draws random numbers is weighed only where its graph draws eager's random
numbers (`draws_eagers_random`: the eager and aot_eager backends, Inductor with
`fallback_random`): Inductor's own random stream is not eager's, so which way it ran would
decide, by the machine's timing, the values a seeded program draws.

`CARVE_COST_CHECK=0` turns the check off (every region stays compiled), as does setting
`carve.runtime.cost_check.ENABLED = False` before a function's first call. `clock` is what
the timed calls read (the tests inject one).
"""

from __future__ import annotations

import os
import time
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

from carve.rewriters import op_tables

from .config import CompileOptions

ENABLED = os.environ.get("CARVE_COST_CHECK", "1") != "0"
# What the timed calls are measured with (seconds). The tests put a clock here that reads the
# same time for both ways, so every region is weighed, runs its timed calls both ways, and stays
# compiled whatever the machine's load (tests/conftest.py).
clock = time.perf_counter
WARM_CALLS = 8
SAMPLES = 5
SLOWER = 1.10
# Over how many calls a compile must pay for itself (a realistic run's steps; CARVE_PAYBACK_CALLS
# for a longer run), and what a compile costs with Inductor on a CPU (seconds): the cheapest (a
# graph of one op, after Inductor's start-up; Dynamo's trace included), and each op more, twice
# over when AOT autograd compiles a backward graph too. Both are lower bounds (nanoGPT's forward
# and backward, 64 ops, took 5.7 s: 0.04 s an op), so a region whose compile could pay is
# compiled. A backend carve does not know is priced as Inductor.
PAYBACK_CALLS = int(os.environ.get("CARVE_PAYBACK_CALLS", "1000"))
PYTHON_FIRST_CALLS = 2
SMALLEST_COMPILE = 0.5
COMPILE_PER_OP = 0.02
# Backends compiled from a region's first call (a capture to look at, a trace's cost).
CAPTURE_BACKENDS = ("eager", "aot_eager")
# A region whose results require grad runs a backward too, counted as twice its forward.
BACKWARD_FACTOR = 2
# A compiled call whose results require grad and that takes longer than this (seconds) stays
# compiled: its backward, unseen by the timing, is where compiling pays.
TIMED_UNDER = 1e-3


def draws_random(graphs: list) -> bool:
    """Whether any of the FX graphs, or a graph nested in one (a layer compiled once), calls an op
    that draws random numbers (a dropout only when it trains: an eval-mode dropout is the identity)."""
    nested = (module for graph_module in graphs for module in graph_module.modules())
    for graph_module in nested:
        graph = getattr(graph_module, "graph", None)
        for node in graph.nodes if graph is not None else ():
            if node.op not in ("call_function", "call_method"):
                continue
            name = op_tables.op_name(node.target)
            if name in op_tables.RANDOM_OPS:
                return True
            if name in op_tables.DROPOUT_OPS:
                training = node.kwargs.get("training", node.kwargs.get("train",
                                           node.args[2] if len(node.args) > 2 else True))
                if training is not False:
                    return True
    return False


def draws_eagers_random(options: CompileOptions) -> bool:
    """Whether graphs compiled with `options` draw the random numbers eager would draw, in its order:
    the eager and aot_eager backends run the aten random ops on torch's generator; Inductor does
    with `fallback_random` (its own config, or the `options` given to carve.compile). A backend
    object may say so (`random_stream = "eager"`); any other backend is assumed not to."""
    backend = options.backend
    if options.uses_inductor:
        import torch._inductor.config as inductor_config

        return bool((options.options or {}).get("fallback_random", inductor_config.fallback_random))
    return backend in ("eager", "aot_eager") or getattr(backend, "random_stream", None) == "eager"


def prices_compiles(options: CompileOptions) -> bool:
    """Whether a region's first calls run its Python to price its compile: every backend but
    Dynamo's own capture backends, named or as a backend object names itself (`compiler_name`,
    as torch's wrappers do)."""
    backend = options.backend
    name = backend if isinstance(backend, str) else getattr(backend, "compiler_name", None)
    return name not in CAPTURE_BACKENDS


def compile_estimate(ops: int, requires_grad: bool) -> float:
    """What compiling a region whose Python ran `ops` torch operations costs (seconds)."""
    return SMALLEST_COMPILE + COMPILE_PER_OP * ops * (2 if requires_grad else 1)


def worth_compiling(python_seconds: float, ops: int, requires_grad: bool) -> bool:
    """Whether a region whose Python took `python_seconds` and ran `ops` torch operations could pay
    for its compile: even a compiled call that took no time at all would save at most its Python's
    time (and its backward's) per call, over PAYBACK_CALLS calls."""
    per_call = python_seconds * (1 + BACKWARD_FACTOR if requires_grad else 1)
    return per_call * PAYBACK_CALLS >= compile_estimate(ops, requires_grad)


def first_call_summary(python_seconds: float, ops: int, requires_grad: bool, options: CompileOptions) -> str:
    backward = " and a backward" if requires_grad else ""
    return (f"its Python took {python_seconds * 1e6:.1f} us{backward} ({ops} torch operations): over "
            f"{PAYBACK_CALLS} calls that is less than the {compile_estimate(ops, requires_grad):.1f} s a compile "
            f"with {options.backend_name} would cost")


class OpCounter(TorchFunctionMode):
    """Counts the torch operations a region's Python calls, and how many of them ran inside a
    module's forward (`model_ops`): the size of the graph a compile would make, to price it, and
    whether the region's work is a model's, which torch.compile(model) would compile too.

        with OpCounter() as counter:
            region_fn(*args)        # counter.ops, counter.model_ops
    """

    def __init__(self) -> None:
        super().__init__()
        self.ops = 0
        self.model_ops = 0
        # The modules the region called itself (not from inside another module), by first call.
        self.outer_modules: dict[int, Any] = {}
        self._depth = 0
        self._hooks: list = []

    def __enter__(self) -> "OpCounter":
        modules = torch.nn.modules.module
        self._hooks = [modules.register_module_forward_pre_hook(self._entered),
                       modules.register_module_forward_hook(self._left, always_call=True)]
        return super().__enter__()

    def __exit__(self, *exc_info: Any) -> None:
        super().__exit__(*exc_info)
        for hook in self._hooks:
            hook.remove()
        self._hooks = []

    def _entered(self, module: Any, args: Any) -> None:
        if not self._depth:
            self.outer_modules.setdefault(id(module), module)
        self._depth += 1

    def _left(self, module: Any, args: Any, output: Any) -> None:
        self._depth -= 1

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        self.ops += 1
        if self._depth:
            self.model_ops += 1
        return func(*args, **(kwargs or {}))

    @property
    def models(self) -> list:
        """The modules with parameters the region called itself: what torch.compile(model) would
        compile (a loss module has none)."""
        return [module for module in self.outer_modules.values()
                if next(iter(module.parameters()), None) is not None]

    @property
    def runs_a_model(self) -> bool:
        """Whether most of the region's operations ran inside module calls: it calls the model,
        whose compile torch.compile(model) would pay too."""
        return self.model_ops > 0 and 2 * self.model_ops >= self.ops


class CostCheck:
    """The samples of one region: `turn()` says how to run the next call, `record()` keeps its
    time, `verdict()` is None until both sides have SAMPLES samples."""

    __slots__ = ("calls", "compiled", "python", "backward")

    def __init__(self) -> None:
        self.calls = 0
        self.compiled: list[float] = []
        self.python: list[float] = []
        self.backward = False  # a compiled call returned a tensor that requires grad

    def turn(self) -> str:
        """"warm" (compiled, untimed), "compiled" or "python" (timed)."""
        self.calls += 1
        if self.calls <= WARM_CALLS:
            return "warm"
        # Compiled first: a long compiled call is decided on its first timed run.
        return "compiled" if self.calls % 2 else "python"

    def record(self, turn: str, seconds: float, requires_grad: bool = False) -> None:
        (self.python if turn == "python" else self.compiled).append(seconds)
        self.backward = self.backward or requires_grad

    @property
    def kept_for_backward(self) -> bool:
        """Whether the verdict was "compiled" unweighed: a long call whose backward it cannot see
        (weighed next by whole calls of its function: whole_call_check.py)."""
        return self.backward and bool(self.compiled) and min(self.compiled) > TIMED_UNDER

    def verdict(self) -> str | None:
        """None (go on timing), "compiled", or "python"."""
        if self.kept_for_backward:
            return "compiled"
        if len(self.compiled) < SAMPLES or len(self.python) < SAMPLES:
            return None
        return "python" if min(self.compiled) >= SLOWER * min(self.python) else "compiled"

    def summary(self) -> str:
        return (f"its compiled call took {min(self.compiled) * 1e6:.1f} us, its Python "
                f"{min(self.python) * 1e6:.1f} us (fastest of {SAMPLES} each)")


__all__ = ["ENABLED", "CostCheck", "CAPTURE_BACKENDS", "COMPILE_PER_OP", "OpCounter", "PAYBACK_CALLS", "compile_estimate", "PYTHON_FIRST_CALLS", "SMALLEST_COMPILE", "first_call_summary",
           "prices_compiles",
           "worth_compiling", "draws_random", "draws_eagers_random", "SAMPLES", "SLOWER", "TIMED_UNDER", "WARM_CALLS"]
