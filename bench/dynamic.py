"""Dynamic shapes: one model called with a mix of 12 sequence lengths.

    model = Encoder()                     # a TransformerEncoderLayer and a print between layers
    for length in LENGTHS (shuffled, repeated):
        model(torch.randn(BATCH, length, WIDTH))

eager, torch.compile (dynamic=None: it marks the changed dimension dynamic after
the first recompile) and carve.compile, Inductor for both compilers. Reported:
median time per call over the mix (steady state: each variant first runs every
length once), and how many graphs each compiler compiled for the whole mix.
Results are compared with eager on every length.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass, field

import torch
from torch.utils.benchmark import Timer

import carve

LENGTHS = [7, 9, 12, 16, 17, 23, 31, 32, 40, 48, 57, 64]
BATCH, WIDTH, HEADS = 4, 64, 4


class Encoder(torch.nn.Module):
    """Two encoder layers with a logging line between them (a graph break for both compilers)."""

    def __init__(self) -> None:
        super().__init__()
        self.first = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, dim_feedforward=128, batch_first=True)
        self.second = torch.nn.TransformerEncoderLayer(WIDTH, HEADS, dim_feedforward=128, batch_first=True)
        self.verbose = False

    def forward(self, x):
        h = self.first(x)
        if self.verbose:
            print("hidden norm", h.norm())
        h = self.second(h)
        return h.mean(dim=1)


class CountingInductor:
    """Inductor, counting the graphs it is given. Says it is Inductor (`compiler_name`), so carve
    compiles it as it compiles `backend="inductor"` (repeated layers once, kernels built in the
    background)."""

    compiler_name = "inductor"

    def __init__(self) -> None:
        self.graphs = 0

    def __call__(self, gm, example_inputs):
        from torch._inductor.compile_fx import compile_fx

        self.graphs += 1
        return compile_fx(gm, example_inputs)


@dataclass
class DynamicResult:
    seconds: dict = field(default_factory=dict)   # variant -> median seconds per call over the mix
    graphs: dict = field(default_factory=dict)    # compiler -> graphs compiled for the whole mix
    first_pass: dict = field(default_factory=dict)  # variant -> seconds for the first pass over all lengths
    ok: dict = field(default_factory=dict)
    error: dict = field(default_factory=dict)


def run(rounds: int = 3, log=print) -> DynamicResult:
    torch.manual_seed(0)
    model = Encoder().eval()
    inputs = {n: torch.randn(BATCH, n, WIDTH) for n in LENGTHS}
    torch._dynamo.reset()
    counters = {"torch.compile": CountingInductor(), "carve": CountingInductor()}
    variants = {
        "eager": model,
        "torch.compile": torch.compile(model, backend=counters["torch.compile"]),
        "carve": carve.compile(model, backend=counters["carve"]),
    }
    result = DynamicResult()
    with torch.no_grad():
        expected = {n: model(x) for n, x in inputs.items()}
        live = {}
        for name, fn in variants.items():
            log(f"  dynamic shapes: {name}, first pass over {len(LENGTHS)} lengths ...")
            try:
                start = time.perf_counter()
                ok = True
                for n in LENGTHS:
                    ok &= bool(torch.allclose(fn(inputs[n]), expected[n], rtol=1e-4, atol=1e-4))
                result.first_pass[name] = time.perf_counter() - start
                # carve's first calls ran the graphs' ops while their kernels built: time and check
                # the kernels (runtime/kernel_builds.py).
                carve.wait_for_kernels()
                for n in LENGTHS:
                    ok &= bool(torch.allclose(fn(inputs[n]), expected[n], rtol=1e-4, atol=1e-4))
                result.ok[name] = ok
                live[name] = fn
            except Exception as error:  # a crash is a result, not the end of the bench
                result.error[name] = f"{type(error).__name__}: {error}"
                log(f"  dynamic shapes: {name} FAILED: {result.error[name]}")
        order = LENGTHS * 2
        random.Random(0).shuffle(order)
        samples = {name: [] for name in live}

        def one_pass(fn):
            for n in order:
                fn(inputs[n])

        for _ in range(rounds):
            for name, fn in live.items():
                timer = Timer(stmt="one_pass(fn)", globals={"one_pass": one_pass, "fn": fn},
                              num_threads=torch.get_num_threads())
                measurement = timer.blocked_autorange(min_run_time=0.5)
                samples[name].extend(t / len(order) for t in measurement.times)
    result.seconds = {name: statistics.median(times) for name, times in samples.items()}
    result.graphs = {name: counter.graphs for name, counter in counters.items()}
    return result


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.2f} ms"


def section(result: DynamicResult) -> str:
    s = result.seconds
    tc, cv = s.get("torch.compile"), s.get("carve")
    met = None if tc is None or cv is None else cv <= tc * 1.10
    verdict = {True: "met", False: "**not met**", None: "-"}[met]
    lines = [
        "## Dynamic shapes",
        "",
        f"A two-layer `TransformerEncoderLayer` model (width {WIDTH}, batch {BATCH}) called with {len(LENGTHS)} "
        f"sequence lengths ({', '.join(map(str, LENGTHS))}) in shuffled order; Inductor for both compilers, "
        "default `dynamic=None` for both. Median time per call over the mix, steady state; graphs compiled for "
        "the whole mix; results compared with eager on every length (`bench/dynamic.py`). "
        "Target: carve within 10% of torch.compile. The first-pass row is indicative only: carve runs after "
        "torch.compile in the same process, and Inductor's caches serve kernels both compile.",
        "",
        "| | eager | torch.compile | carve.compile |",
        "|---|---|---|---|",
        f"| time per call | {_ms(s.get('eager'))} | {_ms(tc)} | {_ms(cv)} |",
        f"| first pass over the 12 lengths (compiles included) | {_ms(result.first_pass.get('eager'))} | "
        f"{_ms(result.first_pass.get('torch.compile'))} | {_ms(result.first_pass.get('carve'))} |",
        f"| graphs compiled | - | {result.graphs.get('torch.compile', '-')} | {result.graphs.get('carve', '-')} |",
        f"| matches eager | {'yes' if result.ok.get('eager') else 'no'} | "
        f"{'yes' if result.ok.get('torch.compile') else 'no'} | {'yes' if result.ok.get('carve') else 'no'} |",
        "",
        f"carve within 10% of torch.compile: {verdict}"
        + ("" if cv is None or tc is None else f" (carve / torch.compile = {cv / tc:.2f})."),
    ]
    for name, error in result.error.items():
        lines.append(f"\n{name} failed: `{error[:300]}`")
    return "\n".join(lines)


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(section(run(rounds=2)))
