"""nanoGPT (tests/models/nanogpt.py) under carve: the forward as a compiled module, training
with AdamW on aot_eager (compiled backward), the `@torch.no_grad() generate` sampling loop
through `carve.compile(model.generate)`, and one forward on the default Inductor backend.
"""

from __future__ import annotations

import copy

import pytest
import torch

import carve
from carve.runtime import cost_check
from carve.testing import CountingBackend
from tests.models.common import (carve_regions, dynamo_frames, record, region_graphs, timed,
                                 torch_compile_graphs)
from tests.models.nanogpt import GPT, GPTConfig

CONFIG = GPTConfig(block_size=32, vocab_size=96, n_layer=2, n_head=2, n_embd=32, dropout=0.0)


def tokens(batch: int, length: int, seed: int) -> torch.Tensor:
    return torch.randint(0, CONFIG.vocab_size, (batch, length), generator=torch.Generator().manual_seed(seed))


def model(seed: int = 0, config: GPTConfig = CONFIG) -> GPT:
    torch.manual_seed(seed)
    return GPT(config).eval()


def assert_same_grads(model, reference) -> None:
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        torch.testing.assert_close(p.grad, q.grad, msg=lambda m: f"{name}: {m}")


# -- the forward ---------------------------------------------------------------------------------

# (batch, length, with targets) per mode: a training shape, a new batch size and length (sizes
# become symbolic), a third size, inference (logits of the last position only, no loss); train.
FORWARD_CALLS = {
    "eval": [(4, 16, True), (3, 11, True), (2, 7, True), (3, 11, False)],
    "train": [(4, 16, True), (2, 7, True)],
}


def forward_calls():
    for mode, calls in FORWARD_CALLS.items():
        for batch, length, with_targets in calls:
            targets = tokens(batch, length, seed=length + 1) if with_targets else None
            yield mode, tokens(batch, length, seed=length), targets


class ForwardRun:
    """The forward calls of FORWARD_CALLS under carve (counting backend) and eager, then again
    under carve (to count re-traces) and under torch.compile (to compare graph counts)."""

    def __init__(self) -> None:
        net = model()
        reference = copy.deepcopy(net)
        self.backend = CountingBackend()
        self.compiled = carve.compile(net, backend=self.backend)
        self.pairs = []  # (what, carve's tensor, eager's tensor)
        self.first_call = None
        for mode, idx, targets in forward_calls():
            net.train(mode == "train")
            reference.train(mode == "train")
            (logits, loss), elapsed = timed(self.compiled, idx, targets)
            self.first_call = elapsed if self.first_call is None else self.first_call
            expected_logits, expected_loss = reference(idx, targets)
            what = f"{mode} {tuple(idx.shape)}"
            self.pairs.append((what + " logits", logits, expected_logits))
            if targets is None:
                self.pairs.append((what + " loss is None", loss is None, True))
                continue
            self.pairs.append((what + " loss", loss, expected_loss))
            loss.backward()
            expected_loss.backward()
            for (name, p), q in zip(net.named_parameters(), reference.parameters()):
                self.pairs.append((f"{what} grad {name}", p.grad, q.grad))
            net.zero_grad()
            reference.zero_grad()
        self.graphs = self.backend.graphs
        self.frames = dynamo_frames()
        for mode, idx, targets in forward_calls():
            net.train(mode == "train")
            self.compiled(idx, targets)
        self.graphs_after_repeat = self.backend.graphs
        self.frames_after_repeat = dynamo_frames()

        def call(mode, idx, targets):
            def run(f):
                reference.train(mode == "train")
                f(idx, targets)
            return run

        torch._dynamo.reset()
        self.tc_graphs, tc_first = torch_compile_graphs(reference, [call(*c) for c in forward_calls()])
        record("nanoGPT forward", self.graphs, self.tc_graphs, self.first_call, tc_first)


@pytest.fixture(scope="module")
def forward_run():
    torch._dynamo.reset()
    return ForwardRun()


def test_forward_loss_and_gradients_match_eager(forward_run):
    assert forward_run.pairs
    for what, got, expected in forward_run.pairs:
        if isinstance(got, bool):
            assert got == expected, what
        else:
            torch.testing.assert_close(got, expected, msg=lambda m: f"{what}: {m}")
    assert all(region.path != "eager" for region in carve_regions(forward_run.compiled))


def test_forward_does_not_retrace_seen_shapes_and_modes(forward_run):
    assert forward_run.graphs >= 1
    assert (forward_run.graphs_after_repeat, forward_run.frames_after_repeat) == (
        forward_run.graphs, forward_run.frames), "a second pass over the same calls re-traced"


def test_forward_makes_no_more_graphs_than_torch_compile(forward_run):
    # The forward's tensor work is one region, captured by Dynamo as torch.compile captures the
    # frame: no slack.
    assert 1 <= forward_run.graphs <= forward_run.tc_graphs, (forward_run.graphs, forward_run.tc_graphs)


def test_training_on_aot_eager_matches_eager(device):
    """Forward and backward compiled by AOTAutograd (backend="aot_eager"), AdamW eager; on the
    CPU, and on CUDA when available (tests/models/conftest.py `device`)."""
    net = model().to(device).train()
    reference = copy.deepcopy(net)
    compiled = carve.compile(net, backend="aot_eager")
    optimizer = torch.optim.AdamW(net.parameters(), lr=1e-2)
    reference_optimizer = torch.optim.AdamW(reference.parameters(), lr=1e-2)
    for step in range(4):
        idx, targets = tokens(4, 16, step).to(device), tokens(4, 16, step + 100).to(device)
        _, loss = compiled(idx, targets)
        _, expected = reference(idx, targets)
        torch.testing.assert_close(loss, expected)
        for m, o, l in ((net, optimizer, loss), (reference, reference_optimizer, expected)):
            o.zero_grad()
            l.backward()
            torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
            o.step()
        if step == 1:
            warm = region_graphs(compiled), dynamo_frames()
    assert region_graphs(compiled) >= 1
    assert (region_graphs(compiled), dynamo_frames()) == warm, "training steps re-traced"
    for p, q in zip(net.parameters(), reference.parameters()):
        torch.testing.assert_close(p, q)


# -- generate ------------------------------------------------------------------------------------

def sample(generate, idx, max_new_tokens, top_k):
    torch.manual_seed(1234)  # the same draws for carve and eager (eager backend: same RNG calls)
    return generate(idx, max_new_tokens, temperature=0.8, top_k=top_k)


def test_generate_matches_eager_and_does_not_retrace():
    net = model().eval()
    backend = CountingBackend()
    generate = carve.compile(net.generate, backend=backend)
    # Warm-up: the prompt length changes once (sizes become symbolic) and the context outgrows
    # block_size once (the crop branch); later prompt lengths and max_new_tokens add nothing.
    # (Five calls of one length first: the cost check's timed calls are over, so none of the
    # length changes below runs as Python, hidden from Dynamo until a later call.)
    warmup = [(5, 4, 10)] * 5 + [(6, 4, 10), (30, 4, 10)]
    later = [(5, 4, 10), (5, 4, 10), (9, 3, 10), (3, 6, 10), (31, 5, 10)]
    for length, new, top_k in warmup + later:
        idx = tokens(2, length, length)
        got = sample(generate, idx, new, top_k)
        torch.testing.assert_close(got, sample(net.generate, idx, new, top_k), rtol=0, atol=0)
        assert got.shape == (2, length + new)
        assert not got.requires_grad
        if (length, new, top_k) == warmup[-1]:
            warm = backend.graphs, dynamo_frames()
    assert backend.graphs >= 1
    assert (backend.graphs, dynamo_frames()) == warm, "generate re-traced for a new length or max_new_tokens"
    idx = tokens(2, 4, 0)
    torch.testing.assert_close(sample(generate, idx, 5, None), sample(net.generate, idx, 5, None), rtol=0, atol=0)


def test_generate_int_argument_is_symbolic_after_one_change():
    net = model().eval()
    backend = CountingBackend()
    generate = carve.compile(net.generate, backend=backend)
    for top_k in (10, 5):  # warm-up: top_k changes once
        sample(generate, tokens(2, 5, 0), 3, top_k)
    warm = backend.graphs, dynamo_frames()
    for top_k in (7, 20, 3):
        idx = tokens(2, 5, top_k)
        torch.testing.assert_close(sample(generate, idx, 3, top_k), sample(net.generate, idx, 3, top_k),
                                   rtol=0, atol=0)
    assert (backend.graphs, dynamo_frames()) == warm, "a new top_k value re-traced"


def test_generate_makes_no_more_graphs_than_torch_compile():
    """torch.compile unrolls the sampling loop into one graph per (prompt length, max_new_tokens);
    carve keeps the loop in Python and compiles its body: a static graph, then one with symbolic
    sizes (automatic dynamic shapes, as torch.compile). Slack 1 for that second graph."""
    net = model().eval()
    backend = CountingBackend()
    generate = carve.compile(net.generate, backend=backend)
    calls = [(5, 3, 10), (7, 3, 10)]
    first = None
    for length, new, top_k in calls:
        _, elapsed = timed(sample, generate, tokens(2, length, length), new, top_k)
        first = elapsed if first is None else first
    torch._dynamo.reset()
    tc_graphs, tc_first = torch_compile_graphs(
        net.generate, [lambda f, c=c: sample(f, tokens(2, c[0], c[0]), c[1], c[2]) for c in calls])
    record("nanoGPT generate", backend.graphs, tc_graphs, first, tc_first)
    assert 1 <= backend.graphs <= tc_graphs + 1, (backend.graphs, tc_graphs)


# -- Inductor --------------------------------------------------------------------------------------

@pytest.mark.inductor
def test_forward_on_inductor_matches_eager():
    """The default backend: Inductor's C++ kernels run the forward (inference, three layers, which
    carve compiles once: runtime/repeated_blocks.py)."""
    net = model(config=GPTConfig(block_size=16, vocab_size=64, n_layer=3, n_head=2, n_embd=32)).eval()
    compiled = carve.compile(net)
    with torch.no_grad():
        # The first calls run the Python to price the compile (runtime/cost_check.py), then compiled.
        for batch, length in [(2, 8)] * (cost_check.PYTHON_FIRST_CALLS + 2):
            idx = torch.randint(0, 64, (batch, length), generator=torch.Generator().manual_seed(length))
            targets = torch.randint(0, 64, (batch, length), generator=torch.Generator().manual_seed(1))
            logits, loss = compiled(idx, targets)
            expected_logits, expected_loss = net(idx, targets)
            torch.testing.assert_close(logits, expected_logits, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(loss, expected_loss, rtol=1e-4, atol=1e-4)
    assert region_graphs(compiled) == 1
    (graph,) = [graph for region in carve_regions(compiled) for graph in region.graphs]
    layer_calls = [node for node in graph.graph.nodes if "invoke_subgraph" in str(node.target)]
    assert len(layer_calls) == 3  # one layer compiled, called for each of the three
