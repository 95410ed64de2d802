"""nanoGPT's DDP path on 2 CPU processes (gloo), carve on the training loop, equal to eager DDP.

tests/distributed/nanogpt_ddp_worker.py runs, on each rank, nanoGPT's `train()` (the training
loop of tests/real_scripts/scripts/nanogpt_train.py, its DDP branch taken because torchrun
sets RANK) five ways, each from a fresh copy of the script (same seeds, same batches):

- `eager`: DDP as nanoGPT wraps it;
- `carve`: `carve.compile(train)`, DDP's default 25 MB buckets;
- `carve_tiny_buckets`: the same with `bucket_cap_mb=0.05`, so GPT's parameters span 7 buckets;
- `torch_compile_tiny_buckets`: nanoGPT's own placement, `torch.compile(model)` inside DDP;
- `carve_tiny_buckets_unsplit`: tiny buckets with `torch._dynamo.config.optimize_ddp = False`.

4 iterations (2 calls of 2), 2 micro-steps per rank (the first without gradient sync), an
evaluation at iteration 0, every rank logging its own losses. Every compiled run must print
eager's losses and end with eager's parameters (rtol 1e-4) on every rank.

Dynamo's DDPOptimizer (`optimize_ddp`, on by default) splits a graph holding a DDP module's
forward at its gradient-bucket boundaries, so each bucket's all-reduce can start while the rest
of the backward runs. It applies to carve's regions: Dynamo cannot trace DDP's own forward
(`DistributedDataParallel.forward` is skipped), so the region holding `model(X, Y)` breaks
there and the GPT forward DDP calls is captured as its own frame while DDP's forward is active
(`DistributedDataParallel._get_active_ddp_module()`); carve captures regions with
`torch._dynamo.optimize`, whose callback hands such a frame to DDPOptimizer as torch.compile's
does. With tiny buckets each GPT forward (training and evaluation) becomes 7 graphs, the same
7 pieces torch.compile makes.
"""

from __future__ import annotations

import pytest
import torch

from tests.distributed.common import torchrun
from tests.real_scripts.harness import printed_differences, value_differences

RUNS = ("eager", "carve", "carve_tiny_buckets", "torch_compile_tiny_buckets", "carve_tiny_buckets_unsplit")
GPT_PARAMETERS = 15  # distinct parameter tensors of the 2-layer GPT (lm_head's weight is wte's)

pytestmark = pytest.mark.distributed


def model_graphs(run: dict) -> list[tuple[int, int]]:
    """(ops, parameters) of each graph that takes GPT parameters: the GPT forward's graphs."""
    return [(g["ops"], g["parameters"]) for g in run["graphs"] if g["parameters"]]


def other_graphs(run: dict) -> list[int]:
    return [g["ops"] for g in run["graphs"] if not g["parameters"]]


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    return torchrun("nanogpt_ddp_worker.py", tmp_path_factory.mktemp("nanogpt_ddp"), ",".join(RUNS))


def test_every_run_equals_eager_ddp_on_every_rank(ranks):
    for rank, result in enumerate(ranks):
        eager = result["eager"]
        assert eager["gradient_accumulation_steps"] == 2  # 4 // world size: micro-steps with and without sync
        assert eager["printed"].count("iter ") == 4 and "step 0: train loss" in eager["printed"]
        for name in RUNS[1:]:
            run = result[name]
            assert not printed_differences(eager["printed"], run["printed"], rtol=1e-4), \
                f"rank {rank}, {name}: {printed_differences(eager['printed'], run['printed'], rtol=1e-4)}"
            found = value_differences(eager["parameters"], run["parameters"], f"rank {rank}, {name}", rtol=1e-4)
            assert not found, found
    # The ranks trained on different batches (seed 1337 + rank) and DDP kept them in sync.
    assert ranks[0]["eager"]["printed"] != ranks[1]["eager"]["printed"]
    for name in ranks[0]["eager"]["parameters"]:
        assert torch.equal(ranks[0]["eager"]["parameters"][name], ranks[1]["eager"]["parameters"][name])


def test_graphs(ranks):
    for result in ranks:
        carve, tiny = result["carve"], result["carve_tiny_buckets"]
        # Default buckets: the whole model fits DDP's first bucket, one graph per GPT forward
        # (the training forward and the evaluation's no_grad forward), all parameters in it.
        assert carve["bucket_bytes_cap"] == 25 * 1024 * 1024
        assert [params for _, params in model_graphs(carve)] == [GPT_PARAMETERS, GPT_PARAMETERS]
        # The rest of the loop's regions (get_batch's randint and .to, the evaluation's zeros and
        # mean, the loss scaling, clip_grad_norm_'s norms) are the same graphs whatever the buckets.
        assert other_graphs(tiny) == other_graphs(carve)
        assert len(carve["graphs"]) == len(other_graphs(carve)) + 2
        assert [ops for ops, _ in model_graphs(carve)] == [60, 60]


def test_ddp_optimizer_splits_the_region_holding_the_ddp_call(ranks):
    for result in ranks:
        tiny, torch_compiled = result["carve_tiny_buckets"], result["torch_compile_tiny_buckets"]
        unsplit = result["carve_tiny_buckets_unsplit"]
        assert tiny["bucket_bytes_cap"] == int(0.05 * 1024 * 1024)
        pieces = model_graphs(tiny)
        # Two forwards (training, evaluation), each split at the same bucket boundaries.
        assert len(pieces) == 14 and pieces[:7] == pieces[7:]
        assert pieces == model_graphs(torch_compiled)  # torch.compile's split, piece for piece
        # The pieces hold the whole forward's 60 ops between them.
        assert sum(ops for ops, _ in pieces[:7]) == 60
        assert pieces[:7] == [(6, 3), (19, 3), (2, 1), (4, 2), (19, 3), (2, 1), (8, 3)]
        # optimize_ddp=False: the same tiny buckets, no split.
        assert model_graphs(unsplit) == [(60, GPT_PARAMETERS), (60, GPT_PARAMETERS)]
        assert len(tiny["graphs"]) == len(result["carve"]["graphs"]) + 12
