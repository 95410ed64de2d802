"""Is a region's compiled call slower than running its Python? Decided once per region.

A region of a few small tensor ops called once per iteration of a Python loop can cost more
compiled than as written: Dynamo's guards, the graph call and, under autograd, the compiled
function's bookkeeping outweigh the kernels they save. carve then keeps the faster of the two:

    calls 1..WARM_CALLS after the first graph:  compiled, not timed (caches warm, guards settle)
    the next 2 * SAMPLES calls:                 compiled and as Python, alternately, each timed
    then:                                       compiled for good, or Python for good if the
                                                fastest compiled call took SLOWER times the
                                                fastest Python run or more

Both ways give eager's answer (a region's graph is its Python), so the timed calls change no
value. Only regions whose compiled call is short are timed (`TIMED_UNDER`): a longer call is
not dominated by per-call cost, and its compiled backward, which this forward timing cannot
see, is where compiling pays.

`CARVE_COST_CHECK=0` turns the check off (every region stays compiled), as does setting
`carve.runtime.cost_check.ENABLED = False` before a function's first call.
"""

from __future__ import annotations

import os

ENABLED = os.environ.get("CARVE_COST_CHECK", "1") != "0"
WARM_CALLS = 8
SAMPLES = 5
SLOWER = 1.10
# A compiled call slower than this (seconds) is kernel time, not per-call cost: not timed.
TIMED_UNDER = 1e-3


class CostCheck:
    """The samples of one region: `turn()` says how to run the next call, `record()` keeps its
    time, `verdict()` is None until both sides have SAMPLES samples."""

    __slots__ = ("calls", "compiled", "python")

    def __init__(self) -> None:
        self.calls = 0
        self.compiled: list[float] = []
        self.python: list[float] = []

    def turn(self) -> str:
        """"warm" (compiled, untimed), "compiled" or "python" (timed)."""
        self.calls += 1
        if self.calls <= WARM_CALLS:
            return "warm"
        # Compiled first: a long compiled call is decided on its first timed run.
        return "compiled" if self.calls % 2 else "python"

    def record(self, turn: str, seconds: float) -> None:
        (self.python if turn == "python" else self.compiled).append(seconds)

    def verdict(self) -> str | None:
        """None (go on timing), "compiled", or "python"."""
        if self.compiled and min(self.compiled) > TIMED_UNDER:
            return "compiled"
        if len(self.compiled) < SAMPLES or len(self.python) < SAMPLES:
            return None
        return "python" if min(self.compiled) >= SLOWER * min(self.python) else "compiled"

    def summary(self) -> str:
        return (f"its compiled call took {min(self.compiled) * 1e6:.1f} us, its Python "
                f"{min(self.python) * 1e6:.1f} us (fastest of {SAMPLES} each)")


__all__ = ["ENABLED", "CostCheck", "SAMPLES", "SLOWER", "TIMED_UNDER", "WARM_CALLS"]
