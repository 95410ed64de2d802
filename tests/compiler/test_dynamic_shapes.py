"""Dynamic shapes on real models: one graph for every sequence length.

A region whose input size changes after the first call is recaptured with that dimension
symbolic (automatic dynamic shapes, as torch.compile), so over many sequence lengths and batch
sizes a region makes at most two graphs (the first, static one and the dynamic one) and never
falls back to eager. Every result is compared with eager.
"""

from __future__ import annotations

import os

import pytest
import torch

import carve
from carve.runtime import cost_check
from carve.testing import CountingBackend

os.environ.setdefault("HF_HUB_OFFLINE", "1")
transformers = pytest.importorskip("transformers")

LENGTHS = (5, 9, 12, 7, 16, 3, 11, 20, 8, 14, 6, 18)
BATCHES = (1, 2, 3)


def gpt2():
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=64, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return transformers.GPT2LMHeadModel(config).eval()


def llama():
    config = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64,
                                      num_attention_heads=2, num_key_value_heads=2, vocab_size=64,
                                      max_position_embeddings=64)
    return transformers.LlamaForCausalLM(config).eval()


def regions_of(compiled):
    return compiled._compiled_forward.regions


def shapes():
    """Ten lengths at batch 1, then three more lengths at each of two other batch sizes."""
    return [(batch, length) for batch in BATCHES for length in LENGTHS[: 10 if batch == 1 else 3]]


@pytest.mark.parametrize("build", [gpt2, llama], ids=["gpt2", "llama"])
def test_forward_over_many_lengths_and_batches_makes_few_graphs(build):
    torch.manual_seed(0)
    model = build()
    reference = CountingBackend()
    torch._dynamo.reset()
    by_torch = torch.compile(model, backend=reference)
    backend = CountingBackend()
    compiled = carve.compile(model, backend=backend)
    for batch, length in shapes():
        ids = torch.randint(0, 64, (batch, length))
        with torch.no_grad():
            expected = model(ids, use_cache=False).logits
            torch.testing.assert_close(by_torch(ids, use_cache=False).logits, expected)
            got = compiled(ids, use_cache=False).logits
        torch.testing.assert_close(got, expected)
    regions = regions_of(compiled)
    assert regions
    for region in regions:
        assert region.path == "dynamo", (region.name, region.path)
        # Static first; the length becomes symbolic when it changes; then the batch size does.
        assert 1 <= len(region.graphs) <= 3, (region.name, len(region.graphs))
    assert backend.graphs <= reference.graphs, (backend.graphs, reference.graphs)
    # Every call ran compiled graphs: no region fell back to eager.
    assert backend.calls >= len(shapes()) - cost_check.SAMPLES  # the cost check's Python turns run no graph


def greedy_generate(model, ids, steps, end_token):
    """A generation loop whose sequence grows by one token per step, with an early stop."""
    for _ in range(steps):
        logits = model(ids, use_cache=False).logits[:, -1, :]
        next_token = logits.argmax(-1, keepdim=True)
        ids = torch.cat([ids, next_token], dim=1)
        if next_token.item() == end_token:
            break
    return ids


def test_generation_loop_with_a_growing_sequence():
    torch.manual_seed(0)
    model = gpt2()
    backend = CountingBackend()
    compiled = carve.compile(greedy_generate, backend=backend)
    for start in ([[1, 2, 3]], [[4, 5]], [[6, 7, 8, 9]]):
        ids = torch.tensor(start)
        with torch.no_grad():
            expected = greedy_generate(model, ids, 12, end_token=-1)
            got = compiled(model, ids, 12, end_token=-1)
        assert torch.equal(got, expected)
    # 36 steps over 14 different lengths: a handful of graphs, not one per length.
    assert 1 <= backend.graphs <= 6, backend.graphs
    assert all(region.path != "eager" for region in compiled.regions)


def scaled_rows(x):
    y = x.softmax(-1) * x.shape[1]
    print("rows", y.shape[0])
    return y.sum(0)


@pytest.mark.parametrize("spelling", ["carve", "torch"])
def test_mark_dynamic_is_symbolic_from_the_first_call(spelling, capsys):
    mark = carve.mark_dynamic if spelling == "carve" else torch._dynamo.mark_dynamic
    backend = CountingBackend()
    compiled = carve.compile(scaled_rows, backend=backend)
    for length in (4, 6, 9, 13):
        x = torch.randn(3, length)
        mark(x, 1)
        torch.testing.assert_close(compiled(x), scaled_rows(x))
    # The region that reads x made one graph for every length: the size was symbolic from the
    # start. (The next region reads `y`, a tensor carve made, which automatic dynamic shapes
    # make symbolic when it changes.)
    first = compiled.regions[0]
    assert first.path == "dynamo" and len(first.graphs) == 1, (first.path, len(first.graphs))


@pytest.mark.parametrize("spelling", ["carve", "torch"])
def test_mark_static_keeps_a_changing_size_specialised(spelling, capsys):
    mark = carve.mark_static if spelling == "carve" else torch._dynamo.mark_static
    compiled = carve.compile(scaled_rows, backend="eager")
    for length in (4, 6, 9):
        x = torch.randn(3, length)
        mark(x, 1)
        torch.testing.assert_close(compiled(x), scaled_rows(x))
    first = compiled.regions[0]  # the region that reads x
    assert len(first.graphs) == 3  # one specialised graph per length


def test_dynamic_false_specialises_every_size(capsys):
    backend = CountingBackend()
    compiled = carve.compile(scaled_rows, backend=backend, dynamic=False)
    for length in (4, 6, 9):
        x = torch.randn(3, length)
        torch.testing.assert_close(compiled(x), scaled_rows(x))
    assert backend.graphs == 3 * len(compiled.regions)
