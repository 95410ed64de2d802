"""Real models: eager vs torch.compile vs carve.compile, Inductor, one process.

    GPT-2 and Llama from transformers (small configs, random weights), and a nanoGPT-style GPT:
      forward      model(ids)                            under torch.no_grad()
      train step   loss = model(ids, labels=ids).loss; loss.backward(); opt.step(); opt.zero_grad()

For each model and each variant: the first call (compile included; carve after torch.compile
in the same process, so Inductor's on-disk caches may serve both: indicative only) and the
steady-state median time per call (torch.utils.benchmark, interleaved rounds). Outputs are
compared with eager before timing; graphs compiled are counted for both compilers.

`device` (bench/run.py --device; default "cuda" when available, else "cpu"): models and inputs
are moved to it; on CUDA every timing synchronises the device before reading the clock
(torch.utils.benchmark's Timer does so itself; the first-call timings call `synchronize`).
"""

from __future__ import annotations

import copy
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch.utils.benchmark import Timer

import carve
from dynamic import CountingInductor

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.models.nanogpt

BATCH, LENGTH, VOCAB = 4, 64, 256


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def synchronize(device: str | torch.device) -> None:
    """Wait for the device's queued work (CUDA runs kernels asynchronously), before reading a clock."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def gpt2(n_layer: int = 4):
    import transformers

    config = transformers.GPT2Config(n_layer=n_layer, n_embd=128, n_head=4, vocab_size=VOCAB, n_positions=128,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config)


def llama(n_layer: int = 4):
    import transformers

    config = transformers.LlamaConfig(num_hidden_layers=n_layer, hidden_size=128, intermediate_size=256,
                                      num_attention_heads=4, num_key_value_heads=4, vocab_size=VOCAB,
                                      max_position_embeddings=128)
    return transformers.LlamaForCausalLM(config)


class NanoGPTAdapter(torch.nn.Module):
    """nanoGPT's GPT, called like the transformers models (ids, labels=ids)."""

    def __init__(self, n_layer: int = 4) -> None:
        super().__init__()
        from tests.models.nanogpt import GPT, GPTConfig

        self.gpt = GPT(GPTConfig(block_size=128, vocab_size=VOCAB, n_layer=n_layer, n_head=4, n_embd=128, dropout=0.0))

    def forward(self, ids, labels=None):
        logits, loss = self.gpt(ids, labels)
        return loss if labels is not None else logits


MODELS = {"GPT-2 (transformers)": gpt2, "Llama (transformers)": llama, "nanoGPT": NanoGPTAdapter}


def _logits(out):
    return out.logits if hasattr(out, "logits") else out


def _loss(out):
    return out.loss if hasattr(out, "loss") else out


@dataclass
class ModelResult:
    name: str
    first_call: dict = field(default_factory=dict)   # (task, variant) -> seconds
    seconds: dict = field(default_factory=dict)      # (task, variant) -> median seconds per call
    graphs: dict = field(default_factory=dict)       # (task, compiler) -> graphs
    ok: dict = field(default_factory=dict)           # (task, variant) -> matches eager
    error: dict = field(default_factory=dict)


def _variants(model, counters):
    torch._dynamo.reset()
    return {
        "eager": model,
        "torch.compile": torch.compile(model, backend=counters["torch.compile"]),
        "carve": carve.compile(model, backend=counters["carve"]),
    }


def run_model(name: str, build, rounds: int, log=print, device: str = "cpu") -> ModelResult:
    result = ModelResult(name)
    torch.manual_seed(0)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH)).to(device)

    # Forward, no grad.
    model = build().to(device).eval()
    counters = {"torch.compile": CountingInductor(), "carve": CountingInductor()}
    variants = _variants(model, counters)
    with torch.no_grad():
        expected = _logits(model(ids))
        live = {}
        for variant, fn in variants.items():
            log(f"  models: {name} forward, {variant} first call ...")
            try:
                synchronize(device)
                start = time.perf_counter()
                out = _logits(fn(ids))
                synchronize(device)
                result.first_call[("forward", variant)] = time.perf_counter() - start
                carve.wait_for_kernels()  # carve's steady state: its compiled kernels, not the first calls' ops
                again = _logits(fn(ids))  # carve's first call ran the graph's ops; this one its kernels
                result.ok[("forward", variant)] = all(
                    bool(torch.allclose(got, expected, rtol=1e-3, atol=1e-3)) for got in (out, again))
                live[variant] = fn
            except Exception as error:  # a crash is a result, not the end of the bench
                result.error[("forward", variant)] = f"{type(error).__name__}: {error}"
        samples = {variant: [] for variant in live}
        for _ in range(rounds):
            for variant, fn in live.items():
                synchronize(device)
                timer = Timer(stmt="fn(ids)", globals={"fn": fn, "ids": ids}, num_threads=torch.get_num_threads())
                samples[variant].extend(timer.blocked_autorange(min_run_time=0.4).times)
    for variant, times in samples.items():
        result.seconds[("forward", variant)] = statistics.median(times)
    for compiler, counter in counters.items():
        result.graphs[("forward", compiler)] = counter.graphs

    # Training step: forward with labels, backward, optimizer step. Each variant trains its own
    # copy from the same weights; the first step's loss is compared with eager's.
    base = build().to(device).train()
    counters = {"torch.compile": CountingInductor(), "carve": CountingInductor()}
    models = {variant: copy.deepcopy(base) for variant in ("eager", "torch.compile", "carve")}
    steps = {}
    torch._dynamo.reset()
    for variant, model in models.items():
        compiled = (model if variant == "eager" else torch.compile(model, backend=counters[variant])
                    if variant == "torch.compile" else carve.compile(model, backend=counters[variant]))
        optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)

        def step(compiled=compiled, optimizer=optimizer):
            loss = _loss(compiled(ids, labels=ids))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            return loss

        steps[variant] = step
    live = {}
    expected_loss = None
    for variant, step in steps.items():
        log(f"  models: {name} train step, {variant} first call ...")
        try:
            synchronize(device)
            start = time.perf_counter()
            loss = step().detach()
            synchronize(device)
            result.first_call[("train", variant)] = time.perf_counter() - start
            expected_loss = loss if expected_loss is None else expected_loss
            result.ok[("train", variant)] = bool(torch.allclose(loss, expected_loss, rtol=1e-3, atol=1e-3))
            live[variant] = step
        except Exception as error:
            result.error[("train", variant)] = f"{type(error).__name__}: {error}"
    samples = {variant: [] for variant in live}
    for _ in range(rounds):
        for variant, step in live.items():
            synchronize(device)
            timer = Timer(stmt="step()", globals={"step": step}, num_threads=torch.get_num_threads())
            samples[variant].extend(timer.blocked_autorange(min_run_time=0.4).times)
    for variant, times in samples.items():
        result.seconds[("train", variant)] = statistics.median(times)
    for compiler, counter in counters.items():
        result.graphs[("train", compiler)] = counter.graphs
    return result


def run(rounds: int = 3, log=print, device: str | None = None) -> list:
    device = device or default_device()
    return [run_model(name, build, rounds, log, device) for name, build in MODELS.items()]


def _ms(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.2f} ms"


def _s(seconds) -> str:
    return "-" if seconds is None else f"{seconds:.1f} s"


def section(results: list, device: str = "cpu") -> str:
    lines = [
        "## Real models",
        "",
        f"Device: {device}. "
        f"transformers' GPT-2 and Llama and a nanoGPT-style GPT (4 layers, width 128, vocab {VOCAB}, random "
        f"weights), batch {BATCH} x {LENGTH} tokens; Inductor for both compilers. Forward under `torch.no_grad()`; "
        "train step = forward with labels, backward, SGD step. Steady state: median time per call "
        "(torch.utils.benchmark, interleaved rounds). First call: compile included, indicative only (carve "
        "runs after torch.compile in one process and Inductor's caches may serve both). Targets: "
        "steady state no slower than torch.compile; every result matches eager (`bench/models.py`).",
        "",
        "| model | task | eager | torch.compile | carve | carve / torch.compile | graphs (torch.compile / carve) "
        "| first call (torch.compile / carve) | matches eager |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        for task in ("forward", "train"):
            s = result.seconds
            tc, cv = s.get((task, "torch.compile")), s.get((task, "carve"))
            ratio = "-" if tc is None or cv is None else f"{cv / tc:.2f}"
            ok = all(result.ok.get((task, v), False) for v in ("torch.compile", "carve"))
            lines.append(
                f"| {result.name} | {task} | {_ms(s.get((task, 'eager')))} | {_ms(tc)} | {_ms(cv)} | {ratio} | "
                f"{result.graphs.get((task, 'torch.compile'), '-')} / {result.graphs.get((task, 'carve'), '-')} | "
                f"{_s(result.first_call.get((task, 'torch.compile')))} / {_s(result.first_call.get((task, 'carve')))} "
                f"| {'yes' if ok else '**no**'} |")
        for (task, variant), error in result.error.items():
            lines.append(f"\n{result.name} {task} {variant} failed: `{error[:300]}`")
    return "\n".join(lines)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=default_device(), help="default: cuda if available, else cpu")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(section(run(rounds=args.rounds, device=args.device), args.device))
