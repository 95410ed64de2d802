"""One rank of nanoGPT's DDP path on CPU with gloo: eager, then carve on the training loop.

Launched by tests/distributed/test_nanogpt_ddp.py under
`python -m torch.distributed.run --nproc_per_node=2 ... nanogpt_ddp_worker.py OUT_DIR`.

nanoGPT's `train.py` (tests/real_scripts/scripts/nanogpt_train.py) takes its DDP path when
torchrun sets RANK; as written that path is CUDA and NCCL only. The worker loads a copy of the
script with the substitutions below (each checked to occur once; line numbers unchanged),
which stand for nanoGPT's configurator overrides (`--backend=gloo --device=cpu`) plus the
CUDA-only lines of its DDP block:

- backend 'gloo'; device 'cpu'; no `torch.cuda.set_device`; `DDP(model)` without
  `device_ids` (a CPU module takes none), with `bucket_cap_mb` from CARVE_DDP_BUCKET_CAP_MB;
- `init_process_group` only if no group exists (eager and carve load the script in one
  process), and no `destroy_process_group()` at the end of the module (the loop is a function
  called after the module has loaded; the worker destroys the group at its end);
- `gradient_accumulation_steps = 4`: 2 micro-steps per rank, so the first backward runs with
  `require_backward_grad_sync = False` (no all-reduce) and the second all-reduces;
- `master_process = True` on every rank: every rank prints its losses (and evaluates), so each
  rank's losses are compared, not only rank 0's.

Each run (eager, carve) loads a fresh copy of the module: the same seeds (1337 + rank), the same
synthetic batches. `train()` runs 2 iterations per call (`max_iters = iter_num + 1`), as in the
real-scripts suite. The worker writes, per rank, a torch file with each run's printed output,
final parameters and graph counts; the test compares them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import carve  # noqa: E402
from carve.testing import CountingBackend  # noqa: E402
from carve.runtime import cost_check  # noqa: E402
from tests.conftest import EvenClock  # noqa: E402
from tests.real_scripts.harness import PACKAGE, SCRIPTS, TickingClock  # noqa: E402

# As in the test process (tests/conftest.py): the cost check on, decided the same on any load.
cost_check.clock = EvenClock()

SUBSTITUTIONS = [
    ("backend = 'nccl'", "backend = 'gloo'"),
    ("    init_process_group(backend=backend)",
     "    init_process_group(backend=backend) if not torch.distributed.is_initialized() else None"),
    ("    device = f'cuda:{ddp_local_rank}'", "    device = 'cpu'"),
    ("    torch.cuda.set_device(device)", "    pass"),
    ("    master_process = ddp_rank == 0", "    master_process = True"),
    ("gradient_accumulation_steps = 2 ", "gradient_accumulation_steps = 4 "),
    ("    model = DDP(model, device_ids=[ddp_local_rank])",
     "    model = DDP(model, bucket_cap_mb=float(os.environ.get('CARVE_DDP_BUCKET_CAP_MB', '25')))"),
    ("if ddp:\n    destroy_process_group()", "if ddp:\n    pass"),
]

TINY_BUCKET_MB = 0.05  # ~52 KB: GPT's ~0.4 MB of parameters in several buckets
FIRST_BUCKET_BYTES = dist._DEFAULT_FIRST_BUCKET_BYTES
CALLS = 2  # 2 iterations each: 4 iterations, an evaluation at iteration 0


def patched_source() -> str:
    source = (SCRIPTS / "nanogpt_train.py").read_text()
    lines = source.count("\n")
    for old, new in SUBSTITUTIONS:
        assert source.count(old) == 1, f"nanogpt_train.py changed: {old!r} occurs {source.count(old)} times"
        source = source.replace(old, new)
    assert source.count("\n") == lines
    return source


def load(directory: Path, name: str):
    path = directory / f"nanogpt_train_ddp_{name}.py"
    path.write_text(patched_source())
    module_name = f"{PACKAGE}.nanogpt_train_ddp_{name}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = PACKAGE
    sys.modules[module_name] = module
    with contextlib.redirect_stdout(io.StringIO()):
        spec.loader.exec_module(module)
    module.time = TickingClock()
    return module


def run(module, calls: int) -> str:
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        for _ in range(calls):
            module.max_iters = module.iter_num + 1
            module.train()
    return printed.getvalue()


def parameters(module) -> dict[str, torch.Tensor]:
    raw = getattr(module.model.module, "_orig_mod", module.model.module)
    return {name: p.detach().clone() for name, p in raw.named_parameters()}


def graph_summary(counting: CountingBackend) -> list[dict]:
    """Per graph: its ops and how many of GPT's parameters it takes (a graph of the model's forward
    takes some; DDPOptimizer's pieces each take their bucket's)."""
    summary = []
    for gm, ops in zip(counting.graph_modules, counting.ops_per_graph):
        inputs = [node.name for node in gm.graph.nodes if node.op == "placeholder"]
        parameters = [name for name in inputs if "parameters_" in name and not name.endswith("_grad")]
        summary.append({"ops": ops, "parameters": len(parameters)})
    return summary


def main() -> None:
    out = Path(sys.argv[1])
    runs = sys.argv[2].split(",")
    torch.set_num_threads(1)
    rank = int(os.environ["RANK"])
    result: dict = {"rank": rank}
    with tempfile.TemporaryDirectory() as tmp:
        for run_name in runs:
            # eager | carve | carve_tiny_buckets | torch_compile_tiny_buckets | carve_tiny_buckets_unsplit
            torch._dynamo.reset()
            tiny = "tiny_buckets" in run_name
            os.environ["CARVE_DDP_BUCKET_CAP_MB"] = str(TINY_BUCKET_MB if tiny else 25)
            # DDPOptimizer sizes its first bucket by this constant (1 MiB), not by the DDP module's
            # first_bucket_bytes_cap, and refuses a bucket cap below it; the whole model (~0.4 MB)
            # fits in 1 MiB, so a tiny-bucket run lowers it to the bucket cap.
            dist._DEFAULT_FIRST_BUCKET_BYTES = int(TINY_BUCKET_MB * 1024 * 1024) if tiny else FIRST_BUCKET_BYTES
            torch._dynamo.config.optimize_ddp = not run_name.endswith("unsplit")
            module = load(Path(tmp), run_name)
            assert module.ddp and isinstance(module.model, torch.nn.parallel.DistributedDataParallel)
            assert dist.get_backend() == "gloo" and dist.get_world_size() == 2
            counting = CountingBackend("aot_eager")
            if run_name.startswith("carve"):
                module.train = carve.compile(module.train, backend=counting)
            elif run_name.startswith("torch_compile"):
                # nanoGPT's own placement: `model = torch.compile(model)`, then DDP around it.
                module.model.module = torch.compile(module.model.module, backend=counting)
            printed = run(module, CALLS)
            result[run_name] = {
                "printed": printed,
                "parameters": parameters(module),
                "gradient_accumulation_steps": module.gradient_accumulation_steps,
                "bucket_bytes_cap": module.model.bucket_bytes_cap,
                "graphs": graph_summary(counting),
                "graph_calls": counting.calls,
            }
    torch._dynamo.config.optimize_ddp = True
    dist._DEFAULT_FIRST_BUCKET_BYTES = FIRST_BUCKET_BYTES
    torch.save(result, out / f"rank{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
