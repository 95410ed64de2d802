"""Regions kept compiled for their backward, weighed by whole calls of their function.

The cost check (cost_check.py) times a region's call: the forward. A region whose results
require grad and whose compiled call is long is kept compiled unweighed, on the bet that its
compiled backward, which that timing cannot see, pays. On a CPU with small layers it may not
(a GAN step's generator and critic: compiled forward and backward slower than eager's). When
the decorated function runs the backward itself (a training step's `loss.backward()`), a whole
call's time holds both, so carve weighs the regions there:

    train(...)   # call n:   the region's cost check keeps it compiled for its backward
    train(...)   # n+1, n+3, n+5: timed, the regions compiled
    train(...)   # n+2, n+4, n+6: timed, the regions run as Python
    then:        Python for good if the fastest compiled call took WHOLE_CALL_SLOWER times the
                 fastest Python call or more; else compiled for good

A timed call in which a region made a result that requires grad and that result's backward
did not start before the call returned ends the weighing: the backward runs outside the
function (a model's `forward` whose loss the training loop backpropagates, a step that returns
its loss), where a call's time cannot see it. The regions go to the carve function that called
this one, whose whole calls may hold the backward (`on_backward_outside`), and so on outward;
with no such caller they stay compiled.

    train()                       # carve-compiled: loss.backward() runs inside its calls
        model(data, hidden)       # its forward, compiled by carve: the backward is outside
                                  # -> train's calls weigh the forward's region

Both ways give eager's answer (a region's graph is its Python).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from . import cost_check, log

# Whole calls timed each way, and the margin Python must win by.
WHOLE_CALL_SAMPLES = 3
WHOLE_CALL_SLOWER = 1.05


class WholeCallCheck:
    """The timed calls of one function, and the regions they weigh. `wrap(call)` is what the
    function's calls run while it weighs; `done` once decided (or ended)."""

    def __init__(self, on_done: Callable[[], None],
                 on_backward_outside: Callable[[list], Any] | None = None) -> None:
        self.regions: list = []
        self._on_backward_outside = on_backward_outside
        self.compiled: list[float] = []
        self.python: list[float] = []
        self.calls = 0
        self.python_turn = False
        self.done = False
        self._on_done = on_done
        self._awaiting: list[list[bool]] = []  # one flag per result whose backward this call must start

    def add(self, region: Any) -> None:
        """`region` joins the weighing, which starts afresh."""
        if region not in self.regions:
            self.regions.append(region)
            region._whole_call = self
            region._steady = False  # its calls go through GraphRegion._call, which sends them here
        self.compiled, self.python, self.calls = [], [], 0

    def wrap(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def weighed(*args: Any, **kwargs: Any) -> Any:
            if self.done:
                return call(*args, **kwargs)
            return self._timed(call, args, kwargs)
        return weighed

    def region_call(self, region: Any, args: tuple) -> Any:
        """A call of one of the weighed regions during a timed call (GraphRegion._call)."""
        out = region.fn(*args) if self.python_turn else region._compiled_call(args)
        region._steady = False  # its calls come here until the verdict
        for leaf in pytree.tree_leaves(out):
            if isinstance(leaf, torch.Tensor) and leaf.grad_fn is not None:
                started = [False]
                self._awaiting.append(started)
                leaf.grad_fn.register_prehook(lambda grads, started=started: started.__setitem__(0, True))
                break
        return out

    def _timed(self, call: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
        self.calls += 1
        turn = "compiled" if self.calls % 2 else "python"
        self.python_turn = turn == "python"
        self._awaiting = []
        clock = cost_check.clock
        start = clock()
        try:
            out = call(*args, **kwargs)
        finally:
            elapsed = clock() - start
            self.python_turn = False
        if not all(started[0] for started in self._awaiting):
            regions = list(self.regions)
            self._finish(None, "its backward runs outside the function's call")
            if self._on_backward_outside is not None:
                self._on_backward_outside(regions)
            return out
        (self.python if turn == "python" else self.compiled).append(elapsed)
        if len(self.compiled) >= WHOLE_CALL_SAMPLES and len(self.python) >= WHOLE_CALL_SAMPLES:
            summary = (f"its function's calls, its backward included, took {min(self.compiled) * 1e3:.2f} ms with "
                       f"it compiled, {min(self.python) * 1e3:.2f} ms with it as Python (fastest of "
                       f"{WHOLE_CALL_SAMPLES} each)")
            faster_as_python = min(self.compiled) >= WHOLE_CALL_SLOWER * min(self.python)
            self._finish("python" if faster_as_python else "compiled", summary)
        return out

    def _finish(self, verdict: str | None, summary: str) -> None:
        self.done = True
        for region in self.regions:
            region._whole_call = None
            if verdict == "python":
                region._run_as_python(f"faster as Python: {summary}")
                log.log_once(("slower whole", region.filename, region.first_line), log.perf_log, logging.INFO,
                             "region %s (%s:%d) runs as Python from now on: %s", region.name, region.filename,
                             region.first_line, summary)
            # Compiled: its next call takes the steady path again (GraphRegion._compiled_call).
        self._on_done()


__all__ = ["WHOLE_CALL_SAMPLES", "WHOLE_CALL_SLOWER", "WholeCallCheck"]
