"""A differential harness for programs whose state changes between calls.

A *scenario* is a generator function taking `compile`: it builds its program, compiles the
parts under test with `compile(...)`, then calls them several times, changing between calls
whatever the compiled code depends on, and yields what it observes after each step:

    def scenario(compile):
        block = Block()
        net = compile(Net(block))
        yield attempt(net, X)             # a value, or the exception it raised
        block.scale = 2.0                 # changed after the first call
        yield attempt(net, X), block.calls

`differential(scenario)` runs it once eagerly (`compile` is the identity) and once per backend
("eager", or `backends=BOTH` to add "aot_eager") through `carve.compile`, and compares, step by step: the values yielded (tensors exactly, with
dtype, shape and sign bits; containers item by item), what was printed, and exceptions (type and
message). It then checks carve really compiled something (graphs the backend received, for the
function and the callees carve compiles in turn), so no case passes because carve ran
everything eagerly. Scenarios reset any global
state they use at their start, so the eager and the compiled run begin alike.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Iterable
from typing import Any

import torch

import carve
from carve.api import compiled_function_of
from carve.testing import CountingBackend

# Every scenario runs on the "eager" backend; those where a backend that traces the graph again
# could differ (gradients, parameters, in-place updates, torch state) on "aot_eager" too.
EAGER = ("eager",)
BOTH = ("eager", "aot_eager")


class Raised:
    """What `attempt` returns when the call raised: compared by type and message."""

    def __init__(self, error: BaseException) -> None:
        self.type = type(error)
        self.message = str(error)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Raised) and (self.type, self.message) == (other.type, other.message)

    def __repr__(self) -> str:
        return f"Raised({self.type.__name__}: {self.message[:200]})"


def attempt(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """fn(*args, **kwargs), or a `Raised` describing the exception."""
    try:
        return fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - the exception is the behaviour compared
        return Raised(error)


def same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if (a.shape, a.dtype, a.device, a.requires_grad) != (b.shape, b.dtype, b.device, b.requires_grad):
            return False
        if a.device.type == "meta":
            return True
        a, b = a.detach(), b.detach()
        if a.is_complex():
            return same(torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj()))
        if not torch.equal(a, b) and not (a.is_floating_point() and torch.equal(a.isnan(), b.isnan())
                                          and torch.equal(a.nan_to_num(), b.nan_to_num())):
            return False
        return not a.is_floating_point() or torch.equal(a.signbit(), b.signbit())
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return type(a) is type(b) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _snapshot(value: Any) -> Any:
    """A copy of an observation that later steps cannot change (tensors cloned, containers copied)."""
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(value.requires_grad) if copy.is_floating_point() else copy
    if isinstance(value, (tuple, list)):
        return type(value)(_snapshot(v) for v in value) if type(value) in (tuple, list) else \
            [_snapshot(v) for v in value]
    if isinstance(value, dict):
        return {k: _snapshot(v) for k, v in value.items()}
    return value


def _run(scenario: Callable[[Callable[..., Any]], Iterable[Any]], compile: Callable[..., Any]) -> list[tuple]:
    steps: list[tuple] = []
    out = io.StringIO()
    torch.manual_seed(0)
    generator = iter(scenario(compile))
    while True:
        try:
            with contextlib.redirect_stdout(out):
                value = next(generator)
        except StopIteration:
            break
        steps.append((_snapshot(value), out.getvalue()))
        out.seek(0)
        out.truncate()
    return steps


def regions_of(compiled: Any) -> list:
    inner = compiled_function_of(compiled) or compiled
    return list(getattr(inner, "regions", []))


def differential(scenario: Callable[[Callable[..., Any]], Iterable[Any]], *, backends: Iterable[str] = EAGER,
                 min_graphs: int = 1, **options: Any) -> list[Any]:
    """Run `scenario` eagerly and through carve with each backend; compare every step.

    Returns the objects carve compiled in the last run (for further checks on regions).
    """
    expected = _run(scenario, lambda fn: fn)
    compiled: list[Any] = []
    for backend in backends:
        compiled = []
        # Counts every graph carve makes in a run, for the function and the callees it compiles.
        counting = CountingBackend(backend)

        def carve_compile(fn: Any, **extra: Any) -> Any:
            result = carve.compile(fn, backend=counting, **{**options, **extra})
            compiled.append(result)
            return result

        got = _run(scenario, carve_compile)
        assert len(got) == len(expected), f"[{backend}] carve made {len(got)} steps, eager {len(expected)}"
        for i, ((value, printed), (want, want_printed)) in enumerate(zip(got, expected)):
            assert printed == want_printed, f"[{backend}] step {i}: carve printed {printed!r}, eager {want_printed!r}"
            assert same(value, want), f"[{backend}] step {i}: carve gave {value!r}, eager {want!r}"
        graphs = counting.graphs
        assert graphs >= min_graphs, f"[{backend}] carve compiled {graphs} graphs (expected >= {min_graphs}): " \
                                     "the case proves nothing if everything ran eagerly"
    return compiled


def paths(compiled: Any) -> list[str]:
    """The capture path of each region ("dynamo", "eager")."""
    return [region.path for region in regions_of(compiled)]
