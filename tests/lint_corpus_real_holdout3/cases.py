"""The cases of the third held-out real-code corpus: functions of public repositories none of the
other corpora draw on (d2l-ai/d2l-en, huggingface/pytorch-image-models, jettify/pytorch-optimizer,
kmkurn/pytorch-crf, lucidrains/lion-pytorch, lucidrains/ema-pytorch, VainF/pytorch-msssim), each
copied from the package the repository publishes, labelled and measured once before any change
they led to. The format is tests/lint_corpus_real/cases.py's: "file.py::Qualname" ->
builder(module) -> (callable, args), labelled by tests/lint_corpus/ground_truth.py.

This file is the harness, not corpus code: carve lints the other files of the folder. Lazy layers
(d2l's `nn.LazyLinear`, ...) are initialised by one eager call first, as the book's `apply_init`
does before training; optimizers get parameters whose `.grad` a backward pass filled.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

CASES: dict = {}


def cases(file, builders):
    for qualname, builder in builders.items():
        key = f"{file}::{qualname}"
        assert key not in CASES, key
        CASES[key] = builder


def seeded(make):
    torch.manual_seed(0)
    return make()


def ready(module, *inputs):
    """One eager call, which gives lazy layers their shapes (d2l's apply_init)."""
    with torch.no_grad():
        module(*inputs)
    return module


def randn(*shape, seed=1):
    torch.manual_seed(seed)
    return torch.randn(*shape)


# -- d2l-ai/d2l-en ---------------------------------------------------------------------------------


class Animator:
    """A stand-in for d2l.Animator (matplotlib, not installed): the points it would plot."""

    def __init__(self, **kwargs):
        self.points = []

    def add(self, x, y):
        self.points.append((x, y))


def _d2l(m):
    m.Animator = Animator
    return m


def _quiet(model):
    model.board.display = False  # no matplotlib: the board keeps its points and does not draw
    return model


def _regression_data(m):
    return m.SyntheticRegressionData(w=torch.tensor([2.0, -3.4]), b=4.2, num_train=64, num_val=32, batch_size=16)


def _fitted(m, model, data, max_epochs=1, gradient_clip_val=0):
    """A trainer prepared as Trainer.fit prepares it, before its first epoch."""
    _d2l(m)
    trainer = m.Trainer(max_epochs=max_epochs, gradient_clip_val=gradient_clip_val)
    trainer.prepare_data(data)
    trainer.prepare_model(_quiet(model))
    trainer.optim = model.configure_optimizers()
    trainer.epoch = trainer.train_batch_idx = trainer.val_batch_idx = 0
    return trainer


def _linear(m):
    model = seeded(lambda: m.LinearRegression(lr=0.03))
    return ready(model, torch.randn(2, 2))


def _scratch(m):
    return seeded(lambda: m.LinearRegressionScratch(2, lr=0.03))


def _lenet(m):
    return ready(seeded(lambda: m.LeNet(lr=0.1)), torch.randn(2, 1, 28, 28))


def _softmax(m):
    return ready(seeded(lambda: m.SoftmaxRegression(num_outputs=10, lr=0.1)), torch.randn(2, 1, 28, 28))


def _vocab(m):
    return m.Vocab(list("the time machine by h g wells"), reserved_tokens=["<pad>", "<bos>", "<eos>"])


def _rnnlm_scratch(m):
    vocab = _vocab(m)
    rnn = seeded(lambda: m.RNNScratch(num_inputs=len(vocab), num_hiddens=8))
    return seeded(lambda: m.RNNLMScratch(rnn, vocab_size=len(vocab), lr=1)), vocab


def _tokens(n=2, t=5, vocab=10, seed=3):
    torch.manual_seed(seed)
    return torch.randint(0, vocab, (n, t))


def _clip_trainer(m):
    model = _linear(m)
    _fitted(m, model, _regression_data(m))
    loss = model.loss(model(torch.randn(4, 2)), torch.randn(4, 1))
    loss.backward()
    return model.trainer.clip_gradients, (1e-4, model)


def _mha(m):
    return ready(seeded(lambda: m.MultiHeadAttention(16, 2, 0.0)), torch.randn(2, 4, 16), torch.randn(2, 6, 16),
                 torch.randn(2, 6, 16), torch.tensor([3, 2]))


def _encoder_block(m):
    return ready(seeded(lambda: m.TransformerEncoderBlock(16, 32, 2, 0.0)).eval(), torch.randn(2, 5, 16), torch.tensor([3, 2]))


def _transformer_encoder(m):
    return ready(seeded(lambda: m.TransformerEncoder(10, 16, 32, 2, 2, 0.0)).eval(), _tokens(), torch.tensor([3, 2]))


def _bert(m):
    net = seeded(lambda: m.BERTModel(10, 16, 32, 2, 1, 0.0, max_len=16)).eval()
    return ready(net, _tokens(), torch.zeros(2, 5, dtype=torch.long), torch.tensor([5.0, 4.0]), torch.tensor([[1, 2], [0, 3]]))


def _anchors(m):
    return m.multibox_prior(torch.zeros(1, 3, 4, 4), sizes=[0.75, 0.5], ratios=[1, 2, 0.5])


def _gt_labels():
    return torch.tensor([[[0, 0.1, 0.08, 0.52, 0.92], [1, 0.55, 0.2, 0.9, 0.88]]])


def _gan(m):
    torch.manual_seed(0)
    net_D = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 3), nn.Tanh(), nn.Linear(3, 1))
    net_G = nn.Sequential(nn.Linear(2, 2))
    loss = nn.BCEWithLogitsLoss(reduction="sum")
    return net_D, net_G, loss, torch.optim.Adam(net_D.parameters(), lr=0.05), torch.optim.Adam(net_G.parameters(), lr=0.005)


def _loader(n=16, batch=4, classes=10, features=(1, 28, 28)):
    torch.manual_seed(2)
    dataset = torch.utils.data.TensorDataset(torch.randn(n, *features), torch.randint(0, classes, (n,)))
    return torch.utils.data.DataLoader(dataset, batch)


def _train_ch6(m):
    _d2l(m)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    return m.train_ch6, (net, _loader(24), _loader(8), 1, 0.1, torch.device("cpu"))  # num_batches // 5 > 0


def _train_batch(m):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    x, y = next(iter(_loader()))
    return m.train_batch_ch13, (net, x, y, nn.CrossEntropyLoss(reduction="none"),
                                torch.optim.SGD(net.parameters(), lr=0.1), [torch.device("cpu")])


def _grad_clipping(m):
    torch.manual_seed(0)
    net = nn.Linear(4, 2)
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return m.grad_clipping, (net, 0.01)


def _bert_batch(m):
    net = _bert(m)
    return m._get_batch_loss_bert, (net, nn.CrossEntropyLoss(reduction="none"), 10, _tokens(), torch.zeros(2, 5, dtype=torch.long),
                                    torch.tensor([5.0, 4.0]), torch.tensor([[1, 2], [0, 3]]), torch.tensor([[1.0, 1.0], [1.0, 0.0]]),
                                    torch.tensor([[4, 5], [6, 0]]), torch.tensor([1, 0]))


def _fit_epoch(m):
    model = _linear(m)
    trainer = _fitted(m, model, _regression_data(m))
    return trainer.fit_epoch, ()


def _fit(m):
    _d2l(m)
    trainer = m.Trainer(max_epochs=1)
    return trainer.fit, (_quiet(_linear(m)), _regression_data(m))


def _training_step(m):
    model = _scratch(m)
    _fitted(m, model, _regression_data(m))
    return model.training_step, ([torch.randn(4, 2), torch.randn(4, 1)],)


def _validation_step(m):
    model = _softmax(m)
    _fitted(m, model, _regression_data(m))
    return model.validation_step, ([torch.randn(4, 1, 28, 28), torch.tensor([1, 2, 3, 4])],)


def _plot(m):
    model = _scratch(m)
    _fitted(m, model, _regression_data(m))
    return model.plot, ("loss", torch.tensor(0.5), True)


def _rnnlm_training_step(m):
    model, vocab = _rnnlm_scratch(m)
    _fitted(m, model, _regression_data(m))
    return model.training_step, ([_tokens(vocab=len(vocab)), _tokens(vocab=len(vocab), seed=4)],)


def _multibox_detection(m):
    anchors = torch.tensor([[0.1, 0.08, 0.52, 0.92], [0.08, 0.2, 0.56, 0.95], [0.15, 0.3, 0.62, 0.91], [0.55, 0.2, 0.9, 0.88]])
    offset_preds = torch.tensor([0] * anchors.numel(), dtype=torch.float32)
    cls_probs = torch.tensor([[0] * 4, [0.9, 0.8, 0.7, 0.1], [0.1, 0.2, 0.3, 0.9]])
    return m.multibox_detection, (cls_probs.unsqueeze(dim=0), offset_preds.unsqueeze(dim=0), anchors.unsqueeze(dim=0), 0.5)


def _nms(m):
    boxes = torch.tensor([[0.1, 0.08, 0.52, 0.92], [0.08, 0.2, 0.56, 0.95], [0.15, 0.3, 0.62, 0.91], [0.55, 0.2, 0.9, 0.88]])
    return m.nms, (boxes, torch.tensor([0.9, 0.8, 0.7, 0.9]), 0.5)


def _pad_bert(m):
    vocab = m.Vocab(["a", "b", "c"], reserved_tokens=["<pad>", "<mask>", "<cls>", "<sep>"])
    examples = [([2, 4, 5, 3], [1, 2], [4, 5], [0, 0, 0, 0], True), ([2, 6, 3], [1], [6], [0, 0, 0], False)]
    return m._pad_bert_inputs, (examples, 8, vocab)


def _evaluate_accuracy(m):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 10))
    return m.evaluate_accuracy_gpu, (net, _loader())


def _evaluate_loss(m):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(784, 1))
    dataset = torch.utils.data.TensorDataset(torch.randn(8, 1, 28, 28), torch.randn(8))
    return m.evaluate_loss, (net, torch.utils.data.DataLoader(dataset, 4), nn.MSELoss(reduction="none"))


def _sgd(m):
    w = torch.randn(3, requires_grad=True)
    (w * 2).sum().backward()
    return m.sgd, ([w], 0.1, 4)


def _sgd_class_step(m):
    model = _scratch(m)
    optimizer = model.configure_optimizers()
    model.loss(model(torch.randn(4, 2)), torch.randn(4, 1)).backward()
    return torch.no_grad()(optimizer.step), ()  # Trainer.fit_epoch steps under no_grad


def _sgd_class_zero_grad(m):
    model = _scratch(m)
    optimizer = model.configure_optimizers()
    model.loss(model(torch.randn(4, 2)), torch.randn(4, 1)).backward()
    return optimizer.zero_grad, ()


cases("d2l_torch.py", {
    "Module.forward": lambda m: (_lenet(m), (torch.randn(2, 1, 28, 28),)),
    "Module.plot": _plot,
    "Module.training_step": _training_step,
    "Module.apply_init": lambda m: (seeded(lambda: m.LeNet()).apply_init, ([torch.randn(2, 1, 28, 28)], m.init_cnn)),
    "DataModule.get_tensorloader": lambda m: (_regression_data(m).get_tensorloader, ((torch.randn(8, 2), torch.randn(8, 1)), True, slice(0, 4))),
    "SyntheticRegressionData.get_dataloader": lambda m: (_regression_data(m).get_dataloader, (True,)),
    "Trainer.fit": _fit,
    "Trainer.fit_epoch": _fit_epoch,
    "Trainer.prepare_batch": lambda m: (m.Trainer(max_epochs=1).prepare_batch, ([torch.randn(4, 2), torch.randn(4, 1)],)),
    "Trainer.clip_gradients": _clip_trainer,
    "LinearRegressionScratch.forward": lambda m: (_scratch(m), (torch.randn(4, 2),)),
    "LinearRegressionScratch.loss": lambda m: (_scratch(m).loss, (torch.randn(4, 1), torch.randn(4, 1))),
    "SGD.step": _sgd_class_step,
    "SGD.zero_grad": _sgd_class_zero_grad,
    "LinearRegression.forward": lambda m: (_linear(m), (torch.randn(4, 2),)),
    "LinearRegression.loss": lambda m: (_linear(m).loss, (torch.randn(4, 1), torch.randn(4, 1))),
    "LinearRegression.get_w_b": lambda m: (_linear(m).get_w_b, ()),
    "Classifier.validation_step": _validation_step,
    "Classifier.accuracy": lambda m: (_softmax(m).accuracy, (randn(4, 10), torch.tensor([1, 2, 3, 4]))),
    "Classifier.loss": lambda m: (_softmax(m).loss, (randn(4, 10), torch.tensor([1, 2, 3, 4]))),
    "Classifier.layer_summary": lambda m: (_lenet(m).layer_summary, ((1, 1, 28, 28),)),
    "SoftmaxRegression.forward": lambda m: (_softmax(m), (torch.randn(2, 1, 28, 28),)),
    "try_gpu": lambda m: (m.try_gpu, ()),
    "corr2d": lambda m: (m.corr2d, (torch.arange(9.0).reshape(3, 3), torch.tensor([[0.0, 1.0], [2.0, 3.0]]))),
    "init_cnn": lambda m: (m.init_cnn, (seeded(lambda: nn.Linear(4, 3)),)),
    "Residual.forward": lambda m: (ready(seeded(lambda: m.Residual(6, use_1x1conv=True, strides=2)), torch.randn(2, 3, 8, 8)), (torch.randn(2, 3, 8, 8),)),
    "Vocab.__getitem__": lambda m: (_vocab(m).__getitem__, (["t", "h", "e"],)),
    "Vocab.to_tokens": lambda m: (_vocab(m).to_tokens, (torch.tensor([3, 4, 5]),)),
    "RNNScratch.forward": lambda m: (seeded(lambda: m.RNNScratch(num_inputs=4, num_hiddens=8)), (torch.randn(5, 2, 4),)),
    "RNNLMScratch.one_hot": lambda m: (_rnnlm_scratch(m)[0].one_hot, (_tokens(),)),
    "RNNLMScratch.output_layer": lambda m: (_rnnlm_scratch(m)[0].output_layer, ([torch.randn(2, 8) for _ in range(5)],)),
    "RNNLMScratch.forward": lambda m: (_rnnlm_scratch(m)[0], (_tokens(),)),
    "RNNLMScratch.training_step": _rnnlm_training_step,
    "RNNLMScratch.predict": lambda m: (lambda model, vocab: (model.predict, ("th", 4, vocab)))(*_rnnlm_scratch(m)),
    "RNN.forward": lambda m: (seeded(lambda: m.RNN(num_inputs=4, num_hiddens=8)), (torch.randn(5, 2, 4),)),
    "RNNLM.output_layer": lambda m: (lambda model: (model.output_layer, (torch.randn(5, 2, 8),)))(
        ready(seeded(lambda: m.RNNLM(m.GRU(4, 8, 1), vocab_size=4, lr=1)), torch.zeros(2, 5, dtype=torch.long))),
    "Seq2SeqEncoder.forward": lambda m: (seeded(lambda: m.Seq2SeqEncoder(10, 8, 16, 2)), (_tokens(),)),
    "bleu": lambda m: (m.bleu, ("he's calm .", "il est calme .", 2)),
    "masked_softmax": lambda m: (m.masked_softmax, (randn(2, 2, 4), torch.tensor([2, 3]))),
    "DotProductAttention.forward": lambda m: (m.DotProductAttention(0.0).eval(), (randn(2, 1, 2), randn(2, 10, 2, seed=2), randn(2, 10, 4, seed=3), torch.tensor([2, 6]))),
    "AdditiveAttention.forward": lambda m: (ready(seeded(lambda: m.AdditiveAttention(8, 0.0)).eval(), randn(2, 1, 20), randn(2, 10, 2), randn(2, 10, 4), torch.tensor([2, 6])),
                                            (randn(2, 1, 20), randn(2, 10, 2, seed=2), randn(2, 10, 4, seed=3), torch.tensor([2, 6]))),
    "MultiHeadAttention.forward": lambda m: (_mha(m).eval(), (torch.randn(2, 4, 16), torch.randn(2, 6, 16), torch.randn(2, 6, 16), torch.tensor([3, 2]))),
    "MultiHeadAttention.transpose_qkv": lambda m: (_mha(m).transpose_qkv, (torch.randn(2, 4, 16),)),
    "PositionalEncoding.forward": lambda m: (m.PositionalEncoding(16, 0.0, max_len=20).eval(), (torch.randn(2, 5, 16),)),
    "PositionWiseFFN.forward": lambda m: (ready(seeded(lambda: m.PositionWiseFFN(8, 4)), torch.ones(2, 3, 4)), (torch.ones(2, 3, 4),)),
    "AddNorm.forward": lambda m: (m.AddNorm(4, 0.0).eval(), (torch.ones(2, 3, 4), randn(2, 3, 4))),
    "TransformerEncoderBlock.forward": lambda m: (_encoder_block(m), (torch.randn(2, 5, 16), torch.tensor([3, 2]))),
    "TransformerEncoder.forward": lambda m: (_transformer_encoder(m), (_tokens(), torch.tensor([3, 2]))),
    "Timer.stop": lambda m: (m.Timer().stop, ()),
    "resnet18": lambda m: (m.resnet18, (10,)),
    "train_batch_ch13": _train_batch,
    "box_corner_to_center": lambda m: (m.box_corner_to_center, (torch.tensor([[60.0, 45.0, 378.0, 516.0], [400.0, 112.0, 655.0, 493.0]]),)),
    "multibox_prior": lambda m: (m.multibox_prior, (torch.zeros(1, 3, 4, 4), [0.75, 0.5], [1, 2, 0.5])),
    "box_iou": lambda m: (m.box_iou, (_anchors(m)[0, :5], _gt_labels()[0, :, 1:])),
    "assign_anchor_to_bbox": lambda m: (m.assign_anchor_to_bbox, (_gt_labels()[0, :, 1:], _anchors(m)[0], torch.device("cpu"))),
    "multibox_target": lambda m: (m.multibox_target, (_anchors(m), _gt_labels())),
    "offset_inverse": lambda m: (m.offset_inverse, (_anchors(m)[0], torch.zeros(_anchors(m).shape[1], 4))),
    "nms": _nms,
    "multibox_detection": _multibox_detection,
    "RandomGenerator.draw": lambda m: (m.RandomGenerator([2, 3, 4]).draw, ()),
    "batchify": lambda m: (m.batchify, ([(1, [2, 2], [3, 3, 3, 3]), (1, [2, 2, 2], [3, 3])],)),
    "get_tokens_and_segments": lambda m: (m.get_tokens_and_segments, (["a", "b"], ["c"])),
    "BERTEncoder.forward": lambda m: (_bert(m).encoder, (_tokens(), torch.zeros(2, 5, dtype=torch.long), torch.tensor([5.0, 4.0]))),
    "MaskLM.forward": lambda m: (_bert(m).mlm, (torch.randn(2, 5, 16), torch.tensor([[1, 2], [0, 3]]))),
    "BERTModel.forward": lambda m: (_bert(m), (_tokens(), torch.zeros(2, 5, dtype=torch.long), torch.tensor([5.0, 4.0]), torch.tensor([[1, 2], [0, 3]]))),
    "_replace_mlm_tokens": lambda m: (m._replace_mlm_tokens, (["<cls>", "a", "b", "c", "<sep>"], [1, 2, 3], 1, _vocab(m))),
    "_pad_bert_inputs": _pad_bert,
    "_get_batch_loss_bert": _bert_batch,
    "update_D": lambda m: (lambda D, G, loss, opt_D, opt_G: (m.update_D, (randn(4, 2), randn(4, 2, seed=2), D, G, loss, opt_D)))(*_gan(m)),
    "update_G": lambda m: (lambda D, G, loss, opt_D, opt_G: (m.update_G, (randn(4, 2), D, G, loss, opt_G)))(*_gan(m)),
    "synthetic_data": lambda m: (m.synthetic_data, (torch.tensor([2.0, -3.4]), 4.2, 8)),
    "sgd": _sgd,
    "evaluate_accuracy_gpu": _evaluate_accuracy,
    "train_ch6": _train_ch6,
    "linreg": lambda m: (m.linreg, (torch.randn(4, 2), torch.randn(2, 1), torch.zeros(1))),
    "squared_loss": lambda m: (m.squared_loss, (torch.randn(4, 1), torch.randn(4))),
    "Accumulator.add": lambda m: (m.Accumulator(2).add, (torch.tensor(3.0), 4)),
    "accuracy": lambda m: (m.accuracy, (randn(4, 10), torch.tensor([1, 2, 3, 4]))),
    "tokenize": lambda m: (m.tokenize, (["the time machine", "by h g wells"],)),
    "evaluate_loss": _evaluate_loss,
    "grad_clipping": _grad_clipping,
    "build_array_nmt": lambda m: (m.build_array_nmt, ([["t", "h"], ["e"]], _vocab(m), 4)),
    "sequence_mask": lambda m: (m.sequence_mask, (torch.ones(2, 3), torch.tensor([1, 2]))),
    "MaskedSoftmaxCELoss.forward": lambda m: (m.MaskedSoftmaxCELoss(), (randn(3, 4, 10), torch.ones((3, 4), dtype=torch.long), torch.tensor([4, 2, 0]))),
})

# -- huggingface/pytorch-image-models (timm) -------------------------------------------------------


def _logits(n=4, classes=10, seed=1):
    return randn(n, classes, seed=seed)


def _targets(n=4, classes=10):
    torch.manual_seed(5)
    return torch.randint(0, classes, (n,))


def _mixup(m, **kwargs):
    return m.Mixup(num_classes=10, **kwargs)


def _images(n=4):
    return randn(n, 3, 8, 8)


def _fast_collate_batch():
    rng = np.random.RandomState(0)
    return [(rng.randint(0, 255, (3, 8, 8), dtype=np.uint8), i % 10) for i in range(4)]


def _ema_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _ema_pair(make):
    model = _ema_model()
    ema = make(model)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1)
    return ema, model


def _with_grads():
    model = _ema_model()
    model(torch.randn(3, 4)).pow(2).sum().backward()
    return model


cases("timm_cross_entropy.py", {
    "LabelSmoothingCrossEntropy.forward": lambda m: (m.LabelSmoothingCrossEntropy(0.1), (_logits(), _targets())),
    "SoftTargetCrossEntropy.forward": lambda m: (m.SoftTargetCrossEntropy(), (_logits(), torch.softmax(_logits(seed=2), -1))),
})
cases("timm_jsd.py", {
    "JsdCrossEntropy.__call__": lambda m: (m.JsdCrossEntropy(num_splits=3).__call__, (_logits(6), _targets(6))),
})
cases("timm_asymmetric_loss.py", {
    "AsymmetricLossMultiLabel.forward": lambda m: (m.AsymmetricLossMultiLabel(), (_logits(), (_logits(seed=2) > 0).float())),
    "AsymmetricLossSingleLabel.forward": lambda m: (m.AsymmetricLossSingleLabel(), (_logits(), _targets())),
})
cases("timm_binary_cross_entropy.py", {
    "BinaryCrossEntropy.forward": lambda m: (m.BinaryCrossEntropy(smoothing=0.1), (_logits(), _targets())),
})
cases("timm_poly_loss.py", {
    "PolyCrossEntropy.forward": lambda m: (m.PolyCrossEntropy(), (_logits(), _targets())),
    "PolyBinaryCrossEntropy.forward": lambda m: (m.PolyBinaryCrossEntropy(), (_logits(), (_logits(seed=2) > 0).float())),
})
cases("timm_mixup.py", {
    "one_hot": lambda m: (m.one_hot, (_targets(), 10)),
    "mixup_target": lambda m: (m.mixup_target, (_targets(), 10, 0.7, 0.1)),
    "rand_bbox": lambda m: (m.rand_bbox, ((4, 3, 8, 8), 0.7)),
    "cutmix_bbox_and_lam": lambda m: (m.cutmix_bbox_and_lam, ((4, 3, 8, 8), 0.7)),
    "Mixup._params_per_batch": lambda m: (_mixup(m, cutmix_alpha=1.0)._params_per_batch, ()),
    "Mixup._mix_elem": lambda m: (_mixup(m, mode="elem")._mix_elem, (_images(),)),
    "Mixup._mix_batch": lambda m: (_mixup(m)._mix_batch, (_images(),)),
    "Mixup.__call__": lambda m: (_mixup(m).__call__, (_images(), _targets())),
    "FastCollateMixup.__call__": lambda m: (m.FastCollateMixup(num_classes=10).__call__, (_fast_collate_batch(),)),
})
cases("timm_random_erasing.py", {
    "_get_pixels": lambda m: (m._get_pixels, (True, False, (3, 2, 2), torch.float32, "cpu")),
    "RandomErasing._erase": lambda m: (m.RandomErasing(probability=1.0, mode="pixel", device="cpu")._erase, (_images(1)[0], 3, 8, 8, torch.float32)),
    "RandomErasing.__call__": lambda m: (m.RandomErasing(probability=1.0, mode="pixel", device="cpu").__call__, (_images(),)),
    "RandomErasing.__repr__": lambda m: (m.RandomErasing(device="cpu").__repr__, ()),
})
cases("timm_metrics.py", {
    "AverageMeter.update": lambda m: (m.AverageMeter().update, (torch.tensor(0.5), 4)),
    "accuracy": lambda m: (m.accuracy, (_logits(), _targets(), (1, 5))),
})
cases("timm_model_ema.py", {
    "ModelEma.update": lambda m: (lambda ema, model: (ema.update, (model,)))(*_ema_pair(lambda model: m.ModelEma(model, decay=0.9))),
    "ModelEmaV2.update": lambda m: (lambda ema, model: (ema.update, (model,)))(*_ema_pair(lambda model: m.ModelEmaV2(model, decay=0.9))),
    "ModelEmaV2.forward": lambda m: (m.ModelEmaV2(_ema_model()), (torch.randn(3, 4),)),
    "ModelEmaV3.get_decay": lambda m: (m.ModelEmaV3(_ema_model(), use_warmup=True).get_decay, (10,)),
    "ModelEmaV3.update": lambda m: (lambda ema, model: (ema.update, (model, 10)))(*_ema_pair(lambda model: m.ModelEmaV3(model, decay=0.9))),
    "ModelEmaV3.apply_update_": lambda m: (lambda ema, model: (ema.apply_update_, (model, 0.9)))(*_ema_pair(lambda model: m.ModelEmaV3(model, foreach=False))),
    "ModelEmaV3.set": lambda m: (lambda ema, model: (ema.set, (model,)))(*_ema_pair(lambda model: m.ModelEmaV3(model))),
})
cases("timm_agc.py", {
    "unitwise_norm": lambda m: (m.unitwise_norm, (randn(4, 3),)),
    "adaptive_clip_grad": lambda m: (m.adaptive_clip_grad, (list(_with_grads().parameters()),)),
})
cases("timm_clip_grad.py", {
    "dispatch_clip_grad": lambda m: (m.dispatch_clip_grad, (list(_with_grads().parameters()), 0.1, "value")),
})
cases("timm_drop.py", {
    "drop_block_2d": lambda m: (m.drop_block_2d, (_images(), 0.1, 3)),
    "DropBlock2d.forward": lambda m: (m.DropBlock2d(drop_prob=0.1, block_size=3), (_images(),)),
    "drop_path": lambda m: (m.drop_path, (_images(), 0.2, True)),
    "DropPath.forward": lambda m: (m.DropPath(0.2), (_images(),)),
    "calculate_drop_path_rates": lambda m: (m.calculate_drop_path_rates, (0.1, [2, 2])),
})
cases("timm_patch_dropout.py", {
    "patch_dropout_forward": lambda m: (m.patch_dropout_forward, (randn(2, 9, 8), 0.5, 1, False, True)),
    "PatchDropout.forward": lambda m: (m.PatchDropout(0.5), (randn(2, 9, 8),)),
    "PatchDropoutWithIndices.forward": lambda m: (m.PatchDropoutWithIndices(0.5), (randn(2, 9, 8),)),
})


def _evaluator(m, multi=False):
    evaluator = m.MultiLabelClassificationEvaluator() if multi else m.ClassificationEvaluator()
    if multi:
        evaluator.update(_logits(), (_logits(seed=2) > 0).float())
    else:
        evaluator.update(_logits(), _targets())
    return evaluator


cases("timm_evaluator.py", {
    "ClassificationEvaluator.update": lambda m: (m.ClassificationEvaluator().update, (_logits(), _targets())),
    "ClassificationEvaluator.compute": lambda m: (_evaluator(m).compute, ()),
    "MultiLabelClassificationEvaluator.update": lambda m: (m.MultiLabelClassificationEvaluator().update, (_logits(), (_logits(seed=2) > 0).float())),
    "MultiLabelClassificationEvaluator.compute": lambda m: (_evaluator(m, multi=True).compute, ()),
    "_average_precision": lambda m: (m._average_precision, (_logits(), (_logits(seed=2) > 0).long())),
})

# -- jettify/pytorch-optimizer ---------------------------------------------------------------------


def _optimizer_step(class_name, **kwargs):
    """The optimizer's step after one backward pass, and a second one so state exists."""
    def build(m):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))
        optimizer = getattr(m, class_name)(model.parameters(), **kwargs)
        model(torch.randn(5, 4)).pow(2).sum().backward()
        optimizer.step()
        return optimizer.step, ()
    return build


def _lookahead(m):
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = m.Lookahead(torch.optim.SGD(model.parameters(), lr=0.1), k=2)
    model(torch.randn(5, 4)).pow(2).sum().backward()
    optimizer.step()
    return optimizer.step, ()


for _module, _class in [("radam", "RAdam"), ("lamb", "Lamb"), ("yogi", "Yogi"), ("diffgrad", "DiffGrad"),
                        ("adabound", "AdaBound"), ("novograd", "NovoGrad"), ("shampoo", "Shampoo"),
                        ("adabelief", "AdaBelief"), ("madgrad", "MADGRAD")]:
    cases(f"topt_{_module}.py", {f"{_class}.step": _optimizer_step(_class)})
cases("topt_lookahead.py", {"Lookahead.step": _lookahead})

# -- kmkurn/pytorch-crf ----------------------------------------------------------------------------


def _crf(m):
    return seeded(lambda: m.CRF(5, batch_first=True))


def _emissions():
    return randn(2, 3, 5)


def _tags():
    return torch.tensor([[0, 1, 2], [2, 4, 1]])


def _mask():
    # A bool mask, which the library accepts: with its documented uint8 mask Dynamo 2.13 itself fails
    # ("RuntimeError when making fake tensor call": torch.where on a uint8 condition), a Dynamo error, not a break.
    return torch.tensor([[1, 1, 1], [1, 1, 0]], dtype=torch.bool)


cases("crf.py", {
    "CRF.forward": lambda m: (_crf(m), (_emissions(), _tags(), _mask())),
    "CRF.decode": lambda m: (_crf(m).decode, (_emissions(), _mask())),
    "CRF._compute_score": lambda m: (_crf(m)._compute_score, (_emissions().transpose(0, 1), _tags().T, _mask().T)),
    "CRF._compute_normalizer": lambda m: (_crf(m)._compute_normalizer, (_emissions().transpose(0, 1), _mask().T)),
    "CRF._viterbi_decode": lambda m: (_crf(m)._viterbi_decode, (_emissions().transpose(0, 1), _mask().T)),
    "CRF.__repr__": lambda m: (_crf(m).__repr__, ()),
})

# -- lucidrains/lion-pytorch, lucidrains/ema-pytorch -----------------------------------------------

cases("lion_pytorch.py", {
    "update_fn": lambda m: (m.update_fn, (torch.ones(4), randn(4), torch.zeros(4), 1e-4, 0.01, 0.9, 0.99)),
    "Lion.step": _optimizer_step("Lion", weight_decay=0.01),
})


def _ema(m, **kwargs):
    model = _ema_model()
    ema = m.EMA(model, **kwargs)
    return ema, model


def _ema_updated(m):
    ema, model = _ema(m, update_after_step=0, update_every=1)
    ema.update()  # the first call copies the weights
    return ema


cases("ema_pytorch.py", {
    "EMA.get_current_decay": lambda m: (lambda ema: (ema.get_current_decay, ()))(_ema_updated(m)),
    "EMA.update": lambda m: (_ema_updated(m).update, ()),
    "EMA.update_moving_average": lambda m: (lambda ema: (ema.update_moving_average, (ema.ema_model, ema.model, 0.9)))(_ema_updated(m)),
    "EMA.copy_params_from_model_to_ema": lambda m: (_ema(m)[0].copy_params_from_model_to_ema, ()),
    "EMA.__call__": lambda m: (_ema_updated(m).eval().__call__, (torch.randn(3, 4),)),
    "inplace_lerp": lambda m: (m.inplace_lerp, (torch.zeros(4), torch.ones(4), 0.1)),
})

# -- VainF/pytorch-msssim --------------------------------------------------------------------------


def _photos(size=32, seed=1):
    torch.manual_seed(seed)
    return torch.rand(1, 3, size, size) * 255


cases("msssim.py", {
    "_fspecial_gauss_1d": lambda m: (m._fspecial_gauss_1d, (11, 1.5)),
    "gaussian_filter": lambda m: (m.gaussian_filter, (_photos(), m._fspecial_gauss_1d(11, 1.5).repeat([3, 1, 1, 1]))),
    "ssim": lambda m: (m.ssim, (_photos(), _photos(seed=2))),
    "ms_ssim": lambda m: (m.ms_ssim, (_photos(176), _photos(176, seed=2))),
    "SSIM.forward": lambda m: (m.SSIM(channel=3), (_photos(), _photos(seed=2))),
    "MS_SSIM.forward": lambda m: (m.MS_SSIM(channel=3), (_photos(176), _photos(176, seed=2))),
})
