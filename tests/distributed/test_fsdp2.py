"""FSDP2 (`torch.distributed.fsdp.fully_shard`) on 2 CPU processes (gloo): a train step compiled
with carve equals eager.

torch 2.13 runs FSDP2 on CPU with gloo: parameters are DTensors sharded over the ranks,
all-gathered before each layer's forward and reduce-scattered after its backward.
tests/distributed/fsdp2_worker.py trains a small MLP (3 Linear layers, each and the root
`fully_shard`ed) for 3 steps eager, with carve, and with torch.compile, on rank-dependent batches.

What the graphs show: neither compiler captures the model's forward. torch 2.13 wraps FSDP2's
forward hooks (`FSDPState._pre_forward` and the others) in
`torch._dynamo.disable(recursive=True, reason="skipping FSDP hooks")`
(torch/distributed/fsdp/_fully_shard/_fsdp_common.py `_dynamo_disable`), so the call `model(x)`
is a graph break (carve: CRV013, a disabled callee) and the model runs eagerly around its
hooks. What is captured is the step's own tensor work: carve's two graphs are `mse_loss` and
`loss.detach()`; torch.compile adds a third, SGD's update over the DTensor gradients, which
carve keeps in Python (`optimizer.step()`, CRV019).
"""

from __future__ import annotations

import pytest

from tests.distributed.common import torchrun
from tests.real_scripts.harness import value_differences

pytestmark = pytest.mark.distributed


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    return torchrun("fsdp2_worker.py", tmp_path_factory.mktemp("fsdp2"))


def test_carve_step_equals_eager_on_every_rank(ranks):
    for rank, result in enumerate(ranks):
        eager = result["eager"]
        assert set(eager["parameter_types"].values()) == {"DTensor"}  # sharded by fully_shard
        for name in ("carve", "torch.compile"):
            run = result[name]
            assert run["log"] == eager["log"], f"rank {rank}, {name}"
            for what in ("losses", "parameters"):
                found = value_differences(eager[what], run[what], f"rank {rank}, {name}: {what}", rtol=1e-4)
                assert not found, found
    assert ranks[0]["eager"]["log"] != ranks[1]["eager"]["log"]  # each rank its own batches
    found = value_differences(ranks[0]["eager"]["parameters"], ranks[1]["eager"]["parameters"], "ranks", rtol=0,
                              atol=0)
    assert not found, found  # the gathered parameters are the same on both ranks


def test_the_fsdp2_model_call_runs_eagerly_under_both_compilers(ranks):
    for result in ranks:
        carve, torch_compiled = result["carve"]["graphs"], result["torch.compile"]["graphs"]
        assert not any(g["linear"] for g in carve + torch_compiled)
        assert [g["ops"] for g in carve] == [1, 1]  # mse_loss; loss.detach()
        assert [g["ops"] for g in torch_compiled] == [1, 6, 1]  # mse_loss; SGD's 6 add_; loss.detach()
