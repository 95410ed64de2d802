"""GPT-2, BERT, Llama and T5 from transformers under `carve.compile(model)`, against eager.

Each model is built from a tiny config (random weights, every dropout probability 0, so train
and eval mode compute the same function and compare exactly). One sequence of calls per model:

    eval, batch 2 x 8   -> logits and loss match eager; gradients match after backward
    5 more same calls   -> no new graph and no Dynamo frame traced (no re-trace per call)
    batch 3 x 11        -> a new batch size and sequence length (sizes become symbolic)
    batch 4 x 6         -> yet another size: no new graph (automatic dynamic shapes)
    train mode          -> the training flag is guarded: values and gradients still match

The graph count over the eval calls is compared with torch.compile's over the same calls
(counting backend on both sides): carve must compile (at least one graph) and make no more
graphs than torch.compile. No slack is needed here: `forward` of these models has no statement
carve keeps eager, so carve's one region is captured by Dynamo exactly as torch.compile
captures the frame; any extra graph would be carve's own doing.
"""

from __future__ import annotations

import copy

import pytest
import torch

import carve
from carve.testing import CountingBackend
from tests.models.common import (MODELS, VOCAB, carve_regions, dynamo_frames, record, region_graphs, timed,
                                 torch_compile_graphs)


def make_inputs(name: str, batch: int, length: int, seed: int, device: str = "cpu") -> dict:
    inputs = _make_inputs(name, batch, length, seed)
    return {key: value.to(device) for key, value in inputs.items()}


def _make_inputs(name: str, batch: int, length: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)  # drawn on the CPU: the same tokens on every device
    ids = torch.randint(2, VOCAB, (batch, length), generator=generator)
    if name == "bert":
        # masked LM: a padded tail in the attention mask, loss only on some positions
        mask = torch.ones(batch, length, dtype=torch.long)
        mask[0, -2:] = 0
        labels = torch.full_like(ids, -100)
        labels[:, 1::3] = ids[:, 1::3]
        return dict(input_ids=ids, attention_mask=mask, labels=labels)
    if name == "t5":
        labels = torch.randint(2, VOCAB, (batch, max(2, length // 2)), generator=generator)
        return dict(input_ids=ids, labels=labels)
    return dict(input_ids=ids, labels=ids)


SEQUENCE = [(2, 8, 0), (3, 11, 1), (4, 6, 2)]


def assert_same_output(got, expected) -> None:
    assert type(got) is type(expected)
    torch.testing.assert_close(got.logits, expected.logits)
    torch.testing.assert_close(got.loss, expected.loss)


def assert_same_grads(model, reference) -> None:
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            torch.testing.assert_close(p.grad, q.grad, msg=lambda m: f"{name}: {m}")


def run_and_compare(name, compiled, model, reference, count_graphs, *, repeats=5, device="cpu"):
    """The call sequence of the module docstring, compared with eager at every step; returns the
    first call's time and the graph count of the eval calls."""
    batch, length, seed = SEQUENCE[0]
    inputs = make_inputs(name, batch, length, seed, device)
    out, first_call = timed(compiled, **inputs)
    expected = reference(**inputs)
    assert_same_output(out, expected)
    out.loss.backward()
    expected.loss.backward()
    assert_same_grads(model, reference)
    first_graphs = count_graphs()
    assert first_graphs >= 1, "carve compiled nothing"

    graphs, frames = count_graphs(), dynamo_frames()
    for _ in range(repeats):
        assert_same_output(compiled(**inputs), reference(**inputs))
    assert (count_graphs(), dynamo_frames()) == (graphs, frames), "same shapes re-traced"

    for index, (batch, length, seed) in enumerate(SEQUENCE[1:]):
        graphs = count_graphs()
        inputs = make_inputs(name, batch, length, seed, device)
        assert_same_output(compiled(**inputs), reference(**inputs))
        if index > 0:
            assert count_graphs() == graphs, "a third size re-traced: sizes did not become symbolic"

    eval_graphs = count_graphs()
    model.train()
    reference.train()
    model.zero_grad()
    reference.zero_grad()
    out, expected = compiled(**inputs), reference(**inputs)
    assert_same_output(out, expected)
    out.loss.backward()
    expected.loss.backward()
    assert_same_grads(model, reference)
    # Train mode is one more version of the same forward: no more graphs than the first call made.
    assert count_graphs() - eval_graphs <= first_graphs, (count_graphs(), eval_graphs, first_graphs)
    return first_call, eval_graphs


def torch_compile_sequence(name, module, device="cpu") -> tuple[int, float]:
    """The eval calls of the sequence under torch.compile: graphs and first-call time. (Train mode
    is left out to keep the test fast: it costs each compiler one more graph of the same forward.)"""
    calls = [lambda f, i=make_inputs(name, *SEQUENCE[0], device): f(**i).loss.backward()]
    calls += [lambda f, i=make_inputs(name, *SEQUENCE[0], device): f(**i)] * 5
    calls += [lambda f, i=make_inputs(name, *shape, device): f(**i) for shape in SEQUENCE[1:]]
    torch._dynamo.reset()
    return torch_compile_graphs(module.eval(), calls)


# Llama runs on aot_eager: AOTAutograd compiles its forward and backward, so the gradient
# checks cover a compiled backward. Its graphs are counted from carve's regions (every region of
# these forwards is captured by Dynamo from the first call, so none is replaced and uncounted).
BACKENDS = {"gpt2": "counting", "bert": "counting", "llama": "aot_eager", "t5": "counting"}


@pytest.mark.parametrize("name", list(MODELS))
def test_model_matches_eager_with_no_more_graphs_than_torch_compile(name, device):
    torch.manual_seed(0)
    model = MODELS[name]().to(device).eval()
    reference = copy.deepcopy(model)
    if BACKENDS[name] == "counting":
        backend = CountingBackend()
        compiled = carve.compile(model, backend=backend)
        count_graphs = lambda: backend.graphs  # noqa: E731
    else:
        compiled = carve.compile(model, backend=BACKENDS[name])
        count_graphs = lambda: region_graphs(compiled)  # noqa: E731
    assert isinstance(compiled, type(model))

    carve_first, eval_graphs = run_and_compare(name, compiled, model, reference, count_graphs, device=device)
    regions = carve_regions(compiled)
    assert regions and all(region.path != "eager" for region in regions)

    tc_graphs, tc_first = torch_compile_sequence(name, copy.deepcopy(reference), device)
    on = "" if device == "cpu" else f", {device}"
    record(f"{name} ({BACKENDS[name].replace('counting', 'eager')}{on})", eval_graphs, tc_graphs, carve_first, tc_first)
    assert 1 <= eval_graphs <= tc_graphs, (eval_graphs, tc_graphs)
