"""The cases of the held-out real-code corpus: functions of public repositories the linter's checks
were not written or changed against (pytorch-cifar, PyTorch-GAN, Conditional_Diffusion_MNIST and
the PyTorch tutorials). The format is tests/lint_corpus_real/cases.py's: "file.py::Qualname" ->
builder(module) -> (callable, args), labelled by tests/lint_corpus/ground_truth.py.

This file is the harness, not corpus code: carve lints the other files of the folder.
"""

from __future__ import annotations


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


def loader(*tensors, batch_size=2):
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors), batch_size=batch_size)


IMAGES = lambda n=2, c=3, size=32: torch.randn(n, c, size, size)

# -- kuangliu/pytorch-cifar ----------------------------------------------------------------------

cases("cifar_resnet.py", {
    "BasicBlock.forward": lambda m: (seeded(lambda: m.BasicBlock(8, 16, stride=2)), (torch.randn(2, 8, 8, 8),)),
    "Bottleneck.forward": lambda m: (seeded(lambda: m.Bottleneck(8, 4, stride=1)), (torch.randn(2, 8, 8, 8),)),
    "ResNet._make_layer": lambda m: (seeded(lambda: m.ResNet(m.BasicBlock, [1, 1, 1, 1]))._make_layer, (m.BasicBlock, 64, 1, 1)),
    "ResNet.forward": lambda m: (seeded(lambda: m.ResNet(m.BasicBlock, [1, 1, 1, 1])), (IMAGES(),)),
    "ResNet18": lambda m: (m.ResNet18, ()),
})
cases("cifar_mobilenetv2.py", {
    "Block.forward": lambda m: (seeded(lambda: m.Block(8, 8, 2, 1)), (torch.randn(2, 8, 8, 8),)),
    "MobileNetV2._make_layers": lambda m: (seeded(m.MobileNetV2)._make_layers, (32,)),
    "MobileNetV2.forward": lambda m: (seeded(m.MobileNetV2), (IMAGES(),)),
})
# (ShuffleNet's Bottleneck cannot be built on Python 3: `mid_planes = out_planes/4` is a float.)
cases("cifar_shufflenet.py", {
    "ShuffleBlock.forward": lambda m: (m.ShuffleBlock(2), (torch.randn(2, 8, 4, 4),)),
})
cases("cifar_senet.py", {
    "BasicBlock.forward": lambda m: (seeded(lambda: m.BasicBlock(8, 16, stride=2)), (torch.randn(2, 8, 8, 8),)),
    "PreActBlock.forward": lambda m: (seeded(lambda: m.PreActBlock(8, 16, stride=2)), (torch.randn(2, 8, 8, 8),)),
    "SENet.forward": lambda m: (seeded(m.SENet18), (IMAGES(),)),
})
cases("cifar_efficientnet.py", {
    "swish": lambda m: (m.swish, (torch.randn(4),)),
    "drop_connect": lambda m: (m.drop_connect, (torch.randn(4, 3, 2, 2), 0.2)),
    "SE.forward": lambda m: (seeded(lambda: m.SE(8, 2)), (torch.randn(2, 8, 4, 4),)),
    "Block.forward": lambda m: (seeded(lambda: m.Block(8, 8, 3, 1, 1, 0.25, 0.2)).train(), (torch.randn(2, 8, 4, 4),)),
    "EfficientNet.forward": lambda m: (seeded(m.EfficientNetB0).eval(), (IMAGES(),)),
})
cases("cifar_utils.py", {
    "get_mean_and_std": lambda m: (m.get_mean_and_std, (torch.utils.data.TensorDataset(torch.rand(4, 3, 2, 2), torch.zeros(4)),)),
    "init_params": lambda m: (m.init_params, (nn.Sequential(nn.Conv2d(3, 3, 1, bias=False), nn.BatchNorm2d(3), nn.Linear(3, 3, bias=False)),)),
    "progress_bar": lambda m: (m.progress_bar, (1, 4, "Loss: 0.5")),
    "format_time": lambda m: (m.format_time, (3725.5,)),
})
cases("cifar_main.py", {
    "train": lambda m: (m.train, (0,)),
    "test": lambda m: (m.test, (0,)),
})

# -- eriklindernoren/PyTorch-GAN -----------------------------------------------------------------


def _noise(m, n=2):
    torch.manual_seed(1)
    return torch.randn(n, m.opt.latent_dim)


def _images(m, n=2):
    torch.manual_seed(2)
    return torch.randn(n, m.opt.channels, m.opt.img_size, m.opt.img_size)


def _labels(m, n=2):
    return torch.randint(0, m.opt.n_classes, (n,))


cases("gan_gan.py", {
    "Generator.forward": lambda m: (seeded(m.Generator), (_noise(m),)),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m),)),
})
cases("gan_wgan_gp.py", {
    "Generator.forward": lambda m: (seeded(m.Generator), (_noise(m),)),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m),)),
    "compute_gradient_penalty": lambda m: (m.compute_gradient_penalty, (seeded(m.Discriminator), _images(m), _images(m))),
})
cases("gan_acgan.py", {
    "weights_init_normal": lambda m: (m.weights_init_normal, (nn.Conv2d(3, 4, 3),)),
    "Generator.forward": lambda m: (seeded(m.Generator), (_noise(m), _labels(m))),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m),)),
    "sample_image": lambda m: (m.sample_image, (2, 0)),
})
cases("gan_infogan.py", {
    "weights_init_normal": lambda m: (m.weights_init_normal, (nn.BatchNorm2d(4),)),
    "to_categorical": lambda m: (m.to_categorical, (torch.tensor([1, 3]).numpy(), 10)),
    "Generator.forward": lambda m: (seeded(m.Generator), (
        _noise(m), m.to_categorical(torch.tensor([1, 3]).numpy(), m.opt.n_classes), torch.randn(2, m.opt.code_dim))),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m),)),
    "sample_image": lambda m: (m.sample_image, (10, 0)),
})
cases("gan_cgan.py", {
    "Generator.forward": lambda m: (seeded(m.Generator), (_noise(m), _labels(m))),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m), _labels(m))),
    "sample_image": lambda m: (m.sample_image, (2, 0)),
})
cases("gan_began.py", {
    "weights_init_normal": lambda m: (m.weights_init_normal, (nn.Conv2d(3, 4, 3),)),
    "Generator.forward": lambda m: (seeded(m.Generator), (_noise(m),)),
    "Discriminator.forward": lambda m: (seeded(m.Discriminator), (_images(m),)),
})
cases("gan_esrgan_models.py", {
    "DenseResidualBlock.forward": lambda m: (seeded(lambda: m.DenseResidualBlock(8)), (torch.randn(1, 8, 6, 6),)),
    "ResidualInResidualDenseBlock.forward": lambda m: (seeded(lambda: m.ResidualInResidualDenseBlock(8)), (torch.randn(1, 8, 6, 6),)),
    "GeneratorRRDB.forward": lambda m: (seeded(lambda: m.GeneratorRRDB(3, filters=8, num_res_blocks=1, num_upsample=1)), (torch.randn(1, 3, 6, 6),)),
    "Discriminator.forward": lambda m: (seeded(lambda: m.Discriminator((3, 32, 32))), (torch.randn(1, 3, 32, 32),)),
})

# -- TeaPearce/Conditional_Diffusion_MNIST -------------------------------------------------------


def _unet(m):
    torch.manual_seed(0)
    return m.ContextUnet(1, n_feat=8, n_classes=10)


def _ddpm(m):
    torch.manual_seed(0)
    return m.DDPM(_unet(m), betas=(1e-4, 0.02), n_T=4, device="cpu", drop_prob=0.1)


cases("diffusion_mnist.py", {
    "ResidualConvBlock.forward": lambda m: (seeded(lambda: m.ResidualConvBlock(4, 4, is_res=True)), (torch.randn(2, 4, 8, 8),)),
    "UnetDown.forward": lambda m: (seeded(lambda: m.UnetDown(4, 8)), (torch.randn(2, 4, 8, 8),)),
    "UnetUp.forward": lambda m: (seeded(lambda: m.UnetUp(16, 4)), (torch.randn(2, 8, 4, 4), torch.randn(2, 8, 4, 4))),
    "EmbedFC.forward": lambda m: (seeded(lambda: m.EmbedFC(1, 8)), (torch.randn(2, 1),)),
    "ContextUnet.forward": lambda m: (_unet(m), (torch.randn(2, 1, 28, 28), torch.tensor([1, 2]), torch.rand(2, 1, 1, 1), torch.zeros(2))),
    "ddpm_schedules": lambda m: (m.ddpm_schedules, (1e-4, 0.02, 4)),
    "DDPM.forward": lambda m: (_ddpm(m), (torch.randn(2, 1, 28, 28), torch.tensor([1, 2]))),
    "DDPM.sample": lambda m: (_ddpm(m).sample, (10, (1, 28, 28), "cpu", 0.5)),
})

# -- pytorch/tutorials (Jwata/tutorials fork) ----------------------------------------------------


def _chatbot(m):
    torch.manual_seed(0)
    embedding = nn.Embedding(20, 8)
    encoder = m.EncoderRNN(8, embedding, 1, 0)
    decoder = m.LuongAttnDecoderRNN("dot", embedding, 8, 20, 1, 0)
    return encoder, decoder


def _searcher(m):
    encoder, decoder = _chatbot(m)
    m.decoder = decoder  # the tutorial's global, read by GreedySearchDecoder.forward
    return m.GreedySearchDecoder(encoder, decoder)


cases("tutorial_chatbot.py", {
    "EncoderRNN.forward": lambda m: (_chatbot(m)[0], (torch.randint(3, 20, (5, 2)), torch.tensor([5, 3]))),
    "Attn.dot_score": lambda m: (m.Attn("dot", 8).dot_score, (torch.randn(1, 2, 8), torch.randn(5, 2, 8))),
    "Attn.general_score": lambda m: (seeded(lambda: m.Attn("general", 8)).general_score, (torch.randn(1, 2, 8), torch.randn(5, 2, 8))),
    "Attn.concat_score": lambda m: (seeded(lambda: m.Attn("concat", 8)).concat_score, (torch.randn(1, 2, 8), torch.randn(5, 2, 8))),
    "Attn.forward": lambda m: (seeded(lambda: m.Attn("general", 8)), (torch.randn(1, 2, 8), torch.randn(5, 2, 8))),
    "LuongAttnDecoderRNN.forward": lambda m: (_chatbot(m)[1], (torch.randint(3, 20, (1, 2)), torch.randn(1, 2, 8), torch.randn(5, 2, 8))),
    "maskNLLLoss": lambda m: (m.maskNLLLoss, (torch.softmax(torch.randn(2, 20), 1), torch.tensor([1, 4]), torch.tensor([True, False]))),
    "GreedySearchDecoder.forward": lambda m: (_searcher(m), (torch.randint(3, 20, (5, 1)), torch.tensor([5]), 3)),
})


def _dqn_memory(m):
    torch.manual_seed(0)
    m.memory = m.ReplayMemory(200)
    for index in range(130):
        state = torch.randn(1, 3, 40, 40)
        next_state = None if index % 10 == 0 else torch.randn(1, 3, 40, 40)
        m.memory.push(state, torch.tensor([[index % 2]]), next_state, torch.tensor([1.0]))
    return m.optimize_model, ()


cases("tutorial_dqn.py", {
    "ReplayMemory.push": lambda m: (m.ReplayMemory(10).push, (torch.zeros(1), torch.zeros(1), None, torch.zeros(1))),
    "DQN.forward": lambda m: (seeded(lambda: m.DQN(40, 40, 2)), (torch.randn(2, 3, 40, 40),)),
    "select_action": lambda m: (m.select_action, (torch.randn(1, 3, 40, 40),)),
    "optimize_model": _dqn_memory,
})


def _crf(m):
    torch.manual_seed(0)
    tags = {"B": 0, "I": 1, "O": 2, m.START_TAG: 3, m.STOP_TAG: 4}
    return m.BiLSTM_CRF(10, tags, m.EMBEDDING_DIM, m.HIDDEN_DIM)


cases("tutorial_bilstm_crf.py", {
    "argmax": lambda m: (m.argmax, (torch.randn(1, 5),)),
    "prepare_sequence": lambda m: (m.prepare_sequence, (["a", "b"], {"a": 0, "b": 1})),
    "log_sum_exp": lambda m: (m.log_sum_exp, (torch.randn(1, 5),)),
    "BiLSTM_CRF.init_hidden": lambda m: (_crf(m).init_hidden, ()),
    "BiLSTM_CRF._forward_alg": lambda m: (_crf(m)._forward_alg, (torch.randn(3, 5),)),
    "BiLSTM_CRF._get_lstm_features": lambda m: (_crf(m)._get_lstm_features, (torch.tensor([1, 2, 3]),)),
    "BiLSTM_CRF._score_sentence": lambda m: (_crf(m)._score_sentence, (torch.randn(3, 5), torch.tensor([0, 1, 2]))),
    "BiLSTM_CRF._viterbi_decode": lambda m: (_crf(m)._viterbi_decode, (torch.randn(3, 5),)),
    "BiLSTM_CRF.neg_log_likelihood": lambda m: (_crf(m).neg_log_likelihood, (torch.tensor([1, 2, 3]), torch.tensor([0, 1, 2]))),
    "BiLSTM_CRF.forward": lambda m: (_crf(m), (torch.tensor([1, 2, 3]),)),
})
cases("tutorial_fgsm.py", {
    "Net.forward": lambda m: (seeded(m.Net), (torch.randn(2, 1, 28, 28),)),
    "fgsm_attack": lambda m: (m.fgsm_attack, (torch.rand(1, 1, 4, 4), 0.1, torch.randn(1, 1, 4, 4))),
    "test": lambda m: (m.test, (seeded(m.Net).eval(), "cpu", loader(torch.rand(3, 1, 28, 28), torch.randint(0, 10, (3,)), batch_size=1), 0.1)),
})
cases("tutorial_neural_style.py", {
    "ContentLoss.forward": lambda m: (m.ContentLoss(torch.randn(1, 3, 8, 8)), (torch.randn(1, 3, 8, 8),)),
    "gram_matrix": lambda m: (m.gram_matrix, (torch.randn(1, 3, 8, 8),)),
    "StyleLoss.forward": lambda m: (m.StyleLoss(torch.randn(1, 3, 8, 8)), (torch.randn(1, 3, 8, 8),)),
    "Normalization.forward": lambda m: (m.Normalization(torch.tensor([0.4, 0.5, 0.6]), torch.tensor([0.2, 0.2, 0.2])), (torch.rand(1, 3, 8, 8),)),
})
cases("tutorial_char_rnn.py", {
    "RNN.forward": lambda m: (seeded(lambda: m.RNN(m.n_letters, 16, m.n_letters)), (
        torch.zeros(1, m.n_categories), torch.zeros(1, m.n_letters), torch.zeros(1, 16))),
    "categoryTensor": lambda m: (m.categoryTensor, ("French",)),
    "inputTensor": lambda m: (m.inputTensor, ("abc",)),
    "targetTensor": lambda m: (m.targetTensor, ("abc",)),
    "train": lambda m: (m.train, (m.categoryTensor("French"), m.inputTensor("abc"), m.targetTensor("abc"))),
    "timeSince": lambda m: (m.timeSince, (0.0,)),
})
cases("tutorial_seq2seq.py", {
    "EncoderRNN.forward": lambda m: (seeded(lambda: m.EncoderRNN(20, 8)), (torch.tensor([[3], [4]]),)),
    "EncoderRNN.initHidden": lambda m: (seeded(lambda: m.EncoderRNN(20, 8)).initHidden, ()),
    "DecoderRNN.forward": lambda m: (seeded(lambda: m.DecoderRNN(8, 20)), (torch.tensor([[3]]), (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8)))),
    "AttnDecoderRNN.forward": lambda m: (seeded(lambda: m.AttnDecoderRNN(8, 20, dropout_p=0.0)), (
        torch.tensor([[3]]), (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8)), torch.randn(m.MAX_LENGTH, 8))),
})
cases("tutorial_lstm_tagger.py", {
    "prepare_sequence": lambda m: (m.prepare_sequence, (["the", "dog"], {"the": 0, "dog": 1})),
    "LSTMTagger.forward": lambda m: (seeded(lambda: m.LSTMTagger(6, 6, 9, 3)), (torch.tensor([0, 1, 2]),)),
})
cases("tutorial_spatial_transformer.py", {
    "Net.stn": lambda m: (seeded(m.Net).stn, (torch.randn(2, 1, 28, 28),)),
    "Net.forward": lambda m: (seeded(m.Net), (torch.randn(2, 1, 28, 28),)),
    "train": lambda m: (m.train, (1,)),
    "test": lambda m: (m.test, ()),
})
