"""The cases of the second held-out real-code corpus: functions of public repositories none of the
other corpora draw on (karpathy/makemore, openai/whisper, openai/CLIP,
jadore801120/attention-is-all-you-need-pytorch), measured once before any change they led to. The
format is tests/lint_corpus_real/cases.py's: "file.py::Qualname" -> builder(module) -> (callable,
args), labelled by tests/lint_corpus/ground_truth.py.

This file is the harness, not corpus code: carve lints the other files of the folder.
"""

from __future__ import annotations

import types
from pathlib import Path

import torch

CASES: dict = {}


def cases(file, builders):
    for qualname, builder in builders.items():
        key = f"{file}::{qualname}"
        assert key not in CASES, key
        CASES[key] = builder


def seeded(make):
    torch.manual_seed(0)
    return make()


# -- karpathy/makemore -----------------------------------------------------------------------------


def _config(m):
    return m.ModelConfig(block_size=8, vocab_size=10, n_layer=2, n_embd=16, n_embd2=16, n_head=2)


def _tokens(m, n=2, t=8):
    torch.manual_seed(3)
    return torch.randint(0, 10, (n, t))


WORDS = ["emma", "olivia", "ava", "isabella", "sophia"]


def _dataset(m):
    return m.CharDataset(WORDS, sorted(set("".join(WORDS))), max(len(w) for w in WORDS))


def _print_samples(m):
    # The script's globals print_samples reads: the model and the two datasets.
    m.train_dataset, m.test_dataset = _dataset(m), m.CharDataset(WORDS[:2], sorted(set("".join(WORDS))), 8)
    config = m.ModelConfig(block_size=m.train_dataset.get_output_length(), vocab_size=m.train_dataset.get_vocab_size(),
                           n_layer=1, n_embd=16, n_embd2=16, n_head=2)
    m.model = seeded(lambda: m.Transformer(config)).eval()
    return m.print_samples, (2,)


def _create_datasets(m):
    Path("names.txt").write_text("\n".join(WORDS * 4) + "\n")  # ground_truth.py runs in a scratch directory
    return m.create_datasets, ("names.txt",)


cases("makemore.py", {
    "NewGELU.forward": lambda m: (m.NewGELU(), (torch.randn(2, 4),)),
    "CausalSelfAttention.forward": lambda m: (seeded(lambda: m.CausalSelfAttention(_config(m))), (torch.randn(2, 8, 16),)),
    "Block.forward": lambda m: (seeded(lambda: m.Block(_config(m))), (torch.randn(2, 8, 16),)),
    "Transformer.get_block_size": lambda m: (seeded(lambda: m.Transformer(_config(m))).get_block_size, ()),
    "Transformer.forward": lambda m: (seeded(lambda: m.Transformer(_config(m))), (_tokens(m), _tokens(m))),
    "CausalBoW.forward": lambda m: (seeded(lambda: m.CausalBoW(_config(m))), (torch.randn(2, 8, 16),)),
    "BoWBlock.forward": lambda m: (seeded(lambda: m.BoWBlock(_config(m))), (torch.randn(2, 8, 16),)),
    "BoW.forward": lambda m: (seeded(lambda: m.BoW(_config(m))), (_tokens(m), _tokens(m))),
    "RNNCell.forward": lambda m: (seeded(lambda: m.RNNCell(_config(m))), (torch.randn(2, 16), torch.randn(2, 16))),
    "GRUCell.forward": lambda m: (seeded(lambda: m.GRUCell(_config(m))), (torch.randn(2, 16), torch.randn(2, 16))),
    "RNN.forward": lambda m: (seeded(lambda: m.RNN(_config(m), cell_type="gru")), (_tokens(m), _tokens(m))),
    "MLP.forward": lambda m: (seeded(lambda: m.MLP(_config(m))), (_tokens(m), _tokens(m))),
    "Bigram.forward": lambda m: (seeded(lambda: m.Bigram(_config(m))), (_tokens(m), _tokens(m))),
    "generate": lambda m: (m.generate, (seeded(lambda: m.Transformer(_config(m))).eval(), torch.zeros(2, 1, dtype=torch.long), 3, 1.0, True, 3)),
    "print_samples": _print_samples,
    "evaluate": lambda m: (m.evaluate, (seeded(lambda: m.Transformer(m.ModelConfig(block_size=9, vocab_size=12, n_layer=1, n_embd=16, n_embd2=16, n_head=2))), _dataset(m), 2, 1)),
    "CharDataset.__len__": lambda m: (_dataset(m).__len__, ()),
    "CharDataset.contains": lambda m: (_dataset(m).contains, ("ava",)),
    "CharDataset.get_vocab_size": lambda m: (_dataset(m).get_vocab_size, ()),
    "CharDataset.get_output_length": lambda m: (_dataset(m).get_output_length, ()),
    "CharDataset.encode": lambda m: (_dataset(m).encode, ("emma",)),
    "CharDataset.decode": lambda m: (_dataset(m).decode, ([1, 2, 3],)),
    "CharDataset.__getitem__": lambda m: (_dataset(m).__getitem__, (1,)),
    "create_datasets": _create_datasets,
    "InfiniteDataLoader.next": lambda m: (m.InfiniteDataLoader(_dataset(m), batch_size=2).next, ()),
})

# -- openai/whisper --------------------------------------------------------------------------------


def _dims(w):
    return w.ModelDimensions(n_mels=8, n_audio_ctx=4, n_audio_state=16, n_audio_head=2, n_audio_layer=1,
                             n_vocab=32, n_text_ctx=6, n_text_state=16, n_text_head=2, n_text_layer=2)


def _whisper(w):
    torch.manual_seed(0)
    model = w.Whisper(_dims(w))
    with torch.no_grad():
        model.decoder.positional_embedding.normal_()  # torch.empty in __init__: loaded from a checkpoint
    return model.eval()


def _mel():
    torch.manual_seed(4)
    return torch.randn(1, 8, 8)


def _audio_features():
    torch.manual_seed(5)
    return torch.randn(1, 4, 16)


def _text_tokens(batch=1):
    return torch.tensor([[28, 5, 7]] * batch)


# (Whisper.set_alignment_heads is left out: Dynamo 2.13 fails on it with an internal AssertionError,
# "Expected np.nditer base, got <class 'bytes'>", at `np.frombuffer(...).copy()`: a Dynamo bug, not a break.)
cases("whisper_model.py", {
    "LayerNorm.forward": lambda w: (w.LayerNorm(16), (torch.randn(2, 16),)),
    "Linear.forward": lambda w: (seeded(lambda: w.Linear(4, 3)), (torch.randn(2, 4),)),
    "Conv1d._conv_forward": lambda w: (lambda c: (c._conv_forward, (torch.randn(1, 2, 5), c.weight, c.bias)))(seeded(lambda: w.Conv1d(2, 3, 3))),
    "sinusoids": lambda w: (w.sinusoids, (4, 8)),
    "MultiHeadAttention.forward": lambda w: (seeded(lambda: w.MultiHeadAttention(16, 2)), (torch.randn(2, 3, 16),)),
    "MultiHeadAttention.qkv_attention": lambda w: (seeded(lambda: w.MultiHeadAttention(16, 2)).qkv_attention, (
        torch.randn(2, 3, 16), torch.randn(2, 3, 16), torch.randn(2, 3, 16))),
    "ResidualAttentionBlock.forward": lambda w: (seeded(lambda: w.ResidualAttentionBlock(16, 2, cross_attention=True)), (
        torch.randn(1, 3, 16), _audio_features())),
    "AudioEncoder.forward": lambda w: (_whisper(w).encoder, (_mel(),)),
    "TextDecoder.forward": lambda w: (_whisper(w).decoder, (_text_tokens(), _audio_features())),
    "Whisper.embed_audio": lambda w: (_whisper(w).embed_audio, (_mel(),)),
    "Whisper.logits": lambda w: (_whisper(w).logits, (_text_tokens(), _audio_features())),
    "Whisper.forward": lambda w: (_whisper(w), (_mel(), _text_tokens())),
    "Whisper.install_kv_cache_hooks": lambda w: (_whisper(w).install_kv_cache_hooks, ()),
})


def _tokenizer():
    """A stand-in for whisper's tiktoken tokenizer: the attributes the decoding code reads."""
    return types.SimpleNamespace(
        language="en", language_token=30, sot_sequence=(28, 30), sot=28, all_language_tokens=(29, 30, 31),
        all_language_codes=("en", "de", "fr"), eot=27, no_timestamps=26, timestamp_begin=20, encode=lambda text: [5])


def _model(d):
    return _whisper(__import__("whisper_model"))


def _inference(d, cached=False):
    inference = d.PyTorchInference(_model(d), 3)
    if cached:
        inference.logits(_text_tokens(2), _audio_features().repeat(2, 1, 1))
    return inference


def _beam(d, finished=False):
    decoder = d.BeamSearchDecoder(2, 27, types.SimpleNamespace(rearrange_kv_cache=lambda indices: None))
    if finished:
        decoder.finished_sequences = [{(28, 5, 27): -1.0}]
    return decoder


def _logits(n=2):
    torch.manual_seed(6)
    return torch.randn(n, 32)


cases("whisper_decoding.py", {
    "detect_language": lambda d: (d.detect_language, (_model(d), _mel(), _tokenizer())),
    "PyTorchInference.logits": lambda d: (_inference(d).logits, (_text_tokens(), _audio_features())),
    "PyTorchInference.cleanup_caching": lambda d: (_inference(d, cached=True).cleanup_caching, ()),
    "PyTorchInference.rearrange_kv_cache": lambda d: (_inference(d, cached=True).rearrange_kv_cache, ([1, 0],)),
    "MaximumLikelihoodRanker.rank": lambda d: (d.MaximumLikelihoodRanker(None).rank, (
        [[torch.tensor([1, 2]), torch.tensor([1, 2, 3])]], [[-1.0, -2.0]])),
    "GreedyDecoder.update": lambda d: (d.GreedyDecoder(0.0, 27).update, (_text_tokens(2), _logits(), torch.zeros(2))),
    "GreedyDecoder.finalize": lambda d: (d.GreedyDecoder(0.0, 27).finalize, (_text_tokens(2), torch.zeros(2))),
    "BeamSearchDecoder.reset": lambda d: (_beam(d).reset, ()),
    "BeamSearchDecoder.update": lambda d: (_beam(d).update, (_text_tokens(2), _logits(), torch.zeros(2))),
    "BeamSearchDecoder.finalize": lambda d: (_beam(d, finished=True).finalize, (_text_tokens(2)[None], torch.tensor([[-0.5, -1.5]]))),
    "SuppressBlank.apply": lambda d: (d.SuppressBlank(_tokenizer(), 3).apply, (_logits(), _text_tokens(2))),
    "SuppressTokens.apply": lambda d: (d.SuppressTokens([1, 2]).apply, (_logits(), _text_tokens(2))),
    "ApplyTimestampRules.apply": lambda d: (d.ApplyTimestampRules(_tokenizer(), 1, 2).apply, (
        _logits(), torch.tensor([[28, 21, 5], [28, 5, 22]]))),
})

# -- openai/CLIP -----------------------------------------------------------------------------------


def _clip(c):
    torch.manual_seed(0)
    return c.CLIP(embed_dim=32, image_resolution=32, vision_layers=1, vision_width=64, vision_patch_size=16,
                  context_length=5, vocab_size=20, transformer_width=64, transformer_heads=1, transformer_layers=1)


def _resnet(c):
    torch.manual_seed(0)
    return c.ModifiedResNet((1, 1, 1, 1), 16, 4, input_resolution=64, width=8)


def _text():
    return torch.tensor([[1, 5, 7, 19, 0], [1, 3, 19, 0, 0]])


cases("clip_model.py", {
    "Bottleneck.forward": lambda c: (seeded(lambda: c.Bottleneck(8, 4, stride=2)), (torch.randn(1, 8, 8, 8),)),
    "AttentionPool2d.forward": lambda c: (seeded(lambda: c.AttentionPool2d(2, 16, 2, 8)), (torch.randn(1, 16, 2, 2),)),
    "ModifiedResNet._make_layer": lambda c: (_resnet(c)._make_layer, (8, 1, 1)),
    "ModifiedResNet.forward": lambda c: (_resnet(c).eval(), (torch.randn(1, 3, 64, 64),)),
    "LayerNorm.forward": lambda c: (c.LayerNorm(16), (torch.randn(2, 16),)),
    "QuickGELU.forward": lambda c: (c.QuickGELU(), (torch.randn(2, 16),)),
    "ResidualAttentionBlock.attention": lambda c: (seeded(lambda: c.ResidualAttentionBlock(16, 2)).attention, (torch.randn(5, 2, 16),)),
    "ResidualAttentionBlock.forward": lambda c: (seeded(lambda: c.ResidualAttentionBlock(16, 2, torch.full((5, 5), float("-inf")).triu_(1))), (torch.randn(5, 2, 16),)),
    "Transformer.forward": lambda c: (seeded(lambda: c.Transformer(16, 2, 2)), (torch.randn(5, 2, 16),)),
    "VisionTransformer.forward": lambda c: (seeded(lambda: c.VisionTransformer(32, 16, 64, 1, 1, 32)), (torch.randn(1, 3, 32, 32),)),
    "CLIP.initialize_parameters": lambda c: (_clip(c).initialize_parameters, ()),
    "CLIP.build_attention_mask": lambda c: (_clip(c).build_attention_mask, ()),
    "CLIP.encode_image": lambda c: (_clip(c).encode_image, (torch.randn(2, 3, 32, 32),)),
    "CLIP.encode_text": lambda c: (_clip(c).encode_text, (_text(),)),
    "CLIP.forward": lambda c: (_clip(c), (torch.randn(2, 3, 32, 32), _text())),
    "convert_weights": lambda c: (c.convert_weights, (_clip(c),)),
    "build_model": lambda c: (c.build_model, (_clip(c).state_dict(),)),
})

# -- jadore801120/attention-is-all-you-need-pytorch -----------------------------------------------


def _src():
    return torch.tensor([[3, 4, 5, 0], [6, 7, 0, 0]])


def _transformer(models):
    torch.manual_seed(0)
    return models.Transformer(12, 12, 0, 0, d_word_vec=16, d_model=16, d_inner=32, n_layers=1, n_head=2, d_k=8, d_v=8,
                              dropout=0.0, n_position=10)


def _translator(t):
    models = __import__("aiayn_models")
    return t.Translator(_transformer(models), beam_size=2, max_seq_len=6, src_pad_idx=0, trg_pad_idx=0,
                        trg_bos_idx=1, trg_eos_idx=2)


def _optim(o):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    model(torch.randn(3, 4)).sum().backward()
    return o.ScheduledOptim(torch.optim.Adam(model.parameters(), betas=(0.9, 0.98), eps=1e-09), 2.0, 16, 4)


def _batches():
    # torchtext's BucketIterator batches: .src and .trg, (length, batch) tensors.
    torch.manual_seed(7)
    return [types.SimpleNamespace(src=torch.randint(1, 12, (4, 2)), trg=torch.randint(1, 12, (5, 2))) for _ in range(2)]


OPT = types.SimpleNamespace(src_pad_idx=0, trg_pad_idx=0)


def _train_epoch(tr):
    model = _transformer(__import__("aiayn_models"))
    optimizer = __import__("aiayn_optim").ScheduledOptim(torch.optim.Adam(model.parameters()), 2.0, 16, 4)
    return tr.train_epoch, (model, _batches(), optimizer, OPT, "cpu", True)


cases("aiayn_modules.py", {
    "ScaledDotProductAttention.forward": lambda a: (a.ScaledDotProductAttention(2.0, 0.0), (
        torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4), torch.ones(2, 1, 1, 3))),
})
cases("aiayn_sublayers.py", {
    "MultiHeadAttention.forward": lambda a: (seeded(lambda: a.MultiHeadAttention(2, 16, 8, 8, 0.0)), (
        torch.randn(2, 3, 16), torch.randn(2, 3, 16), torch.randn(2, 3, 16), torch.ones(2, 1, 3))),
    "PositionwiseFeedForward.forward": lambda a: (seeded(lambda: a.PositionwiseFeedForward(16, 32, 0.0)), (torch.randn(2, 3, 16),)),
})
cases("aiayn_layers.py", {
    "EncoderLayer.forward": lambda a: (seeded(lambda: a.EncoderLayer(16, 32, 2, 8, 8, 0.0)), (torch.randn(2, 3, 16), torch.ones(2, 1, 3))),
    "DecoderLayer.forward": lambda a: (seeded(lambda: a.DecoderLayer(16, 32, 2, 8, 8, 0.0)), (
        torch.randn(2, 3, 16), torch.randn(2, 4, 16), torch.ones(2, 3, 3), torch.ones(2, 1, 4))),
})
cases("aiayn_models.py", {
    "get_pad_mask": lambda a: (a.get_pad_mask, (_src(), 0)),
    "get_subsequent_mask": lambda a: (a.get_subsequent_mask, (_src(),)),
    "PositionalEncoding._get_sinusoid_encoding_table": lambda a: (a.PositionalEncoding(8, 10)._get_sinusoid_encoding_table, (10, 8)),
    "PositionalEncoding.forward": lambda a: (a.PositionalEncoding(16, 10), (torch.randn(2, 4, 16),)),
    "Encoder.forward": lambda a: (_transformer(a).encoder.eval(), (_src(), a.get_pad_mask(_src(), 0))),
    "Decoder.forward": lambda a: (_transformer(a).decoder.eval(), (
        _src(), a.get_pad_mask(_src(), 0) & a.get_subsequent_mask(_src()), torch.randn(2, 4, 16), a.get_pad_mask(_src(), 0))),
    "Transformer.forward": lambda a: (_transformer(a), (_src(), _src())),
})
cases("aiayn_optim.py", {
    "ScheduledOptim.step_and_update_lr": lambda o: (_optim(o).step_and_update_lr, ()),
    "ScheduledOptim.zero_grad": lambda o: (_optim(o).zero_grad, ()),
    "ScheduledOptim._get_lr_scale": lambda o: ((lambda s: (setattr(s, "n_steps", 3), s)[1])(_optim(o))._get_lr_scale, ()),
    "ScheduledOptim._update_learning_rate": lambda o: (_optim(o)._update_learning_rate, ()),
})
cases("aiayn_translator.py", {
    "Translator._model_decode": lambda t: (_translator(t)._model_decode, (
        torch.tensor([[1, 3]]), torch.randn(1, 4, 16), torch.ones(1, 1, 4, dtype=torch.bool))),
    "Translator._get_init_state": lambda t: (_translator(t)._get_init_state, (
        torch.tensor([[3, 4, 5, 6]]), torch.ones(1, 1, 4, dtype=torch.bool))),
    "Translator._get_the_best_score_and_idx": lambda t: (_translator(t)._get_the_best_score_and_idx, (
        torch.tensor([[1, 3, 0, 0, 0, 0], [1, 4, 0, 0, 0, 0]]), torch.softmax(torch.randn(2, 2, 12), -1), torch.tensor([-0.5, -1.0]), 2)),
    "Translator.translate_sentence": lambda t: (_translator(t).translate_sentence, (torch.tensor([[3, 4, 5, 6]]),)),
})
cases("aiayn_train.py", {
    "cal_performance": lambda tr: (tr.cal_performance, (torch.randn(6, 12), torch.tensor([[1, 2, 0], [3, 0, 0]]), 0, True)),
    "cal_loss": lambda tr: (tr.cal_loss, (torch.randn(6, 12), torch.tensor([[1, 2, 0], [3, 0, 0]]), 0, True)),
    "patch_src": lambda tr: (tr.patch_src, (torch.randint(1, 12, (4, 2)), 0)),
    "patch_trg": lambda tr: (tr.patch_trg, (torch.randint(1, 12, (5, 2)), 0)),
    "train_epoch": _train_epoch,
    "eval_epoch": lambda tr: (tr.eval_epoch, (_transformer(__import__("aiayn_models")), _batches(), "cpu", OPT)),
})
