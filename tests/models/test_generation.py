"""Greedy decoding with a KV cache, written as a user function under `@carve.compile`.

    for _ in range(max_new_tokens):
        out = model(input_ids=step_input, past_key_values=past_key_values, use_cache=True)
        past_key_values = out.past_key_values          # the cache object is fed back
        next_token = out.logits[:, -1, :].argmax(...)
        tokens = torch.cat([tokens, next_token], dim=1)
        if (next_token == eos_token_id).all():         # data-dependent: stays eager
            break
        step_input = next_token

carve keeps the loop and the `if ... break` in Python and compiles the loop body up to the
test (the test's tensor work included) as one region, which Dynamo captures because it calls
the model. The cache grows by one position per step, so its length must become a symbolic
size after it changes once; a graph per step would be a re-trace storm.
torch.compile cannot resume after a graph break inside a loop, so it skips the frame of
`greedy_generate` and compiles only the model's forward (see the slack below).
"""

from __future__ import annotations

import pytest
import torch

import carve
from carve.testing import CountingBackend
from tests.models.common import VOCAB, dynamo_frames, gpt2, llama, record, timed, torch_compile_graphs

pytestmark = pytest.mark.filterwarnings("ignore:`past_key_values` is deprecated:FutureWarning")

MAX_NEW = 10


def make_greedy(backend):
    @carve.compile(backend=backend)
    def greedy_generate(model, input_ids, max_new_tokens, eos_token_id):
        past_key_values = None
        tokens = input_ids
        step_input = input_ids
        for _ in range(max_new_tokens):
            out = model(input_ids=step_input, past_key_values=past_key_values, use_cache=True)
            past_key_values = out.past_key_values
            next_token = out.logits[:, -1, :].argmax(dim=-1, keepdim=True)
            tokens = torch.cat([tokens, next_token], dim=1)
            if (next_token == eos_token_id).all():
                break
            step_input = next_token
        return tokens

    return greedy_generate


def prompt(batch: int, length: int, seed: int) -> torch.Tensor:
    return torch.randint(2, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def end_token_for_early_stop(eager, model, ids) -> tuple[int, int]:
    """An end token that greedy decoding of `ids` (batch 1) first emits at step k >= 2 (after
    the cache has been fed back), and k."""
    tokens = eager(model, ids, MAX_NEW, -1)[0, ids.shape[1]:].tolist()
    for k in range(2, len(tokens) - 1):
        if tokens[k] not in tokens[:k]:
            return tokens[k], k
    raise AssertionError(f"greedy decoding repeats one token; pick another seed: {tokens}")


def test_greedy_generation_with_kv_cache_and_early_break():
    torch.manual_seed(0)
    # Large initial weights: a tiny random model with the default 0.02 emits one token forever.
    model = gpt2(initializer_range=0.5).eval()
    backend = CountingBackend()
    generate = make_greedy(backend)
    eager = generate.__wrapped__
    long_prompt = prompt(2, 6, 0)
    eos, stop_step = end_token_for_early_stop(eager, model, prompt(1, 4, 1))
    # Both rows reach the end token at the same step, so `.all()` breaks; batch 2 as before
    # (a batch of 1 would be a specialised size of its own, in carve and torch.compile alike).
    short_prompt = prompt(1, 4, 1).repeat(2, 1)

    with torch.no_grad():
        # No end token: every step runs; the cache grows from 6 to 15 positions.
        got, carve_first = timed(generate, model, long_prompt, MAX_NEW, -1)
        torch.testing.assert_close(got, eager(model, long_prompt, MAX_NEW, -1), rtol=0, atol=0)
        assert got.shape == (2, 6 + MAX_NEW)
        # One graph for the step without a cache, one for a cache of static length, one for
        # the cache length made symbolic: not one per step.
        assert 1 <= backend.graphs <= 3, backend.graphs
        warm = backend.graphs, dynamo_frames()

        # The same call again: no graph, no frame traced.
        torch.testing.assert_close(generate(model, long_prompt, MAX_NEW, -1), got, rtol=0, atol=0)
        assert (backend.graphs, dynamo_frames()) == warm, "a repeated generate call re-traced"

        # Another prompt length, stopping early at the end token.
        got = generate(model, short_prompt, MAX_NEW, eos)
        torch.testing.assert_close(got, eager(model, short_prompt, MAX_NEW, eos), rtol=0, atol=0)
        assert got.shape == (2, 4 + stop_step + 1), "the loop did not break at the end token"
        assert got[:, -1].tolist() == [eos, eos]

    # torch.compile over the same calls. It skips the frame of greedy_generate (a graph break in
    # a loop) and compiles only the model's forward, running argmax, cat and the end-token test
    # eagerly; carve compiles those into the model's graph, so that graph also reads the int
    # eos_token_id, and a new end token recompiles it once (Dynamo specialises an int until it
    # changes). Slack 1 for that recompile, the price of capturing more.
    calls = [lambda f: f(model, long_prompt, MAX_NEW, -1)] * 2 + [lambda f: f(model, short_prompt, MAX_NEW, eos)]
    with torch.no_grad():
        tc_graphs, tc_first = torch_compile_graphs(eager, calls)
    record("gpt2 greedy generate (KV cache)", backend.graphs, tc_graphs, carve_first, tc_first)
    assert 1 <= backend.graphs <= tc_graphs + 1, (backend.graphs, tc_graphs)


def test_transformers_generate_on_the_compiled_module():
    """`carve.compile(model).generate(...)`: transformers' own decoding loop calls the module, so
    every step runs the compiled forward (the module carve returns is the model, of its class)."""
    torch.manual_seed(0)
    model = llama(initializer_range=0.5).eval()
    backend = CountingBackend()
    compiled = carve.compile(model, backend=backend)
    ids = prompt(2, 6, 0)
    settings = dict(max_new_tokens=8, do_sample=False, eos_token_id=None, pad_token_id=1)
    # Three calls of one prompt length first: the cost check's timed calls are over (a call it
    # runs as Python shows Dynamo no new length, which would then recompile a call later).
    for _ in range(3):
        got = compiled.generate(ids, **settings)
        torch.testing.assert_close(got, model.generate(ids, **settings), rtol=0, atol=0)
    assert got.shape == (2, 6 + 8)
    # No cache, a cache of static length, a cache of symbolic length: at most three graphs.
    assert 1 <= backend.graphs <= 3, backend.graphs
    warm = backend.graphs, dynamo_frames()
    for length in (6, 9):
        ids = prompt(2, length, length)
        got = compiled.generate(ids, **settings)
        torch.testing.assert_close(got, model.generate(ids, **settings), rtol=0, atol=0)
    # A new prompt length costs at most the first step's graph with a symbolic length.
    assert backend.graphs <= warm[0] + 1, backend.graphs
    warm = backend.graphs, dynamo_frames()
    for length in (6, 9, 5):
        compiled.generate(prompt(2, length, length), **settings)
    assert (backend.graphs, dynamo_frames()) == warm, "generate re-traced"


def test_carve_compile_of_transformers_generate_compiles_the_models_forward(caplog):
    """`carve.compile(model.generate)`: transformers' `generate` reads its own frame (CRV023), so
    it runs as written, with `self` the model compiled: each decoding step's forward runs in a
    carve graph, as under `carve.compile(model).generate(...)`. Said once."""
    import logging

    torch.manual_seed(0)
    model = gpt2().eval()
    backend = CountingBackend()
    generate = carve.compile(model.generate, backend=backend)
    settings = dict(max_new_tokens=6, do_sample=False, eos_token_id=None, pad_token_id=1)
    with caplog.at_level(logging.WARNING, logger="carve"):
        for length in (5, 5, 8):
            ids = prompt(2, length, length)
            torch.testing.assert_close(generate(ids, **settings), model.generate(ids, **settings), rtol=0, atol=0)
    from carve.runtime import cost_check

    # Every step's forward ran in a graph, but the cost check's timed Python turns.
    assert backend.graphs >= 1 and backend.calls >= 3 * settings["max_new_tokens"] - cost_check.SAMPLES
    said = [record for record in caplog.records if "forward compiled" in record.getMessage()]
    assert len(said) == 1 and "CRV023" in said[0].getMessage()
    assert type(model).__name__ == "GPT2LMHeadModel" and not hasattr(model, "_carve_original_class")
