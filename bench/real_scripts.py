"""Real scripts: public training, evaluation and generation scripts, each run three ways.

    .venv/bin/python bench/real_scripts.py                 # every script: steady state, then first 10 calls
    .venv/bin/python bench/real_scripts.py nanogpt mnist   # some scripts
    .venv/bin/python bench/real_scripts.py --held-out      # the independent set only (harness.HELD_OUT)
    .venv/bin/python bench/real_scripts.py --no-first-calls
    .venv/bin/python bench/real_scripts.py --first-calls nanogpt carve   # one fresh-process measurement

The scripts, the harness and what each call runs are in tests/real_scripts/ (harness.py);
the tests there check that carve's results equal eager's. Here, Inductor for both compilers:

- steady state: eager, torch.compile on the model(s) (where the script's authors put it) and
  carve.compile on the function holding the graph breaks (as carve's README advises), loaded
  side by side in one process, warmed up by `WARM_UP_CALLS` calls, then timed in interleaved
  rounds, each mode making the same calls of the script in a round (the median round is
  reported); every call is seeded with its index first (the modes share the process's random
  generators: each mode's i-th call draws the same batches, noise and RL actions); printing goes
  to os.devnull for all three;
- graphs: what each compiler handed to Inductor over the warm-up and the timed calls
  (recompiles included);
- first 10 calls: each compiler in a fresh process with an empty Inductor cache, the wall time
  of the script's first 10 calls, compiling included: the time until the program runs at
  full speed.

`--device` (bench/run.py --device; default "cuda" when available, else "cpu"): on CPU the
scripts run as the tests run them. On another device, each script's copy is moved after it
loads (`place`): its model globals, its module-level tensors, and its `device` /
`device_type` globals (which the functions read when they make batches); the scripts in
`CPU_ONLY` stay on the CPU (their device is fixed inside the function under test, or they
have none), marked so in the table. Timings synchronise the device: torch.utils.benchmark's
Timer does so itself, the first-calls timing calls `synchronize`.

Inductor draws random numbers from its own stream unless `fallback_random` is set: dropout,
sampled actions and sampled batches would then differ from eager's, and with them the work
(an RL episode's length follows the actions drawn). Both compilers run with
`torch._inductor.config.fallback_random = True` here, so every mode does the same work.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(ROOT))

WARM_UP_CALLS = 20  # past the cost check's timed calls (runtime/cost_check.py) of a region called once a call
FIRST_CALLS = 10
COMPILED = ("torch.compile", "carve")
# Timed in the steady state beside the three ways, not in the first-calls column.
OTHER_PLACEMENTS = ("torch.compile on the function", "carve on the model")
# Scripts that cannot be moved from outside: conditional_diffusion makes its model and its
# `device = "cpu"` inside train_mnist(); time_sequence_prediction's forward makes CPU zeros;
# the two RL scripts turn the environment's NumPy states into CPU tensors.
CPU_ONLY = ("conditional_diffusion", "time_sequence_prediction", "actor_critic", "reinforce")


def default_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def device_for(name: str, device: str) -> str:
    return "cpu" if name in CPU_ONLY else device


def synchronize(device: str) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def place(run, device: str) -> None:
    """Move a loaded script's copy to `device` (nothing to do on the CPU, where the scripts are)."""
    import torch

    if torch.device(device).type == "cpu":
        return
    module = run.module
    for name in run.case.models:
        value = getattr(module, name)
        if isinstance(value, torch.nn.Module):
            value.to(device)  # in place: the optimizers made at load keep these parameters
    for name, value in list(vars(module).items()):
        if isinstance(value, torch.nn.Module) and name not in run.case.models:
            value.to(device)
        elif isinstance(value, torch.Tensor) and not name.startswith("__"):
            setattr(module, name, value.to(device))
    if isinstance(getattr(module, "device", None), torch.device):
        module.device = torch.device(device)
    elif isinstance(getattr(module, "device", None), str):
        module.device = device
    if isinstance(getattr(module, "device_type", None), str):
        module.device_type = torch.device(device).type


@dataclass
class ScriptResult:
    name: str
    unit: str = "call"                                # what `seconds` and `graph_calls` are per
    seconds: dict = field(default_factory=dict)       # mode -> median seconds per unit, steady state
    graphs: dict = field(default_factory=dict)        # compiler -> graphs compiled
    graph_calls: dict = field(default_factory=dict)   # compiler -> graph calls per unit, steady state
    first_calls: dict = field(default_factory=dict)   # mode -> seconds for the first FIRST_CALLS calls
    error: dict = field(default_factory=dict)         # mode -> what went wrong
    device: str = "cpu"                               # where it ran (CPU_ONLY scripts: cpu)


def _same_random_numbers() -> None:
    """Inductor draws eager's random numbers (see the module docstring), for both compilers."""
    import torch._inductor.config

    torch._inductor.config.fallback_random = True


def _quiet() -> None:
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    logging.getLogger("carve").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")


def steady_state(name: str, rounds: int, min_run_time: float, log=print, device: str = "cpu") -> ScriptResult:
    """The three ways of one script in this process, warmed up, then timed interleaved."""
    from tests.real_scripts.harness import CASES, MODES, OTHER_PLACEMENTS, load, time_interleaved, unload

    device = device_for(name, device)
    result = ScriptResult(name, unit=CASES[name].work_unit, device=device)
    runs = []
    for mode in MODES + OTHER_PLACEMENTS:
        try:
            run = load(CASES[name], mode, backend="inductor")
            place(run, device)
            for _ in range(WARM_UP_CALLS):
                run.call(record=False, seeded=True)  # each mode's i-th call draws the same numbers
            runs.append(run)
        except Exception as error:  # a crash is a result of the benchmark, not its end
            result.error[mode] = f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
            log(f"  {name}, {mode}: {result.error[mode]}")
    counted = {run.mode: run.graph_calls for run in runs}
    work_before = {run.mode: run.work_done for run in runs}
    result.seconds = time_interleaved(runs, rounds=rounds, min_run_time=min_run_time)
    for run in runs:
        if run.mode in COMPILED + OTHER_PLACEMENTS:
            result.graphs[run.mode] = run.graphs
            result.graph_calls[run.mode] = (run.graph_calls - counted[run.mode]) / max(1, run.work_done - work_before[run.mode])
        unload(run)
    return result


def first_calls(name: str, mode: str, device: str = "cpu") -> dict:
    """This process's first FIRST_CALLS calls of one script one way (the subprocess of `run_first_calls`)."""
    import torch

    from tests.real_scripts.harness import CASES, load

    torch.set_num_threads(1)
    _quiet()
    _same_random_numbers()
    device = device_for(name, device)
    run = load(CASES[name], mode, backend="inductor")
    place(run, device)
    synchronize(device)
    start = time.perf_counter()
    for _ in range(FIRST_CALLS):
        run.call(record=False)
    synchronize(device)
    return {"seconds": time.perf_counter() - start, "graphs": run.graphs}


def run_first_calls(name: str, log=print, device: str = "cpu") -> dict:
    results = {}
    for mode in ("eager", *COMPILED):
        log(f"  first {FIRST_CALLS} calls: {name}, {mode}, fresh process and Inductor cache ...")
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=cache)
            done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--first-calls", name, mode,
                                   "--device", device],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
        if done.returncode != 0:
            results[mode] = {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}
        else:
            results[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def run(names: list[str] | None = None, rounds: int = 5, min_run_time: float = 1.0, with_first_calls: bool = True,
        log=print, device: str | None = None) -> list[ScriptResult]:
    """Every script (or `names`), in this process's torch thread setting, on `device` (default: cuda if
    available, else cpu; CPU_ONLY scripts on the CPU)."""
    from tests.real_scripts.harness import CASES

    device = device or default_device()
    _quiet()
    _same_random_numbers()
    results = []
    for name in names or list(CASES):
        log(f"real scripts: {name} (steady state) ...")
        result = steady_state(name, rounds, min_run_time, log, device)
        if with_first_calls:
            for mode, measured in run_first_calls(name, log, device).items():
                if "error" in measured:
                    result.error.setdefault(mode, measured["error"])
                else:
                    result.first_calls[mode] = measured["seconds"]
        results.append(result)
    return results


def _ratio(numerator: float | None, denominator: float | None) -> str:
    if not numerator or not denominator:
        return "-"
    return f"{numerator / denominator:.2f}x"


def _ms(seconds: float | None, unit: str = "call") -> str:
    if seconds is None:
        return "-"
    per = "" if unit == "call" else f" per {unit}"
    return f"{seconds * 1e3:.1f} ms{per}" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} us{per}"


def _row_name(name: str) -> str:
    """The script's name; "(held out)" after a script of the independent set when tables mix the two."""
    from tests.real_scripts.harness import CASES

    return f"{name} (held out)" if name in CASES and CASES[name].held_out else name


def table(results: list[ScriptResult]) -> str:
    lines = [
        "| script | carve on the function / torch.compile on the model (time) | carve / eager | "
        "torch.compile on the function / carve on the model, each / torch.compile on the model | "
        "graphs carve / torch.compile | graph calls per call carve / torch.compile | "
        f"first {FIRST_CALLS} calls carve / torch.compile / eager |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        seconds, graphs, calls, first = result.seconds, result.graphs, result.graph_calls, result.first_calls
        steady = (f"**{_ratio(seconds.get('carve'), seconds.get('torch.compile'))}** "
                  f"({_ms(seconds.get('carve'))} / {_ms(seconds.get('torch.compile'), result.unit)})")
        first_text = " / ".join(f"{first[mode]:.1f} s" if mode in first else "-"
                                for mode in ("carve", "torch.compile", "eager"))
        call_text = " / ".join(f"{calls[mode]:.0f}" if mode in calls else "-" for mode in ("carve", "torch.compile"))
        errors = "; ".join(f"{mode}: {text}" for mode, text in result.error.items())
        where = "" if result.device == "cpu" else f" ({result.device})"
        others = " / ".join(_ratio(seconds.get(mode), seconds.get("torch.compile")) for mode in OTHER_PLACEMENTS)
        lines.append(
            f"| {_row_name(result.name)}{where} | {steady} | {_ratio(seconds.get('carve'), seconds.get('eager'))} "
            f"({_ms(seconds.get('eager'), result.unit)} eager) | {others} "
            f"| {graphs.get('carve', '-')} / {graphs.get('torch.compile', '-')} "
            f"| {call_text} | {first_text} |" + (f" **{errors}**" if errors else ""))
    return "\n".join(lines)


def section(results: list[ScriptResult]) -> str:
    devices = sorted({result.device for result in results})
    where = "" if devices == ["cpu"] else (
        f"Devices: {', '.join(devices)} (the scripts named with a device ran on it; the others, which fix "
        "their device inside the function under test, on the CPU). ")
    return "\n".join([
        "## Real scripts",
        "",
        where + "Public training scripts (tests/real_scripts/scripts/, synthetic data, small sizes), Inductor for both "
        "compilers, one intra-op thread. Time per call of the script's function(s) (per environment step for the "
        "episode loops, whose episodes last as long as the sampled actions allow): the median of interleaved "
        f"rounds in which each mode makes the same calls, after {WARM_UP_CALLS} warm-up calls; below 1.00x carve "
        "is faster. Graphs: compiled over the "
        f"warm-up and timed calls. First {FIRST_CALLS} calls: a fresh process and Inductor cache each. Inductor "
        "draws eager's random numbers (`fallback_random`), so that every mode does the same work. "
        "What each script and call runs: docs/real_scripts.md.",
        "",
        table(results),
    ])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scripts", nargs="*", help="script names (default: all)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--min-run-time", type=float, default=1.0)
    parser.add_argument("--held-out", action="store_true",
                        help="the independent set (tests/real_scripts/harness.py HELD_OUT), after any scripts named")
    parser.add_argument("--no-first-calls", action="store_true", help="skip the fresh-process first-calls column")
    parser.add_argument("--first-calls", nargs=2, metavar=("SCRIPT", "MODE"),
                        help="(internal) measure one script's first calls in this process, print JSON")
    parser.add_argument("--device", default=None, help="default: cuda if available, else cpu")
    args = parser.parse_args(argv)
    device = args.device or default_device()
    if args.first_calls:
        print(json.dumps(first_calls(*args.first_calls, device=device)))
        return 0
    import torch

    torch.set_num_threads(1)  # as `make bench` (bench/run.py --threads)
    started = time.time()
    names = list(args.scripts)
    if args.held_out:
        from tests.real_scripts.harness import HELD_OUT

        names += [name for name in HELD_OUT if name not in names]
    results = run(names or None, rounds=args.rounds, min_run_time=args.min_run_time,
                  with_first_calls=not args.no_first_calls, log=lambda text: print(text, file=sys.stderr, flush=True),
                  device=device)
    print(section(results))
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
