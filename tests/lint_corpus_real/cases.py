"""The cases of the real-code corpus: which function of which copied file, called on what.

    CASES["nanogpt_model.py::CausalSelfAttention.forward"] = builder
    builder(module) -> (callable, args)     # `module`: the corpus file, loaded

A case is one function of the copied code, compiled as its own frame, the way a user would
compile it: a module's `forward` through the module instance (`torch.compile(model)`), any
other method through the bound method, a function as itself. tests/lint_corpus/ground_truth.py
runs each under `torch._dynamo.explain` (its label), and tests/lint_corpus/accuracy.py lints
the copied files with each case's function taken as compiled.

This file is the harness, not corpus code: carve lints the other files of the folder.
Inputs are small and seeded; constructors take the smallest sizes that run.
"""

from __future__ import annotations

import types

import torch
from torch import nn

CASES: dict = {}


def case(key):
    def register(builder):
        assert key not in CASES, key
        CASES[key] = builder
        return builder
    return register


def cases(file, builders):
    for qualname, builder in builders.items():
        case(f"{file}::{qualname}")(builder)


def seeded(make):
    torch.manual_seed(0)
    return make()


def loader(*tensors, batch_size=2):
    """A DataLoader over a few synthetic samples (`len(loader.dataset)` works as in the scripts)."""
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors), batch_size=batch_size)


def ns(**values):
    return types.SimpleNamespace(**values)


# -- nanoGPT -------------------------------------------------------------------------------------

def _nanogpt(m, **overrides):
    torch.manual_seed(0)
    config = dict(block_size=8, vocab_size=64, n_layer=2, n_head=2, n_embd=16, dropout=0.0, bias=True)
    config.update(overrides)
    return m.GPTConfig(**config)


def _idx(n=2, t=8, vocab=64):
    torch.manual_seed(1)
    return torch.randint(0, vocab, (n, t))


cases("nanogpt_model.py", {
    "LayerNorm.forward": lambda m: (m.LayerNorm(16, bias=True), (torch.randn(2, 8, 16),)),
    "CausalSelfAttention.forward": lambda m: (m.CausalSelfAttention(_nanogpt(m)), (torch.randn(2, 8, 16),)),
    "MLP.forward": lambda m: (m.MLP(_nanogpt(m)), (torch.randn(2, 8, 16),)),
    "Block.forward": lambda m: (m.Block(_nanogpt(m)), (torch.randn(2, 8, 16),)),
    "GPT.forward": lambda m: (m.GPT(_nanogpt(m)), (_idx(), _idx())),
    "GPT.get_num_params": lambda m: (m.GPT(_nanogpt(m)).get_num_params, ()),
    "GPT._init_weights": lambda m: (m.GPT(_nanogpt(m))._init_weights, (nn.Linear(4, 4),)),
    "GPT.crop_block_size": lambda m: (m.GPT(_nanogpt(m)).crop_block_size, (4,)),
    "GPT.configure_optimizers": lambda m: (m.GPT(_nanogpt(m)).configure_optimizers, (0.1, 6e-4, (0.9, 0.95), "cpu")),
    "GPT.estimate_mfu": lambda m: (m.GPT(_nanogpt(m)).estimate_mfu, (4, 0.5)),
    "GPT.generate": lambda m: (m.GPT(_nanogpt(m)).generate, (_idx(1, 3), 3, 1.0, 5)),
})
cases("nanogpt_train.py", {
    "get_batch": lambda m: (m.get_batch, ("train",)),
    "estimate_loss": lambda m: (m.estimate_loss, ()),
    "get_lr": lambda m: (m.get_lr, (50,)),
})

# -- minGPT --------------------------------------------------------------------------------------


def _mingpt_config(m):
    config = m.GPT.get_default_config()
    config.model_type = None
    config.n_layer, config.n_head, config.n_embd = 2, 2, 16
    config.vocab_size, config.block_size = 32, 8
    config.embd_pdrop = config.resid_pdrop = config.attn_pdrop = 0.0
    return config


def _mingpt(m):
    torch.manual_seed(0)
    return m.GPT(_mingpt_config(m))


def _mingpt_trainer(m):
    import mingpt_model
    torch.manual_seed(0)
    model = _mingpt(mingpt_model)
    config = m.Trainer.get_default_config()
    config.device, config.num_workers, config.max_iters, config.batch_size = "cpu", 0, 2, 2
    data = [(torch.randint(0, 32, (8,)), torch.randint(0, 32, (8,))) for _ in range(4)]
    return m.Trainer(config, model, data)


cases("mingpt_model.py", {
    "NewGELU.forward": lambda m: (m.NewGELU(), (torch.randn(2, 8),)),
    "CausalSelfAttention.forward": lambda m: (m.CausalSelfAttention(_mingpt_config(m)), (torch.randn(2, 8, 16),)),
    "Block.forward": lambda m: (m.Block(_mingpt_config(m)), (torch.randn(2, 8, 16),)),
    "GPT._init_weights": lambda m: (_mingpt(m)._init_weights, (nn.Embedding(4, 4),)),
    "GPT.configure_optimizers": lambda m: (_mingpt(m).configure_optimizers, (ns(weight_decay=0.1, learning_rate=3e-4, betas=(0.9, 0.95)),)),
    "GPT.forward": lambda m: (_mingpt(m), (_idx(vocab=32), _idx(vocab=32))),
    "GPT.generate": lambda m: (_mingpt(m).generate, (_idx(1, 3, 32), 3, 1.0, True, 5)),
})
cases("mingpt_trainer.py", {
    "Trainer.trigger_callbacks": lambda m: (_mingpt_trainer(m).trigger_callbacks, ("on_batch_end",)),
    "Trainer.run": lambda m: (_mingpt_trainer(m).run, ()),
})
cases("mingpt_utils.py", {
    "set_seed": lambda m: (m.set_seed, (3,)),
})
cases("mingpt_adder.py", {
    "AdditionDataset.__getitem__": lambda m: (m.AdditionDataset(m.AdditionDataset.get_default_config(), "train").__getitem__, (3,)),
    "AdditionDataset.__len__": lambda m: (m.AdditionDataset(m.AdditionDataset.get_default_config(), "test").__len__, ()),
})
cases("mingpt_chargpt.py", {
    "CharDataset.__getitem__": lambda m: (m.CharDataset(m.CharDataset.get_default_config(), "hello world, hello carve" * 2).__getitem__, (2,)),
})

# -- pytorch/examples ----------------------------------------------------------------------------

MNIST = lambda n=4: (torch.randn(n, 1, 28, 28), torch.randint(0, 10, (n,)))
TRAIN_ARGS = ns(log_interval=1, dry_run=False)


def _trainer_args(m, net, loader_inputs):
    torch.manual_seed(0)
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer, loader(*loader_inputs)


def _train(m, net=None, data=MNIST):
    model, optimizer, batches = _trainer_args(m, net or m.Net, data())
    return m.train, (TRAIN_ARGS, model, torch.device("cpu"), batches, optimizer, 1)


def _test(m, net=None, data=MNIST, with_args=False):
    model, _, batches = _trainer_args(m, net or m.Net, data())
    return m.test, ((TRAIN_ARGS,) if with_args else ()) + (model, torch.device("cpu"), batches)


cases("examples_mnist.py", {
    "Net.forward": lambda m: (seeded(m.Net), (torch.randn(2, 1, 28, 28),)),
    "train": _train,
    "test": _test,
})
cases("examples_vae.py", {
    "VAE.encode": lambda m: (seeded(m.VAE).encode, (torch.rand(2, 784),)),
    "VAE.reparameterize": lambda m: (seeded(m.VAE).reparameterize, (torch.randn(2, 20), torch.randn(2, 20))),
    "VAE.decode": lambda m: (seeded(m.VAE).decode, (torch.randn(2, 20),)),
    "VAE.forward": lambda m: (seeded(m.VAE), (torch.rand(2, 1, 28, 28),)),
    "loss_function": lambda m: (m.loss_function, (torch.rand(2, 784), torch.rand(2, 1, 28, 28), torch.randn(2, 20), torch.randn(2, 20))),
    "train": lambda m: (m.train, (1,)),
    "test": lambda m: (m.test, (1,)),
})
cases("examples_dcgan.py", {
    "weights_init": lambda m: (m.weights_init, (nn.Conv2d(3, 4, 3),)),
    "Generator.forward": lambda m: (seeded(lambda: m.Generator(1)), (torch.randn(2, m.nz, 1, 1),)),
    "Discriminator.forward": lambda m: (seeded(lambda: m.Discriminator(1)), (torch.randn(2, m.nc, 64, 64),)),
})
cases("examples_time_sequence.py", {
    "Sequence.forward": lambda m: (seeded(m.Sequence).double(), (torch.randn(2, 5, dtype=torch.double), 2)),
})


def _policy_with_episode(m, model_name):
    model = getattr(m, model_name)
    del getattr(model, "saved_actions", getattr(model, "saved_log_probs", None))[:]
    for _ in range(3):
        m.select_action(torch.randn(4).numpy())
    model.rewards[:] = [1.0, 0.0, 1.0]
    return m.finish_episode, ()


cases("examples_reinforce.py", {
    "Policy.forward": lambda m: (seeded(m.Policy), (torch.randn(2, 4),)),
    "select_action": lambda m: (m.select_action, (torch.randn(4).numpy(),)),
    "finish_episode": lambda m: _policy_with_episode(m, "policy"),
})
cases("examples_actor_critic.py", {
    "Policy.forward": lambda m: (seeded(m.Policy), (torch.randn(2, 4),)),
    "select_action": lambda m: (m.select_action, (torch.randn(4).numpy(),)),
    "finish_episode": lambda m: _policy_with_episode(m, "model"),
})
cases("examples_regression.py", {
    "make_features": lambda m: (m.make_features, (torch.randn(4),)),
    "f": lambda m: (m.f, (torch.randn(4, 4),)),
    "poly_desc": lambda m: (m.poly_desc, (torch.randn(4), torch.randn(1))),
    "get_batch": lambda m: (m.get_batch, (8,)),
})
cases("examples_super_resolution.py", {
    "Net.forward": lambda m: (seeded(lambda: m.Net(2)), (torch.randn(1, 1, 8, 8),)),
    "Net._initialize_weights": lambda m: (seeded(lambda: m.Net(2))._initialize_weights, ()),
})
_pairs = lambda n=4: (torch.randn(n, 1, 12, 12), torch.randn(n, 1, 12, 12), torch.rand(n).round())
cases("examples_siamese.py", {
    "SiameseNetwork.init_weights": lambda m: (seeded(m.SiameseNetwork).init_weights, (nn.Linear(3, 3),)),
    "SiameseNetwork.forward_once": lambda m: (seeded(m.SiameseNetwork).forward_once, (torch.randn(2, 1, 12, 12),)),
    "SiameseNetwork.forward": lambda m: (seeded(m.SiameseNetwork), (torch.randn(2, 1, 12, 12), torch.randn(2, 1, 12, 12))),
    "train": lambda m: _train(m, m.SiameseNetwork, _pairs),
    "test": lambda m: _test(m, m.SiameseNetwork, _pairs),
})
cases("examples_mnist_rnn.py", {
    "Net.forward": lambda m: (seeded(m.Net), (torch.randn(2, 1, 28, 28),)),
    "train": _train,
    "test": lambda m: _test(m, with_args=True),
})
cases("examples_transformer_net.py", {
    "TransformerNet.forward": lambda m: (seeded(m.TransformerNet), (torch.randn(1, 3, 16, 16),)),
    "ConvLayer.forward": lambda m: (seeded(lambda: m.ConvLayer(3, 4, 3, 1)), (torch.randn(1, 3, 8, 8),)),
    "ResidualBlock.forward": lambda m: (seeded(lambda: m.ResidualBlock(4)), (torch.randn(1, 4, 8, 8),)),
    "UpsampleConvLayer.forward": lambda m: (seeded(lambda: m.UpsampleConvLayer(4, 3, 3, 1, upsample=2)), (torch.randn(1, 4, 8, 8),)),
})
cases("examples_style_utils.py", {
    "gram_matrix": lambda m: (m.gram_matrix, (torch.randn(2, 3, 4, 4),)),
    "normalize_batch": lambda m: (m.normalize_batch, (torch.rand(2, 3, 4, 4) * 255,)),
})


def _imagenet(m, validate=False):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Flatten(), nn.Linear(12, 6))
    batches = loader(torch.randn(4, 3, 2, 2), torch.randint(0, 6, (4,)))
    args = ns(no_accel=True, print_freq=1, gpu=None, distributed=False, world_size=1, batch_size=2, workers=0)
    if validate:
        return m.validate, (batches, model, nn.CrossEntropyLoss(), args)
    return m.train, (batches, model, nn.CrossEntropyLoss(), torch.optim.SGD(model.parameters(), lr=0.1), 1,
                     torch.device("cpu"), args)


def _meter(m):
    meter = m.AverageMeter("Loss", False, ":.4e")
    meter.update(2.0, 3)
    return meter


cases("examples_imagenet.py", {
    "train": _imagenet,
    "validate": lambda m: _imagenet(m, validate=True),
    "AverageMeter.reset": lambda m: (_meter(m).reset, ()),
    "AverageMeter.update": lambda m: (_meter(m).update, (torch.tensor(1.5), 2)),
    "AverageMeter.summary": lambda m: (_meter(m).summary, ()),
    "ProgressMeter.display": lambda m: (m.ProgressMeter(10, [_meter(m)], prefix="Test: ").display, (3,)),
    "accuracy": lambda m: (m.accuracy, (torch.randn(8, 6), torch.randint(0, 6, (8,)), (1, 5))),
})


def _ff_net(m):
    torch.manual_seed(0)
    return m.Net([16, 8, 8])


cases("examples_forward_forward.py", {
    "get_y_neg": lambda m: (m.get_y_neg, (torch.randint(0, 10, (4,)),)),
    "overlay_y_on_x": lambda m: (m.overlay_y_on_x, (torch.rand(4, 16), torch.randint(0, 10, (4,)))),
    "Net.predict": lambda m: (_ff_net(m).predict, (torch.rand(4, 16),)),
    "Net.train": lambda m: (_ff_net(m).train, (torch.rand(4, 16), torch.rand(4, 16))),
    "Layer.forward": lambda m: (seeded(lambda: m.Layer(16, 8)), (torch.rand(4, 16),)),
    "Layer.train": lambda m: (seeded(lambda: m.Layer(16, 8)).train, (torch.rand(4, 16), torch.rand(4, 16))),
})


def _graph(n=6, features=5):
    torch.manual_seed(0)
    adjacency = (torch.rand(n, n) > 0.5).float() + torch.eye(n)
    return torch.randn(n, features), adjacency


def _graph_training(m, model, iterate=True):
    features, adjacency = _graph()
    if model.__class__.__name__ == "GCN":
        adjacency = adjacency.to_sparse()
    target = torch.randint(0, 3, (6,))
    mask_train = torch.tensor([True, True, True, False, False, False])
    mask_val = ~mask_train
    criterion = nn.NLLLoss()
    if iterate:
        return m.train_iter, (10, model, torch.optim.Adam(model.parameters(), lr=0.01), criterion, (features, adjacency),
                              target, mask_train, mask_val)
    return m.test, (model, criterion, (features, adjacency), target, mask_val)


cases("examples_gcn.py", {
    "GraphConv.forward": lambda m: (seeded(lambda: m.GraphConv(5, 4, use_bias=True)), (_graph()[0], _graph()[1].to_sparse())),
    "GCN.forward": lambda m: (seeded(lambda: m.GCN(5, 4, 3)), (_graph()[0], _graph()[1].to_sparse())),
    "train_iter": lambda m: _graph_training(m, seeded(lambda: m.GCN(5, 4, 3))),
    "test": lambda m: _graph_training(m, seeded(lambda: m.GCN(5, 4, 3)), iterate=False),
})
cases("examples_gat.py", {
    "GraphAttentionLayer._get_attention_scores": lambda m: (
        seeded(lambda: m.GraphAttentionLayer(5, 4, 2, concat=True))._get_attention_scores, (torch.randn(2, 6, 2),)),
    "GraphAttentionLayer.forward": lambda m: (seeded(lambda: m.GraphAttentionLayer(5, 4, 2, concat=True)), _graph()),
    "GAT.forward": lambda m: (seeded(lambda: m.GAT(5, 4, 2, 3)), _graph()),
    "train_iter": lambda m: _graph_training(m, seeded(lambda: m.GAT(5, 4, 2, 3))),
    "test": lambda m: _graph_training(m, seeded(lambda: m.GAT(5, 4, 2, 3)), iterate=False),
})


def _rnn_model(m, kind="LSTM"):
    torch.manual_seed(0)
    return m.RNNModel(kind, 20, 8, 8, 1, 0.0)


def _hidden(model, batch=2):
    return model.init_hidden(batch)


cases("examples_word_language_model.py", {
    "RNNModel.init_weights": lambda m: (_rnn_model(m).init_weights, ()),
    "RNNModel.forward": lambda m: (lambda model: (model, (torch.randint(0, 20, (5, 2)), _hidden(model))))(_rnn_model(m)),
    "RNNModel.init_hidden": lambda m: (_rnn_model(m, "GRU").init_hidden, (2,)),
    "PositionalEncoding.forward": lambda m: (seeded(lambda: m.PositionalEncoding(8, 0.0, 50)), (torch.randn(5, 2, 8),)),
    "TransformerModel._generate_square_subsequent_mask": lambda m: (
        seeded(lambda: m.TransformerModel(20, 8, 2, 16, 1, 0.0))._generate_square_subsequent_mask, (5,)),
    "TransformerModel.init_weights": lambda m: (seeded(lambda: m.TransformerModel(20, 8, 2, 16, 1, 0.0)).init_weights, ()),
    "TransformerModel.forward": lambda m: (seeded(lambda: m.TransformerModel(20, 8, 2, 16, 1, 0.0)), (torch.randint(0, 20, (5, 2)),)),
})
cases("examples_word_language_model_main.py", {
    "batchify": lambda m: (m.batchify, (torch.randint(0, 20, (21,)), 2)),
    "repackage_hidden": lambda m: (m.repackage_hidden, ((torch.randn(1, 2, 8), torch.randn(1, 2, 8)),)),
    "get_batch": lambda m: (m.get_batch, (m.train_data, 5)),
    "evaluate": lambda m: (m.evaluate, (m.batchify(torch.randint(0, 20, (40,)), m.eval_batch_size),)),
    "train": lambda m: (m.train, ()),
})


def _snli_config():
    return ns(d_proj=6, d_embed=8, projection=True, n_layers=1, dp_ratio=0.0, d_hidden=5, birnn=False, n_cells=1,
              n_embed=20, fix_emb=True, d_out=3)


cases("examples_snli_model.py", {
    "Bottle.forward": lambda m: (seeded(lambda: m.Linear(8, 6)), (torch.randn(3, 2, 8),)),
    "Encoder.forward": lambda m: (seeded(lambda: m.Encoder(_snli_config())), (torch.randn(4, 2, 6),)),
    "SNLIClassifier.forward": lambda m: (seeded(lambda: m.SNLIClassifier(_snli_config())), (
        ns(premise=torch.randint(0, 20, (4, 2)), hypothesis=torch.randint(0, 20, (5, 2))),)),
})


def _translator(m):
    torch.manual_seed(0)
    return m.Translator(1, 1, 8, 2, 20, 20, 16, 0.0)


cases("examples_translation_model.py", {
    "PositionalEncoding.forward": lambda m: (seeded(lambda: m.PositionalEncoding(8, 0.0, 50)), (torch.randn(5, 2, 8),)),
    "Translator._init_weights": lambda m: (_translator(m)._init_weights, ()),
    "Translator.forward": lambda m: (_translator(m), (
        torch.randint(0, 20, (5, 2)), torch.randint(0, 20, (4, 2)), torch.zeros(5, 5), torch.zeros(4, 4),
        torch.zeros(2, 5, dtype=torch.bool), torch.zeros(2, 4, dtype=torch.bool), torch.zeros(2, 5, dtype=torch.bool))),
    "Translator.encode": lambda m: (_translator(m).encode, (torch.randint(0, 20, (5, 2)), torch.zeros(5, 5))),
    "Translator.decode": lambda m: (_translator(m).decode, (torch.randint(0, 20, (4, 2)), torch.randn(5, 2, 8), torch.zeros(4, 4))),
})


def _hogwild(m, test=False):
    import examples_mnist
    torch.manual_seed(0)
    model = examples_mnist.Net()
    batches = loader(*MNIST())
    args = ns(log_interval=1, dry_run=False, seed=1, lr=0.01, momentum=0.5, epochs=1)
    if test:
        return m.test_epoch, (model, torch.device("cpu"), batches)
    return m.train_epoch, (1, args, model, torch.device("cpu"), batches, torch.optim.SGD(model.parameters(), lr=0.01))


cases("examples_hogwild.py", {
    "train_epoch": _hogwild,
    "test_epoch": lambda m: _hogwild(m, test=True),
})

# -- yunjey/pytorch-tutorial ---------------------------------------------------------------------

cases("yunjey_feedforward.py", {
    "NeuralNet.forward": lambda m: (seeded(lambda: m.NeuralNet(12, 8, 3)), (torch.randn(2, 12),)),
})
cases("yunjey_birnn.py", {
    "BiRNN.forward": lambda m: (seeded(lambda: m.BiRNN(6, 5, 1, 3)), (torch.randn(2, 4, 6),)),
})
cases("yunjey_cnn.py", {
    "ConvNet.forward": lambda m: (seeded(m.ConvNet), (torch.randn(2, 1, 28, 28),)),
})
cases("yunjey_resnet.py", {
    "conv3x3": lambda m: (m.conv3x3, (3, 4)),
    "ResidualBlock.forward": lambda m: (seeded(lambda: m.ResidualBlock(4, 4)), (torch.randn(1, 4, 8, 8),)),
    "ResNet.make_layer": lambda m: (seeded(lambda: m.ResNet(m.ResidualBlock, [1, 1, 1])).make_layer, (m.ResidualBlock, 8, 1)),
    "ResNet.forward": lambda m: (seeded(lambda: m.ResNet(m.ResidualBlock, [1, 1, 1])), (torch.randn(1, 3, 32, 32),)),
    "update_lr": lambda m: (m.update_lr, (torch.optim.SGD([nn.Parameter(torch.ones(2))], lr=0.1), 0.01)),
})
cases("yunjey_language_model.py", {
    "RNNLM.forward": lambda m: (seeded(lambda: m.RNNLM(20, 6, 5, 1)), (
        torch.randint(0, 20, (2, 4)), (torch.zeros(1, 2, 5), torch.zeros(1, 2, 5)))),
    "detach": lambda m: (m.detach, ((torch.randn(1, 2, 5), torch.randn(1, 2, 5)),)),
})
cases("yunjey_rnn.py", {
    "RNN.forward": lambda m: (seeded(lambda: m.RNN(6, 5, 1, 3)), (torch.randn(2, 4, 6),)),
})
cases("yunjey_gan.py", {
    "denorm": lambda m: (m.denorm, (torch.randn(2, 4),)),
    "reset_grad": lambda m: (m.reset_grad, ()),
})
cases("yunjey_captioning_model.py", {
    "DecoderRNN.forward": lambda m: (seeded(lambda: m.DecoderRNN(6, 5, 20, 1)), (
        torch.randn(2, 6), torch.randint(0, 20, (2, 4)), [5, 3])),
    "DecoderRNN.sample": lambda m: (seeded(lambda: m.DecoderRNN(6, 5, 20, 1, max_seq_length=3)).sample, (torch.randn(2, 6),)),
})
cases("yunjey_vae.py", {
    "VAE.encode": lambda m: (seeded(m.VAE).encode, (torch.rand(2, 784),)),
    "VAE.reparameterize": lambda m: (seeded(m.VAE).reparameterize, (torch.randn(2, 20), torch.randn(2, 20))),
    "VAE.decode": lambda m: (seeded(m.VAE).decode, (torch.randn(2, 20),)),
    "VAE.forward": lambda m: (seeded(m.VAE), (torch.rand(2, 784),)),
})
cases("yunjey_tensorboard.py", {
    "NeuralNet.forward": lambda m: (seeded(m.NeuralNet), (torch.randn(2, 784),)),
})

# -- graykode/nlp-tutorial -----------------------------------------------------------------------


def _onehot(m, batch, steps, classes):
    torch.manual_seed(0)
    return torch.eye(classes)[torch.randint(0, classes, (batch, steps))]


cases("graykode_nnlm.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "NNLM.forward": lambda m: (seeded(m.NNLM), (torch.LongTensor(m.make_batch()[0]),)),
})
cases("graykode_textcnn.py", {
    "TextCNN.forward": lambda m: (seeded(m.TextCNN), (torch.randint(0, m.vocab_size, (2, m.sequence_length)),)),
})
cases("graykode_textrnn.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "TextRNN.forward": lambda m: (seeded(m.TextRNN), (torch.zeros(1, 3, m.n_hidden), torch.FloatTensor(m.make_batch()[0]))),
})
cases("graykode_textlstm.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "TextLSTM.forward": lambda m: (seeded(m.TextLSTM), (torch.FloatTensor(m.make_batch()[0]),)),
})
cases("graykode_bilstm.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "BiLSTM.forward": lambda m: (seeded(m.BiLSTM), (torch.FloatTensor(m.make_batch()[0][:3]),)),
})
cases("graykode_seq2seq.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "make_testbatch": lambda m: (m.make_testbatch, ("man",)),
    "Seq2Seq.forward": lambda m: (seeded(m.Seq2Seq), (
        _onehot(m, 2, m.n_step, m.n_class), torch.zeros(1, 2, m.n_hidden), _onehot(m, 2, m.n_step + 1, m.n_class))),
})
cases("graykode_seq2seq_attention.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "Attention.forward": lambda m: (seeded(m.Attention), (
        _onehot(m, 1, m.n_step, m.n_class), torch.zeros(1, 1, m.n_hidden), _onehot(m, 1, m.n_step, m.n_class))),
    "Attention.get_att_weight": lambda m: (seeded(m.Attention).get_att_weight, (torch.randn(1, 1, m.n_hidden), torch.randn(m.n_step, 1, m.n_hidden))),
    "Attention.get_att_score": lambda m: (seeded(m.Attention).get_att_score, (torch.randn(1, 1, m.n_hidden), torch.randn(1, m.n_hidden))),
})
cases("graykode_bilstm_attention.py", {
    "BiLSTM_Attention.attention_net": lambda m: (seeded(m.BiLSTM_Attention).attention_net, (
        torch.randn(2, 3, m.n_hidden * 2), torch.randn(2, 2, m.n_hidden))),
    "BiLSTM_Attention.forward": lambda m: (seeded(m.BiLSTM_Attention), (torch.randint(0, m.vocab_size, (2, 3)),)),
})


def _transformer_inputs(m):
    return m.make_batch()[:2]


cases("graykode_transformer.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "get_sinusoid_encoding_table": lambda m: (m.get_sinusoid_encoding_table, (6, 8)),
    "get_attn_pad_mask": lambda m: (m.get_attn_pad_mask, _transformer_inputs(m)),
    "get_attn_subsequent_mask": lambda m: (m.get_attn_subsequent_mask, (_transformer_inputs(m)[1],)),
    "ScaledDotProductAttention.forward": lambda m: (m.ScaledDotProductAttention(), (
        torch.randn(1, 2, 5, m.d_k), torch.randn(1, 2, 5, m.d_k), torch.randn(1, 2, 5, m.d_v), torch.zeros(1, 2, 5, 5, dtype=torch.bool))),
    "MultiHeadAttention.forward": lambda m: (seeded(m.MultiHeadAttention), (
        torch.randn(1, 5, m.d_model), torch.randn(1, 5, m.d_model), torch.randn(1, 5, m.d_model), torch.zeros(1, 5, 5, dtype=torch.bool))),
    "PoswiseFeedForwardNet.forward": lambda m: (seeded(m.PoswiseFeedForwardNet), (torch.randn(1, 5, m.d_model),)),
    "EncoderLayer.forward": lambda m: (seeded(m.EncoderLayer), (torch.randn(1, 5, m.d_model), torch.zeros(1, 5, 5, dtype=torch.bool))),
    "DecoderLayer.forward": lambda m: (seeded(m.DecoderLayer), (
        torch.randn(1, 5, m.d_model), torch.randn(1, 5, m.d_model), torch.zeros(1, 5, 5, dtype=torch.bool), torch.zeros(1, 5, 5, dtype=torch.bool))),
    "Encoder.forward": lambda m: (seeded(m.Encoder), (_transformer_inputs(m)[0],)),
    "Decoder.forward": lambda m: (seeded(m.Decoder), (_transformer_inputs(m)[1], _transformer_inputs(m)[0], torch.randn(1, 5, m.d_model))),
    "Transformer.forward": lambda m: (seeded(m.Transformer), _transformer_inputs(m)),
    "greedy_decoder": lambda m: (m.greedy_decoder, (seeded(m.Transformer), _transformer_inputs(m)[0], m.tgt_vocab["S"])),
})


def _bert_inputs(m):
    import random
    random.seed(0)
    batch = m.make_batch()
    input_ids, segment_ids, _, masked_pos, _ = map(torch.LongTensor, zip(*[row[:4] + [int(row[4])] for row in batch]))
    return input_ids, segment_ids, masked_pos


cases("graykode_bert.py", {
    "make_batch": lambda m: (m.make_batch, ()),
    "get_attn_pad_mask": lambda m: (m.get_attn_pad_mask, _bert_inputs(m)[:1] * 2),
    "gelu": lambda m: (m.gelu, (torch.randn(4),)),
    "Embedding.forward": lambda m: (seeded(m.Embedding), _bert_inputs(m)[:2]),
    "ScaledDotProductAttention.forward": lambda m: (m.ScaledDotProductAttention(), (
        torch.randn(1, 2, 5, m.d_k), torch.randn(1, 2, 5, m.d_k), torch.randn(1, 2, 5, m.d_v), torch.zeros(1, 2, 5, 5, dtype=torch.bool))),
    "MultiHeadAttention.forward": lambda m: (seeded(m.MultiHeadAttention), (
        torch.randn(1, 5, m.d_model), torch.randn(1, 5, m.d_model), torch.randn(1, 5, m.d_model), torch.zeros(1, 5, 5, dtype=torch.bool))),
    "PoswiseFeedForwardNet.forward": lambda m: (seeded(m.PoswiseFeedForwardNet), (torch.randn(1, 5, m.d_model),)),
    "EncoderLayer.forward": lambda m: (seeded(m.EncoderLayer), (torch.randn(1, 5, m.d_model), torch.zeros(1, 5, 5, dtype=torch.bool))),
    "BERT.forward": lambda m: (seeded(m.BERT), _bert_inputs(m)),
})

# -- huggingface/transformers --------------------------------------------------------------------


def _llama_config():
    from transformers import LlamaConfig
    return LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, max_position_embeddings=32, attn_implementation="eager")


def _rope(m, seq=5):
    rotary = m.LlamaRotaryEmbedding(_llama_config())
    return rotary(torch.randn(1, seq, 16), torch.arange(seq)[None])


def _causal_mask(seq=5):
    return torch.full((seq, seq), float("-inf")).triu(1)[None, None]


def _hf(factory):
    torch.manual_seed(0)
    return factory().eval()


cases("hf_llama.py", {
    "LlamaRMSNorm.forward": lambda m: (_hf(lambda: m.LlamaRMSNorm(16)), (torch.randn(2, 5, 16),)),
    "LlamaRotaryEmbedding.forward": lambda m: (_hf(lambda: m.LlamaRotaryEmbedding(_llama_config())), (torch.randn(1, 5, 16), torch.arange(5)[None])),
    "rotate_half": lambda m: (m.rotate_half, (torch.randn(1, 4, 5, 4),)),
    "apply_rotary_pos_emb": lambda m: (m.apply_rotary_pos_emb, (torch.randn(1, 4, 5, 4), torch.randn(1, 2, 5, 4), *_rope(m))),
    "LlamaMLP.forward": lambda m: (_hf(lambda: m.LlamaMLP(_llama_config())), (torch.randn(2, 5, 16),)),
    "repeat_kv": lambda m: (m.repeat_kv, (torch.randn(1, 2, 5, 4), 2)),
    "eager_attention_forward": lambda m: (m.eager_attention_forward, (
        _hf(lambda: m.LlamaAttention(_llama_config(), 0)), torch.randn(1, 4, 5, 4), torch.randn(1, 2, 5, 4), torch.randn(1, 2, 5, 4),
        _causal_mask(), 0.5)),
    "LlamaAttention.forward": lambda m: (_hf(lambda: m.LlamaAttention(_llama_config(), 0)), (torch.randn(1, 5, 16), _rope(m), _causal_mask())),
    "LlamaDecoderLayer.forward": lambda m: (_hf(lambda: m.LlamaDecoderLayer(_llama_config(), 0)), (
        torch.randn(1, 5, 16), _causal_mask(), torch.arange(5)[None], None, False, _rope(m))),
    "LlamaModel.forward": lambda m: (_hf(lambda: m.LlamaModel(_llama_config())), (torch.randint(0, 32, (1, 5)),)),
    "LlamaForCausalLM.forward": lambda m: (_hf(lambda: m.LlamaForCausalLM(_llama_config())), (torch.randint(0, 32, (1, 5)),)),
})


def _gpt2_config():
    from transformers import GPT2Config
    return GPT2Config(vocab_size=32, n_positions=16, n_embd=16, n_layer=2, n_head=2, attn_implementation="eager",
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


cases("hf_gpt2.py", {
    "eager_attention_forward": lambda m: (m.eager_attention_forward, (
        _hf(lambda: m.GPT2Attention(_gpt2_config(), layer_idx=0)), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8), torch.randn(1, 2, 5, 8), _causal_mask())),
    "GPT2Attention.forward": lambda m: (_hf(lambda: m.GPT2Attention(_gpt2_config(), layer_idx=0)), (torch.randn(1, 5, 16),)),
    "GPT2MLP.forward": lambda m: (_hf(lambda: m.GPT2MLP(64, _gpt2_config())), (torch.randn(1, 5, 16),)),
    "GPT2Block.forward": lambda m: (_hf(lambda: m.GPT2Block(_gpt2_config(), layer_idx=0)), (torch.randn(1, 5, 16),)),
    "GPT2SequenceSummary.forward": lambda m: (_hf(lambda: m.GPT2SequenceSummary(_gpt2_config())), (torch.randn(2, 5, 16),)),
    "GPT2Model.forward": lambda m: (_hf(lambda: m.GPT2Model(_gpt2_config())), (torch.randint(0, 32, (1, 5)),)),
    "GPT2LMHeadModel.forward": lambda m: (_hf(lambda: m.GPT2LMHeadModel(_gpt2_config())), (torch.randint(0, 32, (1, 5)),)),
})


def _bert_config():
    from transformers import BertConfig
    return BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=2, num_attention_heads=2, intermediate_size=32,
                      max_position_embeddings=16, attn_implementation="eager", hidden_dropout_prob=0.0,
                      attention_probs_dropout_prob=0.0)


_hidden_bert = lambda: torch.randn(2, 5, 16)
cases("hf_bert.py", {
    "BertEmbeddings.forward": lambda m: (_hf(lambda: m.BertEmbeddings(_bert_config())), (torch.randint(0, 32, (2, 5)),)),
    "eager_attention_forward": lambda m: (m.eager_attention_forward, (
        _hf(lambda: m.BertSelfAttention(_bert_config())), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8), torch.randn(2, 2, 5, 8), None)),
    "BertSelfAttention.forward": lambda m: (_hf(lambda: m.BertSelfAttention(_bert_config())), (_hidden_bert(),)),
    "BertSelfOutput.forward": lambda m: (_hf(lambda: m.BertSelfOutput(_bert_config())), (_hidden_bert(), _hidden_bert())),
    "BertAttention.forward": lambda m: (_hf(lambda: m.BertAttention(_bert_config())), (_hidden_bert(),)),
    "BertIntermediate.forward": lambda m: (_hf(lambda: m.BertIntermediate(_bert_config())), (_hidden_bert(),)),
    "BertOutput.forward": lambda m: (_hf(lambda: m.BertOutput(_bert_config())), (torch.randn(2, 5, 32), _hidden_bert())),
    "BertLayer.forward": lambda m: (_hf(lambda: m.BertLayer(_bert_config())), (_hidden_bert(),)),
    "BertEncoder.forward": lambda m: (_hf(lambda: m.BertEncoder(_bert_config())), (_hidden_bert(),)),
    "BertPooler.forward": lambda m: (_hf(lambda: m.BertPooler(_bert_config())), (_hidden_bert(),)),
    "BertPredictionHeadTransform.forward": lambda m: (_hf(lambda: m.BertPredictionHeadTransform(_bert_config())), (_hidden_bert(),)),
    "BertLMPredictionHead.forward": lambda m: (_hf(lambda: m.BertLMPredictionHead(_bert_config())), (_hidden_bert(),)),
    "BertOnlyMLMHead.forward": lambda m: (_hf(lambda: m.BertOnlyMLMHead(_bert_config())), (_hidden_bert(),)),
    "BertOnlyNSPHead.forward": lambda m: (_hf(lambda: m.BertOnlyNSPHead(_bert_config())), (torch.randn(2, 16),)),
})
