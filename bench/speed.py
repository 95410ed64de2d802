"""Speed: eager vs torch.compile vs carve.compile, side by side in one process.

Cases (a)-(d) use the Inductor backend for both compilers and a 1M-element
float32 tensor; cases (e) and (f) use the `eager` backend on 8 elements and report
per-call overhead over a plain Python call of the same function (carve's cost check
off: it would run them as Python). Case (g), PyTorch's polynomial-fit tutorial loop,
checks that small regions called once per step cost no more than eager (Inductor).

Every variant is warmed up first (compile time is excluded), then timed with
`torch.utils.benchmark.Timer.blocked_autorange` in interleaved rounds
(eager, torch.compile, carve, eager, ...) so that load from other processes on
a shared machine hits all three alike; the reported time is the median over
all rounds' measurements. Prints stay real during timing but go to
`os.devnull`, for all three variants, so printing costs the same everywhere.
"""

from __future__ import annotations

import contextlib
import os
import statistics
from dataclasses import dataclass, field

import torch
import torch._dynamo
from torch.utils.benchmark import Timer

import carve
from carve.runtime import cost_check

import programs

CHAIN_ELEMENTS = 1_000_000
OVERHEAD_ELEMENTS = 8
POLY_ELEMENTS = 2000


@dataclass
class Case:
    key: str
    title: str
    fn: object
    elements: int
    backend: str
    overhead: bool = False  # report compiled - eager instead of speedups
    cost_check: bool = False  # overhead cases: carve's cost check on (it may run the region as Python)


CASES = [
    Case("a", "break-free chain (20 ops)", programs.chain, CHAIN_ELEMENTS, "inductor"),
    Case("b", f"chain in a {programs.CHAIN_ITERATIONS}-iteration loop with a print", programs.loop_print,
         CHAIN_ELEMENTS, "inductor"),
    Case("c", "chain in a try block with a print", programs.try_print, CHAIN_ELEMENTS, "inductor"),
    Case("d", "chain in a user `with` block with a print", programs.with_print, CHAIN_ELEMENTS, "inductor"),
    Case("e", "per-call overhead, `x + 1` on 8 elements (cost check off)", programs.add_one,
         OVERHEAD_ELEMENTS, "eager", overhead=True),
    Case("f", "per-call overhead, `linear(x) + 1` on 8 elements (cost check off)",
         programs.linear_plus_one, OVERHEAD_ELEMENTS, "eager", overhead=True),
    Case("e2", "per-call overhead, `x + 1` on 8 elements (cost check on, the default)", programs.add_one,
         OVERHEAD_ELEMENTS, "eager", overhead=True, cost_check=True),
    Case("f2", "per-call overhead, `linear(x) + 1` on 8 elements (cost check on, the default)",
         programs.linear_plus_one, OVERHEAD_ELEMENTS, "eager", overhead=True, cost_check=True),
    Case("g", f"polynomial-fit tutorial loop ({programs.POLY_STEPS} steps, autograd, a print every 20)",
         programs.poly_fit, POLY_ELEMENTS, "inductor"),
]


@dataclass
class CaseResult:
    case: Case
    seconds: dict = field(default_factory=dict)  # variant -> median seconds per call
    ok: dict = field(default_factory=dict)  # variant -> result equals eager's
    error: dict = field(default_factory=dict)  # variant -> error text, if it failed


VARIANTS = ("eager", "torch.compile", "carve")


@contextlib.contextmanager
def quiet_stdout():
    """Send prints to os.devnull: still real writes, at the same cost for every variant."""
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        yield


def _median_time(callable_, arg, rounds_times: list, min_run_time: float) -> None:
    timer = Timer(stmt="fn(x)", globals={"fn": callable_, "x": arg}, num_threads=torch.get_num_threads())
    measurement = timer.blocked_autorange(min_run_time=min_run_time)
    rounds_times.extend(measurement.times)


def run_case(case: Case, rounds: int, min_run_time: float, log=print) -> CaseResult:
    if not case.overhead or case.cost_check:
        return _run_case(case, rounds, min_run_time, log)
    # The overhead cases measure a compiled region's call: carve's cost check would (rightly)
    # run `x + 1` as Python, which is faster, and measure nothing.
    saved, cost_check.ENABLED = cost_check.ENABLED, False
    try:
        return _run_case(case, rounds, min_run_time, log)
    finally:
        cost_check.ENABLED = saved


def _run_case(case: Case, rounds: int, min_run_time: float, log=print) -> CaseResult:
    result = CaseResult(case)
    torch.manual_seed(0)
    x = torch.randn(case.elements)
    torch._dynamo.reset()
    variants = {
        "eager": case.fn,
        "torch.compile": torch.compile(case.fn, backend=case.backend),
        "carve": carve.compile(case.fn, backend=case.backend),
    }
    with quiet_stdout():
        expected = case.fn(x.clone())
    live = {}
    for name, fn in variants.items():
        try:
            with quiet_stdout():
                for _ in range(3):  # compile, then settle caches
                    out = fn(x)
            result.ok[name] = bool(torch.allclose(out, expected, rtol=1e-4, atol=1e-5))
            live[name] = fn
        except Exception as error:  # a crash is a result to report, not a reason to stop the bench
            result.error[name] = f"{type(error).__name__}: {error}"
            log(f"  ({case.key}) {name} FAILED: {result.error[name]}")
    times = {name: [] for name in live}
    with quiet_stdout():
        for _ in range(rounds):
            for name, fn in live.items():
                _median_time(fn, x, times[name], min_run_time)
    for name, samples in times.items():
        result.seconds[name] = statistics.median(samples)
    return result


def run(rounds: int = 3, min_run_time: float = 0.6, log=print) -> list:
    results = []
    for case in CASES:
        log(f"speed ({case.key}) {case.title} ...")
        if case.overhead:  # microseconds per call: more, shorter rounds ride out bursts of load better
            results.append(run_case(case, rounds * 3, min_run_time / 3, log))
        else:
            results.append(run_case(case, rounds, min_run_time, log))
    return results


# -- reporting ---------------------------------------------------------------------------------

def _fmt_time(seconds) -> str:
    if seconds is None:
        return "failed"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def _verdict(met: bool | None) -> str:
    return "n/a" if met is None else ("met" if met else "**not met**")


NOT_SLOWER = "no slower than eager (5%)"


def targets(result: CaseResult) -> tuple[str, bool | None]:
    """carve's target for this case and whether this run met it."""
    s = result.seconds
    eager, tc, cv = s.get("eager"), s.get("torch.compile"), s.get("carve")
    key = result.case.key
    overhead_target = "overhead <= torch.compile's + 1 us"
    if cv is None or not result.ok.get("carve", False):
        text = {"a": "within 5% of torch.compile", "g": NOT_SLOWER}.get(key, overhead_target if result.case.overhead
                                                                      else ">= 2x eager and torch.compile")
        return text, False
    if key == "g":
        return NOT_SLOWER, None if eager is None else cv <= eager * 1.05
    if key == "a":
        return "within 5% of torch.compile", None if tc is None else cv <= tc * 1.05
    if result.case.overhead:
        # Dynamo's own guard and frame overhead, plus carve's call around Dynamo's compiled code.
        return overhead_target, None if tc is None else cv <= tc + 1e-6
    met = eager is not None and eager / cv >= 2 and (tc is None or tc / cv >= 2)
    return ">= 2x eager and torch.compile", met


def table(results: list) -> str:
    lines = [
        "| case | eager | torch.compile | carve.compile | torch.compile speedup over eager | carve speedup over eager | carve speedup over torch.compile | target | met |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        if result.case.overhead:
            continue
        s = result.seconds
        eager, tc, cv = s.get("eager"), s.get("torch.compile"), s.get("carve")

        def ratio(num, den):
            return f"{num / den:.2f}x" if num and den else "-"

        text, met = targets(result)
        wrong = [name for name, ok in result.ok.items() if not ok]
        note = f" (WRONG RESULT: {', '.join(wrong)})" if wrong else ""
        lines.append(
            f"| ({result.case.key}) {result.case.title}{note} | {_fmt_time(eager)} | {_fmt_time(tc)} | {_fmt_time(cv)} "
            f"| {ratio(eager, tc)} | {ratio(eager, cv)} | {ratio(tc, cv)} | {text} | {_verdict(met)} |"
        )
    overhead = [r for r in results if r.case.overhead]
    if overhead:
        lines += [
            "",
            "| case | plain call | torch.compile | carve.compile | torch.compile overhead | carve overhead | target | met |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for result in overhead:
            s = result.seconds
            eager, tc, cv = s.get("eager"), s.get("torch.compile"), s.get("carve")
            text, met = targets(result)
            tc_over = _fmt_time(tc - eager) if tc is not None and eager is not None else "-"
            cv_over = _fmt_time(cv - eager) if cv is not None and eager is not None else "-"
            lines.append(
                f"| ({result.case.key}) {result.case.title} | {_fmt_time(eager)} | {_fmt_time(tc)} | {_fmt_time(cv)} "
                f"| {tc_over} | {cv_over} | {text} | {_verdict(met)} |"
            )
    return "\n".join(lines)
