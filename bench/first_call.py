"""First-call (compile) time on real models, each compiler in a fresh process with an empty
Inductor cache: what a user waits for the first forward.

    python bench/first_call.py                 # table of both compilers on every model
    python bench/first_call.py --device cuda   # on a GPU (default: cuda if available, else cpu)
    python bench/first_call.py MODEL COMPILER [DEVICE]  # one measurement (the subprocess each row runs)

bench/models.py times the first call too, but there carve runs after torch.compile in one
process and Inductor's caches serve kernels both compile; here nothing is shared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
COMPILERS = ("torch.compile", "carve")


def first_call_models() -> dict:
    """The models of bench/models.py, and GPT-2 at its real depth (12 layers)."""
    from models import MODELS, gpt2

    return {**MODELS, "GPT-2 (transformers), 12 layers": lambda: gpt2(n_layer=12)}


def measure(model_name: str, compiler: str, device: str = "cpu") -> dict:
    import torch

    import carve
    from models import BATCH, LENGTH, VOCAB, synchronize

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = first_call_models()[model_name]().to(device).eval()
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH)).to(device)
    with torch.no_grad():
        expected = model(ids)
        # Inductor's one-time start-up (imports, the C++ toolchain or Triton, its worker pool), paid
        # by whichever compiler runs first in a process: measured apart, on a one-op function.
        synchronize(device)
        start = time.perf_counter()
        torch.compile(lambda x: x.sin() + 1)(torch.ones(4, device=device))
        synchronize(device)
        warm_up = time.perf_counter() - start
        compiled = carve.compile(model) if compiler == "carve" else torch.compile(model)
        start = time.perf_counter()
        got = compiled(ids)
        synchronize(device)
        seconds = time.perf_counter() - start
        # carve's first call does not wait for gcc (runtime/kernel_builds.py): when its compiled
        # kernels are in use. torch.compile's are from its first call on.
        carve.wait_for_kernels()
        synchronize(device)
        kernels_in_use = time.perf_counter() - start
        again = compiled(ids)  # the compiled kernels' answer
    expected = getattr(expected, "logits", expected)
    ok = all(torch.allclose(getattr(out, "logits", out), expected, rtol=1e-3, atol=1e-3) for out in (got, again))
    return {"seconds": seconds, "kernels_in_use": kernels_in_use, "warm_up": warm_up, "ok": bool(ok)}


def default_device() -> str:
    from models import default_device as models_default_device

    return models_default_device()


def run(log=print, device: str | None = None) -> dict:
    device = device or default_device()
    results = {}
    for model_name in first_call_models():
        for compiler in COMPILERS:
            log(f"  first call: {model_name}, {compiler}, {device}, fresh process and Inductor cache ...")
            with tempfile.TemporaryDirectory() as cache:
                env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=cache)
                done = subprocess.run([sys.executable, str(Path(__file__).resolve()), model_name, compiler, device],
                                      capture_output=True, text=True, env=env, cwd=BENCH)
            if done.returncode != 0:
                results[(model_name, compiler)] = {"error": done.stderr.strip().splitlines()[-1:]}
            else:
                results[(model_name, compiler)] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def section(results: dict, device: str = "cpu") -> str:
    lines = [
        "## First call on real models",
        "",
        f"Device: {device}. "
        "The models of the table above, forward under `torch.no_grad()`, Inductor, each compiler in its own "
        "fresh process with an empty Inductor cache (`bench/first_call.py`). *Inductor start-up*: the first "
        "compile of a one-op function in that process (imports, the C++ toolchain), paid once by whichever "
        "compiler runs first; *model's first call*: tracing and compiling the model after it, until the call "
        "returns. carve compiles a repeated layer class once (runtime/repeated_blocks.py) and does not wait "
        "for gcc: the first calls run the graph's ops one by one while the kernels build "
        "(runtime/kernel_builds.py). *Kernels in use*: from the start of the first call until carve's "
        "compiled kernels are all built (torch.compile's are in use from its first call). The answer of the "
        "first call and of a call after the kernels were built is compared with eager's. Target: "
        "carve's first call at most half of torch.compile's. One run per cell.",
        "",
        "| model | Inductor start-up | model's first call: torch.compile | carve | carve / torch.compile "
        "| carve's kernels in use | matches eager |",
        "|---|---|---|---|---|---|---|",
    ]
    for model_name in first_call_models():
        tc, cv = (results.get((model_name, compiler), {}) for compiler in COMPILERS)
        ratio = f"{cv['seconds'] / tc['seconds']:.2f}" if "seconds" in tc and "seconds" in cv else "-"
        ok = "yes" if tc.get("ok") and cv.get("ok") else "**no**"
        fmt = lambda r, key="seconds": f"{r[key]:.1f} s" if key in r else f"failed: {r.get('error')}"  # noqa: E731
        warm = [r["warm_up"] for r in (tc, cv) if "warm_up" in r]
        warm_text = f"{min(warm):.1f}-{max(warm):.1f} s" if warm else "-"
        lines.append(f"| {model_name} | {warm_text} | {fmt(tc)} | {fmt(cv)} | {ratio} | {fmt(cv, 'kernels_in_use')} "
                     f"| {ok} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.path.insert(0, str(BENCH))
    if len(sys.argv) in (3, 4) and not sys.argv[1].startswith("-"):
        print(json.dumps(measure(*sys.argv[1:])))
    else:
        import argparse

        parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
        parser.add_argument("--device", default=None, help="default: cuda if available, else cpu")
        chosen = parser.parse_args().device or default_device()
        print(section(run(device=chosen), chosen))
