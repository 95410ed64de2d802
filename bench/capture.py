"""Capture: the share of an eager run's torch-level ops that run inside compiled graphs.

Defined as:

- the denominator is the number of torch-level ops one eager call executes,
  counted with a `TorchFunctionMode` (`OpCounter`);
- the numerator is the number of ops the compiled call runs inside graphs,
  counted with a backend (`carve.testing.CountingBackend`) that wraps every
  graph it is given and, on each call of that graph, adds the graph's op count
  (its `call_function`/`call_method`/`call_module` nodes, minus bookkeeping such
  as `operator.getitem`: `graph_op_count`). The wrapped graph runs as
  `gm.forward` (the `eager` backend), so results can be compared with eager exactly.

Both are counted on a steady-state call (after two warm-up calls), since the
first call of a carve region traces it and returns the trace's result.

What is not an op: property reads (`x.shape`), metadata queries (`x.dim()`)
and formatting a tensor for print; dynamo folds the first two into constants
and no compiler can put the third in a graph. `.item()`, `bool(t)` and
tensor comparisons feeding `if` are ops, and count against every compiler.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import operator
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch._dynamo
from torch.overrides import TorchFunctionMode

import carve
from carve.testing import CountingBackend

# Names of torch functions that are not tensor work (see the module docstring).
NOT_OPS = frozenset({
    "__get__", "__set__", "size", "dim", "ndimension", "numel", "nelement", "stride", "__len__",
    "is_contiguous", "is_floating_point", "is_complex", "element_size", "data_ptr", "storage_offset",
    "__repr__", "__str__", "__format__", "__hash__", "__iter__", "__reduce_ex__", "__deepcopy__",
    "requires_grad_", "get_device", "__torch_function__",
})
BOOKKEEPING_TARGETS = frozenset({operator.getitem, torch._C._set_grad_enabled})


class OpCounter(TorchFunctionMode):
    """Counts the torch-level ops run while it is active (nested calls are not seen)."""

    def __init__(self):
        super().__init__()
        self.count = 0
        self.names: dict = {}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", repr(func))
        if name not in NOT_OPS:
            self.count += 1
            self.names[name] = self.names.get(name, 0) + 1
        return func(*args, **(kwargs or {}))


def graph_op_count(gm: torch.fx.GraphModule) -> int:
    count = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in BOOKKEEPING_TARGETS:
            continue
        if node.op == "call_method" and node.target in NOT_OPS:
            continue
        if node.op in ("call_function", "call_method", "call_module"):
            count += 1
    return count


def eager_op_count(fn, *args) -> int:
    with OpCounter() as counter:
        fn(*args)
    return counter.count


# -- running programs under each compiler -------------------------------------------------------

COMPILERS = ("torch.compile", "carve")
CALLS = 3  # two warm-up calls (trace, compile, settle), then the measured one


@dataclass
class ProgramResult:
    name: str
    eager_ops: int = 0
    graph_ops: dict = field(default_factory=dict)  # compiler -> ops run in graphs on the measured call
    graphs: dict = field(default_factory=dict)  # compiler -> graphs compiled over all calls
    mismatches: dict = field(default_factory=dict)  # compiler -> description of how it differed from eager
    errors: dict = field(default_factory=dict)  # compiler -> traceback text

    def capture(self, compiler: str):
        if compiler not in self.graph_ops or not self.eager_ops:
            return None
        return self.graph_ops[compiler] / self.eager_ops


def _observe(fn, module, args):
    """One call: (result, printed text, module EVENTS, raised exception, the arguments afterwards), traceback."""
    events = getattr(module, "EVENTS", None)
    if events is not None:
        events.clear()
    buffer = io.StringIO()
    result, raised, trace = None, None, None
    fresh = [a.clone() for a in args]
    with contextlib.redirect_stdout(buffer):
        try:
            result = fn(*fresh)
        except Exception as error:  # exceptions escaping the program are part of its behaviour
            raised = f"{type(error).__name__}: {error}"
            trace = traceback.format_exc(limit=-6)
    observed = (result, buffer.getvalue(), list(events) if events is not None else None, raised, fresh)
    return observed, trace


def _same_value(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same_value(p, q) for p, q in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6) or (math.isnan(a) and math.isnan(b))
    return a == b


def _short(value) -> str:
    """A value for a mismatch report: tensors as shape, a few values and their sum."""
    if isinstance(value, torch.Tensor):
        flat = value.detach().flatten()
        return f"tensor{tuple(value.shape)} {flat[:4].tolist()}... sum={flat.double().sum().item():.9g}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_short(v) for v in value) + ")"
    return repr(value)


def _difference(expected, got) -> str | None:
    labels = ("result", "printed output", "EVENTS", "exception", "arguments after the call (mutation)")
    for index in (3, 1, 2, 0, 4):  # an exception explains the rest, so it is reported first
        label, want, have = labels[index], expected[index], got[index]
        same = _same_value(want, have) if index in (0, 4) else want == have
        if not same:
            return f"{label} differs:\n    eager: {_short(want)}\n    got:   {_short(have)}"
    return None


def measure(name: str, fn, module, args, compilers=COMPILERS, other_args=()) -> ProgramResult:
    """Capture and correctness of one program (a function of `args`) under each compiler.

    Capture is counted on the last of CALLS calls with `args`; after it, the compiled
    function is also compared with eager on each of `other_args` (new values, new shapes:
    cache hits and misses), which do not count towards capture.
    """
    result = ProgramResult(name)
    fresh = [a.clone() for a in args]
    with OpCounter() as counter, contextlib.redirect_stdout(io.StringIO()):
        try:
            fn(*fresh)
        except Exception:
            pass
    result.eager_ops = counter.count
    calls = [args] * CALLS + list(other_args)
    expected = [_observe(fn, module, call_args)[0] for call_args in calls]
    for compiler in compilers:
        backend = CountingBackend(count_ops=graph_op_count)
        try:
            if compiler == "torch.compile":
                torch._dynamo.reset()
                compiled = torch.compile(fn, backend=backend)
            else:
                compiled = carve.compile(fn, backend=backend)
            for call, call_args in enumerate(calls):
                if call == CALLS - 1:
                    backend.reset_counts()
                got, trace = _observe(compiled, module, call_args)
                if call == CALLS - 1:
                    result.graph_ops[compiler] = backend.ops_run
                    result.graphs[compiler] = backend.graphs
                what = "call" if call < CALLS else "call with other inputs"
                if trace and expected[call][3] is None:
                    result.errors.setdefault(compiler, f"{what} {call + 1} raised:\n{trace}")
                    continue
                difference = _difference(expected[call], got)
                if difference:
                    result.mismatches.setdefault(compiler, f"{what} {call + 1}: {difference}")
        except Exception:
            result.errors.setdefault(compiler, traceback.format_exc(limit=8))
    return result


def load_module(path: Path):
    """Import a generated file as a real module (carve reads source through the file)."""
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_generated(count: int = 20, first_seed: int = 0, log=print, keep_dir: Path | None = None) -> list:
    """Generate, import and measure `count` programs; a mismatch or crash is printed with its program."""
    from generate import generate

    results = []
    with tempfile.TemporaryDirectory(prefix="carve_bench_") as tmp:
        for seed in range(first_seed, first_seed + count):
            source = generate(seed)
            path = Path(tmp) / f"carve_bench_gen_{seed:03d}.py"
            path.write_text(source)
            module = load_module(path)
            torch.manual_seed(seed)
            args = (torch.randn(64), torch.rand(64))
            other_args = [(torch.randn(64), torch.rand(64)), (torch.randn(48), torch.rand(48))]
            result = measure(f"gen {seed:03d}", module.program, module, args, other_args=other_args)
            results.append(result)
            problems = [(c, "WRONG RESULT", t) for c, t in result.mismatches.items() if c not in result.errors]
            problems += [(c, "CRASH", t) for c, t in result.errors.items()]
            for compiler, kind, text in problems:
                log(f"!!! {kind} under {compiler} on generated program seed {seed}:\n{text}\n--- program ---\n{source}")
                if keep_dir is not None:
                    keep_dir.mkdir(parents=True, exist_ok=True)
                    (keep_dir / path.name).write_text(source)
            sys.modules.pop(module.__name__, None)
    return results


def run_handwritten(log=print) -> list:
    """Capture on the break-heavy benchmark programs (b)-(d), on a small tensor."""
    import programs

    results = []
    for key, fn in (("b", programs.loop_print), ("c", programs.try_print), ("d", programs.with_print)):
        torch.manual_seed(0)
        results.append(measure(f"({key}) {fn.__name__}", fn, programs, (torch.randn(64),)))
    return results
