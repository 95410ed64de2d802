"""Helpers for the model tests: tiny transformers configs, graph counting, the report table.

Counting graphs: the model tests pass a `CountingBackend` (carve.testing) as carve's
backend, which sees every graph any region hands to the backend, including a graph a region
later replaced (a static-shape trace before automatic dynamic shapes). torch.compile gets
its own CountingBackend over the same sequence of calls. Dynamo's frame counter
(`counters["frames"]["total"]`) is read too: a recompile that produces no new graph is still a
re-trace, and "no re-trace after warm-up" must see it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch._dynamo.utils import counters

from carve.testing import CountingBackend


@dataclass
class Row:
    model: str
    carve_graphs: int
    torch_compile_graphs: int
    carve_first_call: float
    torch_compile_first_call: float


TABLE: list[Row] = []


def record(model: str, carve_graphs: int, torch_compile_graphs: int, carve_first_call: float,
           torch_compile_first_call: float) -> None:
    TABLE[:] = [row for row in TABLE if row.model != model]
    TABLE.append(Row(model, carve_graphs, torch_compile_graphs, carve_first_call, torch_compile_first_call))


def dynamo_frames() -> int:
    """How many frames Dynamo has traced in this process (since the last reset)."""
    return counters["frames"]["total"]


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def carve_regions(compiled):
    """The regions of what carve.compile returned (a module, a function or a bound method)."""
    from carve.api import compiled_function_of

    return compiled_function_of(compiled).regions


def region_graphs(compiled) -> int:
    """Graphs the regions hold now (aot_eager/inductor runs, where no CountingBackend is passed)."""
    return sum(len(region.graphs) for region in carve_regions(compiled))


def torch_compile_graphs(fn, calls) -> tuple[int, float]:
    """Graphs torch.compile makes over `calls` (a list of zero-argument callables, each given
    the compiled function), with a counting backend; and the first call's time."""
    backend = CountingBackend()
    compiled = torch.compile(fn, backend=backend)
    first = None
    for call in calls:
        _, elapsed = timed(call, compiled)
        first = elapsed if first is None else first
    return backend.graphs, first


# -- tiny transformers models (random weights, every dropout probability 0) --------------------

VOCAB = 96


def gpt2(**overrides):
    import transformers

    config = transformers.GPT2Config(n_layer=1, n_embd=32, n_head=2, vocab_size=VOCAB, n_positions=64,
                                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0,
                                     eos_token_id=1, pad_token_id=1, **overrides)
    return transformers.GPT2LMHeadModel(config)


def bert(**overrides):
    import transformers

    config = transformers.BertConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2,
                                     intermediate_size=64, vocab_size=VOCAB, max_position_embeddings=64,
                                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, **overrides)
    return transformers.BertForMaskedLM(config)


def llama(**overrides):
    import transformers

    config = transformers.LlamaConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2,
                                      num_key_value_heads=1, intermediate_size=64, vocab_size=VOCAB,
                                      max_position_embeddings=64, attention_dropout=0.0, bos_token_id=0,
                                      eos_token_id=1, pad_token_id=1, **overrides)
    return transformers.LlamaForCausalLM(config)


def t5(**overrides):
    import transformers

    config = transformers.T5Config(num_layers=1, num_decoder_layers=1, d_model=32, d_kv=16, num_heads=2,
                                   d_ff=64, vocab_size=VOCAB, dropout_rate=0.0, decoder_start_token_id=0,
                                   pad_token_id=0, eos_token_id=1, **overrides)
    return transformers.T5ForConditionalGeneration(config)


MODELS = {"gpt2": gpt2, "bert": bert, "llama": llama, "t5": t5}
