"""One rank of an FSDP2 (`torch.distributed.fsdp.fully_shard`) training step on CPU with gloo:
eager, then the same step compiled with carve, then with torch.compile (for comparison).

Launched by tests/distributed/test_fsdp2.py under
`python -m torch.distributed.run --nproc_per_node=2 ... fsdp2_worker.py OUT_DIR`.

A small MLP, each Linear sharded and the root sharded (parameters are DTensors sharded on
dim 0 over the 2 ranks); the step (forward, loss, backward, SGD, a `loss.item()` log line: a
graph break) runs 3 times on rank-dependent data. Each run builds the model from the same seed.
The worker writes each run's losses, full (gathered) parameters and graph counts per rank.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.distributed.fsdp import fully_shard  # noqa: E402

import carve  # noqa: E402
from carve.runtime import cost_check  # noqa: E402
from carve.testing import CountingBackend  # noqa: E402
from tests.conftest import EvenClock  # noqa: E402

cost_check.clock = EvenClock()

STEPS = 3


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(),
                                torch.nn.Linear(32, 4))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            fully_shard(layer)
    fully_shard(model)
    return model


def train_step(model, optimizer, x, y, log):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    log.append(f"loss {loss.item():.6f}")  # a graph break: the float goes to Python
    return loss.detach()


def run(step_fn, rank: int) -> dict:
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(100 + rank)  # each rank its own batches
    log: list[str] = []
    losses = []
    for _ in range(STEPS):
        x, y = torch.randn(8, 16, generator=generator), torch.randn(8, 4, generator=generator)
        losses.append(step_fn(model, optimizer, x, y, log))
    sharded = {name: type(p).__name__ for name, p in model.named_parameters()}
    full = {name: p.full_tensor().detach().clone() for name, p in model.named_parameters()}
    return {"losses": torch.stack(losses), "log": log, "parameters": full, "parameter_types": sharded}


def graphs(counting: CountingBackend) -> list[dict]:
    """Per graph: its ops, and whether it holds a linear layer (the model's forward)."""
    return [{"ops": ops, "linear": any(node.op == "call_function" and "linear" in str(node.target)
                                       for node in gm.graph.nodes)}
            for gm, ops in zip(counting.graph_modules, counting.ops_per_graph)]


def main() -> None:
    out = Path(sys.argv[1])
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    result: dict = {"rank": rank, "eager": run(train_step, rank)}
    for name, compile_ in (("carve", carve.compile), ("torch.compile", torch.compile)):
        torch._dynamo.reset()
        counting = CountingBackend("aot_eager")
        result[name] = run(compile_(train_step, backend=counting), rank)
        result[name]["graphs"] = graphs(counting)
    torch.save(result, out / f"rank{rank}.pt")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
