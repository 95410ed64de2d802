"""`make bench`: carve's benchmarks, as docs/bench.md describes them.

1. Speed (bench/speed.py): eager vs torch.compile vs carve.compile in one
   process, same backend, on the chain programs of bench/programs.py, plus
   per-call overhead.
2. Capture (bench/capture.py): the share of an eager run's torch-level ops
   that each compiler runs inside graphs, on the break-heavy programs (b)-(d)
   and on programs from bench/generate.py; every compiled run is compared
   with eager (results, prints, context-manager and `finally` events,
   exceptions, mutated inputs), on repeated calls and on new inputs.
3. Dynamic shapes (bench/dynamic.py): a model called with 12 sequence lengths.
4. Real models (bench/models.py): GPT-2, Llama and nanoGPT, forward and training step; their
   first call in fresh processes with empty Inductor caches (bench/first_call.py).
5. Real scripts (bench/real_scripts.py): public training scripts run eager, with torch.compile
   on the model and with carve on the function holding the graph breaks; steady state and, in
   fresh processes, the first 10 calls (skipped with --quick).
6. The linter benchmark, bench/lint_bench.py, if present (its own process).

Tables go to stdout and to bench/results/latest.md; with --write-docs also to
docs/bench.md (what the README quotes).

    .venv/bin/python bench/run.py                 # everything (~3-5 minutes on 2 cores)
    .venv/bin/python bench/run.py --quick         # fewer rounds and programs
    .venv/bin/python bench/run.py --only capture  # one part
    .venv/bin/python bench/run.py --threads 0     # torch's default threads (default here: 1, see --help)
    .venv/bin/python bench/run.py --device cuda   # real models and scripts on a GPU (default: cuda if available)
"""

from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

import torch  # noqa: E402

import capture  # noqa: E402
import dynamic  # noqa: E402
import first_call  # noqa: E402
import models  # noqa: E402
import real_scripts  # noqa: E402
import speed  # noqa: E402


BUSY_LOAD = 1.5


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load() -> str:
    try:
        return " ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "unknown"


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def describe_device(device: str) -> str:
    if torch.device(device).type == "cuda":
        return (f"real models and scripts on {device} ({torch.cuda.get_device_name(torch.device(device))}, "
                f"CUDA {torch.version.cuda}), the other parts on the CPU")
    return "no GPU" if not torch.cuda.is_available() else f"everything on the CPU ({device})"


def environment(threads: int, load_before: str, device: str = "cpu") -> str:
    text = (
        f"torch {torch.__version__}, Python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} cores, {threads} intra-op thread(s), {describe_device(device)}; "
        f"load average (1/5/15 min) {load_before} at start, {load()} at end; "
        f"{datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}"
    )
    return text


def busy_note(load_before: str) -> str:
    if load_before == "unknown" or float(load_before.split()[0]) <= BUSY_LOAD:
        return ""
    return (f"Note: the machine was busy when this run started (load above {BUSY_LOAD}): absolute times may be "
            "off by tens of percent; the side-by-side ratios, measured in interleaved rounds, are steadier.")


def speed_section(results) -> str:
    return "\n".join([
        "## Speed",
        "",
        "Median time per call (torch.utils.benchmark, interleaved rounds, warm: compile time excluded). "
        f"(a)-(d): Inductor backend for both compilers, {speed.CHAIN_ELEMENTS:,} float32 elements; "
        "prints are real but go to os.devnull for all three. "
        f"(e), (f): `eager` backend, {speed.OVERHEAD_ELEMENTS} elements; overhead = compiled - plain call "
        "(carve's cost check off, which would run them as Python). "
        f"(g): PyTorch's polynomial-fit tutorial loop, Inductor, {speed.POLY_ELEMENTS:,} elements: "
        "small regions once per step, which carve's cost check (runtime/cost_check.py) runs as Python "
        "when their compiled call is slower. "
        "One intra-op thread by default (`--threads`): on a shared 2-core machine, two threads make eager "
        "times swing several-fold with other load, which flatters every compiler.",
        "",
        speed.table(results),
    ])


def capture_table(results) -> str:
    lines = [
        "| program | eager ops | torch.compile: graphs | torch.compile: capture | carve: graphs | carve: capture | matches eager |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in results:
        cells = []
        for compiler in capture.COMPILERS:
            value = result.capture(compiler)
            cells += [str(result.graphs.get(compiler, "-")), "-" if value is None else f"{value:.0%}"]
        bad = [f"{c}: {'crash' if c in result.errors else 'WRONG'}" for c in capture.COMPILERS
               if c in result.errors or c in result.mismatches]
        lines.append(f"| {result.name} | {result.eager_ops} | " + " | ".join(cells)
                     + f" | {'yes' if not bad else '**no** (' + ', '.join(bad) + ')'} |")
    return "\n".join(lines)


def capture_summary(handwritten, generated) -> str:
    lines = [
        "| programs | torch.compile: mean capture | carve: mean capture | carve: min capture | torch.compile: failures | carve: failures |",
        "|---|---|---|---|---|---|",
    ]
    for label, results in (("(b)-(d) hand-written", handwritten), (f"{len(generated)} generated", generated)):
        cells = []
        for compiler in capture.COMPILERS:
            values = [r.capture(compiler) for r in results if r.capture(compiler) is not None]
            cells.append(f"{sum(values) / len(values):.1%}" if values else "-")
        carve_values = [r.capture("carve") for r in results if r.capture("carve") is not None]
        cells.append(f"{min(carve_values):.1%}" if carve_values else "-")
        for compiler in capture.COMPILERS:
            wrong = sum(compiler in r.mismatches and compiler not in r.errors for r in results)
            crashed = sum(compiler in r.errors for r in results)
            cells.append(f"{wrong} wrong, {crashed} crashed" if wrong or crashed else "0")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def failure_list(results) -> str:
    """One line per failure: which program, which compiler, what went wrong."""
    lines = []
    for result in results:
        for compiler in capture.COMPILERS:
            text = result.errors.get(compiler) or result.mismatches.get(compiler)
            if not text:
                continue
            kind = "crash" if compiler in result.errors else "wrong result"
            lines_of_text = [line.strip() for line in text.strip().splitlines() if line.strip()]
            exception = next((line for line in reversed(lines_of_text) if "Error" in line.split(":")[0]),
                             lines_of_text[0] if lines_of_text else "")
            lines.append(f"- {result.name}, {compiler}: {kind}: `{exception[:200]}`")
    if not lines:
        return "No failures: every compiled run matched eager."
    return "Failures (the program is printed on stderr and kept in bench/results/failures/):\n\n" + "\n".join(lines)


def capture_section(handwritten, generated, first_seed: int) -> str:
    return "\n".join([
        "## Capture",
        "",
        "Share of the torch-level ops of one eager call (counted with a TorchFunctionMode) that run inside "
        "compiled graphs (counted by a backend that wraps each graph; steady-state call after two warm-ups). "
        "Both compilers get the same counting backend (graphs run as `gm.forward`). A failure is a compiled "
        "run whose result, printed output, context-manager/`finally` events, exception or mutated inputs differ "
        "from eager's, on the three calls or on two more with new values and a new shape "
        "(a crash is an exception eager did not raise). "
        f"Generated programs: `bench/generate.py`, seeds {first_seed}-{first_seed + len(generated) - 1}, "
        "64-element tensors. carve's goal: 90% and more.",
        "",
        capture_summary(handwritten, generated),
        "",
        failure_list(handwritten + generated),
        "",
        "<details><summary>Per program</summary>",
        "",
        capture_table(handwritten + generated),
        "",
        "</details>",
    ])


def run_lint_bench() -> str | None:
    """bench/lint_bench.py in its own process; its failure is a note, never the end of `make bench`."""
    script = BENCH / "lint_bench.py"
    if not script.exists():
        return None
    log("lint benchmark (bench/lint_bench.py) ...")
    try:
        process = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True,
                                 timeout=600)
    except subprocess.TimeoutExpired:
        return "## Lint\n\nNote: bench/lint_bench.py did not finish within 10 minutes."
    if process.returncode != 0:
        tail = "\n".join((process.stdout + process.stderr).strip().splitlines()[-20:])
        return (f"## Lint\n\nNote: bench/lint_bench.py failed (exit {process.returncode}); its last lines:\n\n"
                f"```\n{tail}\n```")
    return process.stdout.strip()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["speed", "capture", "dynamic", "models", "real_scripts", "lint"], help="run one part only")
    parser.add_argument("--quick", action="store_true", help="fewer timing rounds and generated programs")
    parser.add_argument("--programs", type=int, default=None, help="generated programs (default 20)")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch intra-op threads (default 1; 0 = torch's default, one per core). With every "
                             "core in use, any other load on the machine stalls OpenMP barriers and inflates "
                             "eager times several-fold, so speedups would be flattering and irreproducible.")
    parser.add_argument("--device", default=default_device(),
                        help="where the real models (bench/models.py, bench/first_call.py) and real scripts "
                             "(bench/real_scripts.py) run: default cuda if available, else cpu. Speed, capture "
                             "and dynamic shapes run on the CPU.")
    parser.add_argument("--write-docs", action="store_true", help="also write docs/bench.md")
    args = parser.parse_args(argv)

    if args.threads:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    # Graph-break warnings from dynamo and carve's "running eagerly" notes would drown the tables.
    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    logging.getLogger("carve").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    load_before = load()
    started = time.time()
    if float(load_before.split()[0] if load_before != "unknown" else 0) > BUSY_LOAD:
        log(f"note: load average is {load_before}; timings will be noisy")

    sections = []
    if args.only in (None, "speed"):
        rounds, min_run_time = (2, 0.3) if args.quick else (5, 0.6)
        sections.append(speed_section(speed.run(rounds=rounds, min_run_time=min_run_time, log=log)))
    if args.only in (None, "capture"):
        count = args.programs if args.programs is not None else (6 if args.quick else 20)
        log("capture (b)-(d) ...")
        handwritten = capture.run_handwritten(log=log)
        log(f"capture on {count} generated programs ...")
        generated = capture.run_generated(count, args.first_seed, log=log,
                                          keep_dir=BENCH / "results" / "failures")
        sections.append(capture_section(handwritten, generated, args.first_seed))
    if args.only in (None, "dynamic"):
        sections.append(dynamic.section(dynamic.run(rounds=2 if args.quick else 3, log=log)))
    if args.only in (None, "models"):
        sections.append(models.section(models.run(rounds=2 if args.quick else 3, log=log, device=args.device),
                                       args.device))
        sections.append(first_call.section(first_call.run(log=log, device=args.device), args.device))
    if args.only in (None, "real_scripts"):
        sections.append(real_scripts.section(real_scripts.run(rounds=3 if args.quick else 5,
                                                              with_first_calls=not args.quick, log=log,
                                                              device=args.device)))

    report = "\n\n".join([
        "# carve benchmarks",
        f"`make bench` ({environment(threads, load_before, args.device)}; took {time.time() - started:.0f} s). "
        "Reproduce with `make bench`; `.venv/bin/python bench/run.py --write-docs` also rewrites this file.",
        *([busy_note(load_before)] if busy_note(load_before) else []),
        *sections,
    ]) + "\n"
    print(report)
    (BENCH / "results").mkdir(exist_ok=True)
    (BENCH / "results" / "latest.md").write_text(report)
    if args.write_docs:
        (ROOT / "docs" / "bench.md").write_text(report)
        log("wrote docs/bench.md")

    if args.only in (None, "lint"):
        lint = run_lint_bench()
        if lint:
            print(lint)
            with open(BENCH / "results" / "latest.md", "a") as out:
                out.write("\n" + lint + "\n")
    log(f"wrote bench/results/latest.md ({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
