"""More transformers architectures under `carve.compile(model)`, training with dropout on.

Beyond the four models of test_transformers_models.py, carve meets models nobody here wrote:
decoder-only (Mistral, Qwen2, Phi, GPT-NeoX, OPT, Gemma), encoder-decoder (BART, Whisper),
encoders (RoBERTa for classification, DistilBERT for masked LM) and a vision transformer (ViT).
Each is built from a tiny config with random weights and left in train mode with its dropout
on; the random generator is seeded before every call, so a compiled call must draw the same
dropout masks in the same order as eager. Three calls (two alike, then a new batch size) are
compared with eager on the loss and on every gradient, and carve's graph count over them is
compared with torch.compile's on the same calls ("eager" backend on both sides).
"""

from __future__ import annotations

import pytest
import torch

import carve
from carve.testing import CountingBackend

transformers = pytest.importorskip("transformers")

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, vocab_size=96)
VOCAB = 96


def _decoder(config_class, model_class, **extra):
    return lambda: getattr(transformers, model_class)(getattr(transformers, config_class)(
        **TINY, max_position_embeddings=64, **extra))


MODELS = {
    "mistral": _decoder("MistralConfig", "MistralForCausalLM", num_key_value_heads=2),
    "qwen2": _decoder("Qwen2Config", "Qwen2ForCausalLM", num_key_value_heads=2),
    "phi": _decoder("PhiConfig", "PhiForCausalLM"),
    "gpt_neox": _decoder("GPTNeoXConfig", "GPTNeoXForCausalLM"),
    "gemma": _decoder("GemmaConfig", "GemmaForCausalLM", num_key_value_heads=2, head_dim=8),
    "opt": lambda: transformers.OPTForCausalLM(transformers.OPTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, ffn_dim=64, vocab_size=VOCAB,
        max_position_embeddings=64, word_embed_proj_dim=32)),
    "bart": lambda: transformers.BartForConditionalGeneration(transformers.BartConfig(
        d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=VOCAB, max_position_embeddings=64)),
    "whisper": lambda: transformers.WhisperForConditionalGeneration(transformers.WhisperConfig(
        d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
        encoder_ffn_dim=64, decoder_ffn_dim=64, vocab_size=VOCAB, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        decoder_start_token_id=1, num_mel_bins=8, max_source_positions=16, max_target_positions=32)),
    "roberta": lambda: transformers.RobertaForSequenceClassification(transformers.RobertaConfig(
        **TINY, max_position_embeddings=66, num_labels=3)),
    "distilbert": lambda: transformers.DistilBertForMaskedLM(transformers.DistilBertConfig(
        dim=32, n_layers=2, n_heads=4, hidden_dim=64, vocab_size=VOCAB, max_position_embeddings=64)),
    "vit": lambda: transformers.ViTForImageClassification(transformers.ViTConfig(
        hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, image_size=16,
        patch_size=4, num_labels=5)),
}


def make_inputs(name: str, batch: int, seed: int) -> dict:
    generator = torch.Generator().manual_seed(seed)
    if name == "vit":
        return dict(pixel_values=torch.randn(batch, 3, 16, 16, generator=generator),
                    labels=torch.randint(0, 5, (batch,), generator=generator))
    if name == "whisper":
        return dict(input_features=torch.randn(batch, 8, 32, generator=generator),
                    labels=torch.randint(3, VOCAB, (batch, 6), generator=generator))
    ids = torch.randint(3, VOCAB, (batch, 10), generator=generator)
    if name == "roberta":
        return dict(input_ids=ids, labels=torch.randint(0, 3, (batch,), generator=generator))
    return dict(input_ids=ids, labels=ids)


CALLS = [(2, 0), (2, 1), (3, 2)]


def train_steps(name: str, model, call) -> list:
    """(loss, gradients) of each call of CALLS, dropout masks drawn from a generator seeded per call."""
    steps = []
    for batch, seed in CALLS:
        model.zero_grad(set_to_none=True)
        torch.manual_seed(100 + seed)
        loss = call(**make_inputs(name, batch, seed)).loss
        loss.backward()
        steps.append((loss.detach(), {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}))
    return steps


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_trains_as_eager_with_no_more_graphs_than_torch_compile(name):
    torch.manual_seed(0)
    model = MODELS[name]().train()
    expected = train_steps(name, model, model)

    graphs = {}
    for compiler in ("torch.compile", "carve"):
        torch._dynamo.reset()
        backend = CountingBackend("eager")
        compiled = (torch.compile if compiler == "torch.compile" else carve.compile)(model, backend=backend)
        got = train_steps(name, model, compiled)
        for step, ((loss, grads), (want_loss, want_grads)) in enumerate(zip(got, expected)):
            torch.testing.assert_close(loss, want_loss, msg=lambda m: f"{compiler}, call {step}: loss: {m}")
            assert grads.keys() == want_grads.keys(), (compiler, step)
            for parameter, grad in grads.items():
                torch.testing.assert_close(grad, want_grads[parameter],
                                           msg=lambda m: f"{compiler}, call {step}: {parameter}: {m}")
        graphs[compiler] = backend.graphs
    assert 1 <= graphs["carve"] <= graphs["torch.compile"], graphs
