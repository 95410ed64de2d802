"""The cases of the fifth held-out real-code corpus: functions of public projects none of the other
corpora draw on (adefossez/julius, deep-spin/entmax, fadel/pytorch_ema, csteinmetz1/auraloss,
facebookresearch/schedule_free, Tony-Y/pytorch_warmup, zh217/torch-dct, davidtvs/pytorch-lr-finder,
subhadarship/kmeans_pytorch, facebookresearch/madgrad, RElbers/info-nce-pytorch), each copied from the
package the project publishes on PyPI, labelled before any lint run and measured once before any
change they led to. The format is tests/lint_corpus_real/cases.py's: "file.py::Qualname" ->
builder(module) -> (callable, args), labelled by tests/lint_corpus/ground_truth.py.

This file is the harness, not corpus code: carve lints the other files of the folder. It stands in
for matplotlib (pytorch-lr-finder imports pyplot at the top, for its `plot` only); optimizers get
parameters whose `.grad` a backward pass filled; the learning-rate finder trains a small linear model
on a small synthetic data set. geomloss's grid routines (softmin on images) need pykeops, not
installed: they are left out, and so is its image barycenter file. auraloss's A-weighting filter (SciPy) and its mel and chroma
filterbanks (librosa) are not installed: the cases that need them are left out.
"""

from __future__ import annotations

import sys
import types

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


def randn(*shape, seed=1):
    torch.manual_seed(seed)
    return torch.randn(*shape)


def rand(*shape, seed=1):
    torch.manual_seed(seed)
    return torch.rand(*shape)


# matplotlib is not installed: pytorch-lr-finder's lr_finder.py imports pyplot for `LRFinder.plot` only.
_matplotlib = types.ModuleType("matplotlib")
_pyplot = types.ModuleType("matplotlib.pyplot")
_matplotlib.pyplot = _pyplot
sys.modules.setdefault("matplotlib", _matplotlib)
sys.modules.setdefault("matplotlib.pyplot", _pyplot)


# -- adefossez/julius (DSP: sinc filters, FFT convolution, resampling, band splitting) ---------------


def _signal(*shape, seed=1):
    return randn(*shape, seed=seed)


cases("julius_core.py", {
    "sinc": lambda m: (m.sinc, (torch.linspace(-3, 3, 13),)),
    "pad_to": lambda m: (m.pad_to, (_signal(2, 10), 16)),
    "hz_to_mel": lambda m: (m.hz_to_mel, (torch.tensor([100.0, 440.0, 4000.0]),)),
    "mel_to_hz": lambda m: (m.mel_to_hz, (torch.tensor([100.0, 500.0, 2000.0]),)),
    "mel_frequencies": lambda m: (m.mel_frequencies, (8, 20.0, 8000.0)),
    "volume": lambda m: (m.volume, (_signal(2, 64),)),
    "pure_tone": lambda m: (m.pure_tone, (8.0, 128, 1)),
    "unfold": lambda m: (m.unfold, (_signal(2, 3, 20), 6, 2)),
})
cases("julius_utils.py", {
    "simple_repr": lambda m: (m.simple_repr, (nn.Identity(),)),
})
cases("julius_fftconv.py", {
    "_new_rfft": lambda m: (m._new_rfft, (_signal(2, 16),)),
    "_new_irfft": lambda m: (m._new_irfft, (torch.view_as_real(torch.fft.rfft(_signal(2, 16))), 16)),
    "_compl_mul_conjugate": lambda m: (m._compl_mul_conjugate, (randn(2, 3, 5, 9, 2), randn(4, 3, 9, 2, seed=2))),
    "fft_conv1d": lambda m: (m.fft_conv1d, (_signal(2, 3, 64), randn(4, 3, 9, seed=2))),
    "FFTConv1d.forward": lambda m: (seeded(lambda: m.FFTConv1d(3, 4, 9)), (_signal(2, 3, 64),)),
})
cases("julius_lowpass.py", {
    "LowPassFilters.forward": lambda m: (m.LowPassFilters([0.1, 0.25]), (_signal(2, 3, 128),)),
    "LowPassFilter.forward": lambda m: (m.LowPassFilter(0.1), (_signal(2, 128),)),
    "lowpass_filters": lambda m: (m.lowpass_filters, (_signal(2, 128), [0.1, 0.3])),
    "lowpass_filter": lambda m: (m.lowpass_filter, (_signal(2, 128), 0.2)),
})
cases("julius_filters.py", {
    "HighPassFilters.forward": lambda m: (m.HighPassFilters([0.1, 0.25]), (_signal(2, 128),)),
    "HighPassFilter.forward": lambda m: (m.HighPassFilter(0.2), (_signal(2, 128),)),
    "highpass_filters": lambda m: (m.highpass_filters, (_signal(2, 128), [0.1, 0.3])),
    "highpass_filter": lambda m: (m.highpass_filter, (_signal(2, 128), 0.2)),
    "BandPassFilter.forward": lambda m: (m.BandPassFilter(0.1, 0.3), (_signal(2, 128),)),
    "bandpass_filter": lambda m: (m.bandpass_filter, (_signal(2, 128), 0.1, 0.3)),
})
cases("julius_resample.py", {
    "ResampleFrac._init_kernels": lambda m: (m.ResampleFrac(4, 5, zeros=4)._init_kernels, ()),
    "ResampleFrac.forward": lambda m: (m.ResampleFrac(4, 5, zeros=4), (_signal(2, 100),)),
    "resample_frac": lambda m: (m.resample_frac, (_signal(2, 100), 4, 5)),
    "_kernel_upsample2_downsample2": lambda m: (m._kernel_upsample2_downsample2, (4,)),
    "_upsample2": lambda m: (m._upsample2, (_signal(2, 3, 32), 4)),
    "_downsample2": lambda m: (m._downsample2, (_signal(2, 3, 32), 4)),
})
cases("julius_bands.py", {
    "SplitBands.forward": lambda m: (m.SplitBands(sample_rate=128, n_bands=4), (_signal(2, 128),)),
    "SplitBands.cutoffs": lambda m: (m.SplitBands.cutoffs.fget, (m.SplitBands(sample_rate=128, n_bands=4),)),
    "split_bands": lambda m: (m.split_bands, (_signal(2, 128), 128, 3)),
})


# -- deep-spin/entmax (sparsemax, 1.5-entmax, bisection, their losses) --------------------------------


def _scores(*shape, seed=3):
    return randn(*shape, seed=seed)


def _targets(n=4, classes=6, seed=4):
    torch.manual_seed(seed)
    return torch.randint(0, classes, (n,))


cases("entmax_activations.py", {
    "_make_ix_like": lambda m: (m._make_ix_like, (_scores(3, 6), 1)),
    "_roll_last": lambda m: (m._roll_last, (_scores(3, 6, 2), 1)),
    "_sparsemax_threshold_and_support": lambda m: (m._sparsemax_threshold_and_support, (_scores(4, 6),)),
    "_entmax_threshold_and_support": lambda m: (m._entmax_threshold_and_support, (_scores(4, 6) / 2,)),
    "sparsemax": lambda m: (m.sparsemax, (_scores(4, 6),)),
    "entmax15": lambda m: (m.entmax15, (_scores(4, 6),)),
    "Sparsemax.forward": lambda m: (m.Sparsemax(dim=-1), (_scores(4, 6),)),
    "Entmax15.forward": lambda m: (m.Entmax15(dim=-1), (_scores(4, 6),)),
})
cases("entmax_root_finding.py", {
    "EntmaxBisectFunction._gp": lambda m: (m.EntmaxBisectFunction._gp, (rand(4, 6), 1.5)),
    "EntmaxBisectFunction._gp_inv": lambda m: (m.EntmaxBisectFunction._gp_inv, (rand(4, 6), 1.5)),
    "EntmaxBisectFunction._p": lambda m: (m.EntmaxBisectFunction._p, (_scores(4, 6), 1.5)),
    "SparsemaxBisectFunction._p": lambda m: (m.SparsemaxBisectFunction._p, (_scores(4, 6), 2)),
    "NormmaxBisectFunction._p": lambda m: (m.NormmaxBisectFunction._p, (_scores(4, 6), 2)),
    "entmax_bisect": lambda m: (m.entmax_bisect, (_scores(4, 6), 1.5, -1, 10)),
    "sparsemax_bisect": lambda m: (m.sparsemax_bisect, (_scores(4, 6), -1, 10)),
    "normmax_bisect": lambda m: (m.normmax_bisect, (_scores(4, 6), 2, -1, 10)),
    "budget_bisect": lambda m: (m.budget_bisect, (_scores(4, 6), 2, -1, 10)),
    "SparsemaxBisect.forward": lambda m: (m.SparsemaxBisect(dim=-1, n_iter=10), (_scores(4, 6),)),
    "EntmaxBisect.forward": lambda m: (m.EntmaxBisect(alpha=1.5, n_iter=10), (_scores(4, 6),)),
    "NormmaxBisect.forward": lambda m: (m.NormmaxBisect(alpha=2, n_iter=10), (_scores(4, 6),)),
    "BudgetBisect.forward": lambda m: (m.BudgetBisect(budget=2, n_iter=10), (_scores(4, 6),)),
})
cases("entmax_losses.py", {
    "_GenericLoss.forward": lambda m: (m.SparsemaxLoss(), (_scores(4, 6), _targets())),
    "SparsemaxLossFunction.project": lambda m: (m.SparsemaxLossFunction.project, (_scores(4, 6), 2, None)),
    "SparsemaxLossFunction.omega": lambda m: (m.SparsemaxLossFunction.omega, (rand(4, 6), 2)),
    "Entmax15LossFunction.omega": lambda m: (m.Entmax15LossFunction.omega, (rand(4, 6), 1.5)),
    "EntmaxBisectLossFunction.omega": lambda m: (m.EntmaxBisectLossFunction.omega, (rand(4, 6), 1.5)),
    "NormmaxBisectLossFunction.omega": lambda m: (m.NormmaxBisectLossFunction.omega, (rand(4, 6), 2)),
    "sparsemax_loss": lambda m: (m.sparsemax_loss, (_scores(4, 6), _targets())),
    "sparsemax_bisect_loss": lambda m: (m.sparsemax_bisect_loss, (_scores(4, 6), _targets(), 10)),
    "entmax15_loss": lambda m: (m.entmax15_loss, (_scores(4, 6), _targets())),
    "entmax_bisect_loss": lambda m: (m.entmax_bisect_loss, (_scores(4, 6), _targets(), 1.5, 10)),
    "normmax_bisect_loss": lambda m: (m.normmax_bisect_loss, (_scores(4, 6), _targets(), 2, 10)),
    "SparsemaxLoss.loss": lambda m: (m.SparsemaxLoss().loss, (_scores(4, 6), _targets())),
    "SparsemaxBisectLoss.loss": lambda m: (m.SparsemaxBisectLoss(n_iter=10).loss, (_scores(4, 6), _targets())),
    "EntmaxBisectLoss.loss": lambda m: (m.EntmaxBisectLoss(n_iter=10).loss, (_scores(4, 6), _targets())),
    "NormmaxBisectLoss.loss": lambda m: (m.NormmaxBisectLoss(n_iter=10).loss, (_scores(4, 6), _targets())),
    "Entmax15Loss.loss": lambda m: (m.Entmax15Loss(k=4).loss, (_scores(4, 6), _targets())),
})


# -- fadel/pytorch_ema (an exponential moving average of a model's parameters) ------------------------


def _ema_model():
    return seeded(lambda: nn.Linear(4, 3))


_EMA_MODELS = []  # the moving average holds its parameters by weak reference: their models are kept


def _ema(m, model=None):
    model = model or _ema_model()
    _EMA_MODELS.append(model)
    ema = m.ExponentialMovingAverage(model.parameters(), decay=0.9)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    return ema, model


def _ema_stored(m):
    ema, model = _ema(m)
    ema.store()
    return ema, model


cases("torch_ema.py", {
    "ExponentialMovingAverage._get_parameters": lambda m: (_ema(m)[0]._get_parameters, (None,)),
    "ExponentialMovingAverage.update": lambda m: (_ema(m)[0].update, ()),
    "ExponentialMovingAverage.copy_to": lambda m: (_ema(m)[0].copy_to, ()),
    "ExponentialMovingAverage.store": lambda m: (_ema(m)[0].store, ()),
    "ExponentialMovingAverage.restore": lambda m: (_ema_stored(m)[0].restore, ()),
    "ExponentialMovingAverage.to": lambda m: (_ema(m)[0].to, (None, torch.float64)),
    "ExponentialMovingAverage.state_dict": lambda m: (_ema(m)[0].state_dict, ()),
    "ExponentialMovingAverage.load_state_dict": lambda m: (_ema(m)[0].load_state_dict, (_ema(m)[0].state_dict(),)),
})


# -- csteinmetz1/auraloss (audio losses: time domain, STFT, multi-resolution) -------------------------


def _audio(*shape, seed=5):
    return randn(*shape, seed=seed) * 0.5


cases("aura_utils.py", {
    "apply_reduction": lambda m: (m.apply_reduction, (rand(4, 3), "mean")),
})
cases("aura_time.py", {
    "ESRLoss.forward": lambda m: (m.ESRLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
    "DCLoss.forward": lambda m: (m.DCLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
    "LogCoshLoss.forward": lambda m: (m.LogCoshLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
    "SNRLoss.forward": lambda m: (m.SNRLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
    "SISDRLoss.forward": lambda m: (m.SISDRLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
    "SDSDRLoss.forward": lambda m: (m.SDSDRLoss(), (_audio(2, 1, 64), _audio(2, 1, 64, seed=6))),
})
cases("aura_perceptual.py", {
    "SumAndDifference.forward": lambda m: (m.SumAndDifference(), (_audio(2, 2, 64),)),
    "SumAndDifference.sum": lambda m: (m.SumAndDifference.sum, (_audio(2, 2, 64),)),
    "SumAndDifference.diff": lambda m: (m.SumAndDifference.diff, (_audio(2, 2, 64),)),
})


def _stft_kwargs():
    return dict(fft_size=64, hop_size=16, win_length=64)


cases("aura_freq.py", {
    "SpectralConvergenceLoss.forward": lambda m: (m.SpectralConvergenceLoss(), (rand(2, 33, 5) + 0.1, rand(2, 33, 5, seed=6) + 0.1)),
    "STFTMagnitudeLoss.forward": lambda m: (m.STFTMagnitudeLoss(), (rand(2, 33, 5) + 0.1, rand(2, 33, 5, seed=6) + 0.1)),
    "STFTLoss.stft": lambda m: (m.STFTLoss(**_stft_kwargs()).stft, (_audio(2, 256),)),
    "STFTLoss.forward": lambda m: (m.STFTLoss(**_stft_kwargs()), (_audio(2, 1, 256), _audio(2, 1, 256, seed=6))),
    "MultiResolutionSTFTLoss.forward": lambda m: (m.MultiResolutionSTFTLoss([64, 32], [16, 8], [64, 32]), (_audio(2, 1, 256), _audio(2, 1, 256, seed=6))),
    "RandomResolutionSTFTLoss.randomize_losses": lambda m: (m.RandomResolutionSTFTLoss(resolutions=2, max_fft_size=128).randomize_losses, ()),
    "RandomResolutionSTFTLoss.forward": lambda m: (m.RandomResolutionSTFTLoss(resolutions=2, max_fft_size=128), (_audio(2, 1, 256), _audio(2, 1, 256, seed=6))),
    "SumAndDifferenceSTFTLoss.forward": lambda m: (m.SumAndDifferenceSTFTLoss([64, 32], [16, 8], [64, 32]), (_audio(2, 2, 256), _audio(2, 2, 256, seed=6))),
})


# -- optimizers: facebookresearch/schedule_free, facebookresearch/madgrad -----------------------------


def _params_with_grads(seed=7):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))
    model(torch.randn(3, 4)).pow(2).sum().backward()
    return list(model.parameters())


def _stepped(optimizer, train=True):
    if train:
        optimizer.train()
    optimizer.step()  # the state exists: the case's step is a later one
    return optimizer


def _loss_closure(params):
    def closure():
        loss = sum((p ** 2).sum() for p in params)
        return loss
    return closure


cases("sf_adamw_schedulefree.py", {
    "AdamWScheduleFree.eval": lambda m: (_stepped(m.AdamWScheduleFree(_params_with_grads(), lr=0.01, warmup_steps=2)).eval, ()),
    "AdamWScheduleFree.train": lambda m: (m.AdamWScheduleFree(_params_with_grads(), lr=0.01).train, ()),
    "AdamWScheduleFree.step": lambda m: (_stepped(m.AdamWScheduleFree(_params_with_grads(), lr=0.01, warmup_steps=2)).step, ()),
})
cases("sf_sgd_schedulefree.py", {
    "SGDScheduleFree.eval": lambda m: (_stepped(m.SGDScheduleFree(_params_with_grads(), lr=0.01, warmup_steps=2)).eval, ()),
    "SGDScheduleFree.train": lambda m: (m.SGDScheduleFree(_params_with_grads(), lr=0.01).train, ()),
    "SGDScheduleFree.step": lambda m: (_stepped(m.SGDScheduleFree(_params_with_grads(), lr=0.01, warmup_steps=2)).step, ()),
})
cases("sf_radam_schedulefree.py", {
    "RAdamScheduleFree.eval": lambda m: (_stepped(m.RAdamScheduleFree(_params_with_grads(), lr=0.01)).eval, ()),
    "RAdamScheduleFree.train": lambda m: (m.RAdamScheduleFree(_params_with_grads(), lr=0.01).train, ()),
    "RAdamScheduleFree.step": lambda m: (_stepped(m.RAdamScheduleFree(_params_with_grads(), lr=0.01)).step, ()),
})


def _closure_step(m):
    params = _params_with_grads()
    optimizer = m.AdamWScheduleFreeClosure(params, lr=0.01, warmup_steps=2)
    return optimizer.step, (_loss_closure(params),)


cases("sf_adamw_schedulefree_closure.py", {
    "AdamWScheduleFreeClosure.step": _closure_step,
})


def _wrapped(m, train=True):
    params = _params_with_grads()
    wrapper = m.ScheduleFreeWrapper(torch.optim.SGD(params, lr=0.01, momentum=0.0), momentum=0.9)
    if train:
        wrapper.train()
        wrapper.step()
    return wrapper


cases("sf_wrap_schedulefree.py", {
    "ScheduleFreeWrapper.zero_grad": lambda m: (_wrapped(m).zero_grad, ()),
    "ScheduleFreeWrapper.eval": lambda m: (_wrapped(m).eval, ()),
    "ScheduleFreeWrapper.train": lambda m: (_wrapped(m, train=False).train, ()),
    "ScheduleFreeWrapper.swap": lambda m: (m.ScheduleFreeWrapper.swap, (randn(3), randn(3, seed=2))),
    "ScheduleFreeWrapper.step": lambda m: (_wrapped(m).step, ()),
    "ScheduleFreeWrapper.state_dict": lambda m: (_wrapped(m).state_dict, ()),
})
cases("madgrad_madgrad.py", {
    "MADGRAD.step": lambda m: (_stepped(m.MADGRAD(_params_with_grads(), lr=0.01), train=False).step, ()),
    "MADGRAD.supports_flat_params": lambda m: (m.MADGRAD.supports_flat_params.fget, (m.MADGRAD(_params_with_grads()),)),
})
cases("madgrad_mirror_madgrad.py", {
    "MirrorMADGRAD.step": lambda m: (_stepped(m.MirrorMADGRAD(_params_with_grads(), lr=0.01), train=False).step, ()),
})


# -- Tony-Y/pytorch_warmup (learning-rate warmup schedules) --------------------------------------------


def _adam(lr=0.01):
    return torch.optim.Adam(_params_with_grads(), lr=lr, betas=(0.9, 0.999))


cases("warmup_base.py", {
    "_check_optimizer": lambda m: (m._check_optimizer, (_adam(),)),
    "BaseWarmup.state_dict": lambda m: (m.LinearWarmup(_adam(), 10).state_dict, ()),
    "BaseWarmup.load_state_dict": lambda m: (m.LinearWarmup(_adam(), 10).load_state_dict, (m.LinearWarmup(_adam(), 10).state_dict(),)),
    "BaseWarmup.dampen": lambda m: (m.LinearWarmup(_adam(), 10).dampen, ()),
    "get_warmup_params": lambda m: (m.get_warmup_params, (10, 2)),
    "LinearWarmup.warmup_factor": lambda m: (m.LinearWarmup(_adam(), 10).warmup_factor, (3, 10)),
    "ExponentialWarmup.warmup_factor": lambda m: (m.ExponentialWarmup(_adam(), 10).warmup_factor, (3, 10)),
})
cases("warmup_radam.py", {
    "rho_inf_fn": lambda m: (m.rho_inf_fn, (0.999,)),
    "rho_fn": lambda m: (m.rho_fn, (10, 0.999, m.rho_inf_fn(0.999))),
    "get_offset": lambda m: (m.get_offset, (0.999, m.rho_inf_fn(0.999))),
    "RAdamWarmup.warmup_factor": lambda m: (m.RAdamWarmup(_adam()).warmup_factor, (10, 0.999, m.rho_inf_fn(0.999), m.get_offset(0.999, m.rho_inf_fn(0.999)))),
})


cases("warmup_untuned.py", {
    "UntunedLinearWarmup.warmup_factor": lambda m: (m.UntunedLinearWarmup(_adam()).warmup_factor, (3, 2000)),
    "UntunedExponentialWarmup.warmup_factor": lambda m: (m.UntunedExponentialWarmup(_adam()).warmup_factor, (3, 1000)),
})


# -- zh217/torch-dct (discrete cosine transforms through the FFT, and as linear layers) ----------------


cases("torch_dct.py", {
    "dct1": lambda m: (m.dct1, (randn(3, 8),)),
    "idct1": lambda m: (m.idct1, (randn(3, 8),)),
    "dct": lambda m: (m.dct, (randn(3, 8), "ortho")),
    "idct": lambda m: (m.idct, (randn(3, 8), "ortho")),
    "dct_2d": lambda m: (m.dct_2d, (randn(2, 6, 8), "ortho")),
    "idct_2d": lambda m: (m.idct_2d, (randn(2, 6, 8), "ortho")),
    "dct_3d": lambda m: (m.dct_3d, (randn(2, 4, 6, 8),)),
    "idct_3d": lambda m: (m.idct_3d, (randn(2, 4, 6, 8),)),
    "LinearDCT.reset_parameters": lambda m: (m.LinearDCT(8, "dct", norm="ortho").reset_parameters, ()),
    "apply_linear_2d": lambda m: (m.apply_linear_2d, (randn(2, 8, 8), m.LinearDCT(8, "dct", norm="ortho"))),
    "apply_linear_3d": lambda m: (m.apply_linear_3d, (randn(2, 8, 8, 8), m.LinearDCT(8, "idct"))),
})


# -- davidtvs/pytorch-lr-finder (the learning-rate range test: a training loop and a validation loop) --


def _regression_data(n=24, seed=8):
    torch.manual_seed(seed)
    x = torch.randn(n, 4)
    return torch.utils.data.TensorDataset(x, x @ torch.randn(4, 1) + 0.1 * torch.randn(n, 1))


def _loader(batch_size=8):
    return torch.utils.data.DataLoader(_regression_data(), batch_size=batch_size, shuffle=False)


def _finder(m):
    model = seeded(lambda: nn.Linear(4, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    return m.LRFinder(model, optimizer, nn.MSELoss(), device="cpu")


def _train_iter(m):
    return m.TrainDataLoaderIter(_loader())


def _lr_scheduler(m, cls):
    model = nn.Linear(4, 1)
    return cls(torch.optim.SGD(model.parameters(), lr=1e-3), end_lr=1.0, num_iter=10)


def _cacher(m):
    cacher = m.StateCacher(True)
    cacher.store("model", nn.Linear(4, 1).state_dict())
    return cacher


cases("lr_finder.py", {
    "DataLoaderIter.inputs_labels_from_batch": lambda m: (m.DataLoaderIter(_loader()).inputs_labels_from_batch, ([randn(8, 4), randn(8, 1)],)),
    "DataLoaderIter.__next__": lambda m: (m.DataLoaderIter(_loader()).__next__, ()),
    "TrainDataLoaderIter.__next__": lambda m: (_train_iter(m).__next__, ()),
    "ValDataLoaderIter.__iter__": lambda m: (m.ValDataLoaderIter(_loader()).__iter__, ()),
    "ValDataLoaderIter.__next__": lambda m: (m.ValDataLoaderIter(_loader()).__next__, ()),
    "LRFinder.reset": lambda m: (_finder(m).reset, ()),
    "LRFinder.range_test": lambda m: (_finder(m).range_test, (_loader(), None, None, 1.0, 4)),
    "LRFinder._set_learning_rate": lambda m: (_finder(m)._set_learning_rate, (0.01,)),
    "LRFinder._check_for_scheduler": lambda m: (_finder(m)._check_for_scheduler, ()),
    "LRFinder._train_batch": lambda m: (_finder(m)._train_batch, (_train_iter(m), 2)),
    "LRFinder._move_to_device": lambda m: (_finder(m)._move_to_device, (randn(8, 4), randn(8, 1))),
    "LRFinder._validate": lambda m: (_finder(m)._validate, (m.ValDataLoaderIter(_loader()),)),
    "LinearLR.get_lr": lambda m: (_lr_scheduler(m, m.LinearLR).get_lr, ()),
    "ExponentialLR.get_lr": lambda m: (_lr_scheduler(m, m.ExponentialLR).get_lr, ()),
    "StateCacher.store": lambda m: (m.StateCacher(True).store, ("model", nn.Linear(4, 1).state_dict())),
    "StateCacher.retrieve": lambda m: (_cacher(m).retrieve, ("model",)),
})


# -- subhadarship/kmeans_pytorch (k-means: the fit loop and prediction) --------------------------------


def _blobs(n=30, seed=9):
    torch.manual_seed(seed)
    centres = torch.tensor([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]])
    return centres[torch.arange(n) % 3] + 0.3 * torch.randn(n, 2)


cases("kmeans_pytorch.py", {
    "initialize": lambda m: (m.initialize, (_blobs(), 3)),
    "kmeans": lambda m: (m.kmeans, (_blobs(), 3)),
    "kmeans_predict": lambda m: (m.kmeans_predict, (_blobs(12, seed=10), _blobs(3, seed=0) * 0 + torch.tensor([[0.0, 0.0], [5.0, 5.0], [0.0, 6.0]]))),
    "pairwise_distance": lambda m: (m.pairwise_distance, (_blobs(), _blobs(3, seed=0))),
    "pairwise_cosine": lambda m: (m.pairwise_cosine, (_blobs(), _blobs(3, seed=0))),
})


# -- RElbers/info-nce-pytorch (the InfoNCE contrastive loss) -------------------------------------------


def _embeddings(n=6, d=8, seed=11):
    return randn(n, d, seed=seed)


cases("info_nce.py", {
    "InfoNCE.forward": lambda m: (m.InfoNCE(), (_embeddings(), _embeddings(seed=12), _embeddings(10, seed=13))),
    "info_nce": lambda m: (m.info_nce, (_embeddings(), _embeddings(seed=12))),
    "transpose": lambda m: (m.transpose, (_embeddings(),)),
    "normalize": lambda m: (m.normalize, (_embeddings(), None)),
})


# -- jeanfeydy/geomloss (optimal transport: Sinkhorn divergences, kernel norms, on point clouds and images)


def _cloud(n=12, d=2, seed=14):
    return rand(n, d, seed=seed)


def _weights(n=12):
    return torch.ones(n) / n


def _image(b=2, n=8, seed=15):
    density = rand(b, n, n, seed=seed) + 0.1
    return density / density.sum(dim=(1, 2), keepdim=True)


cases("geomloss_utils.py", {
    "scal": lambda m: (m.scal, (_weights(), _cloud()[:, 0])),
    "squared_distances": lambda m: (m.squared_distances, (_cloud(), _cloud(8, seed=16))),
    "distances": lambda m: (m.distances, (_cloud(), _cloud(8, seed=16))),
    "dimension": lambda m: (m.dimension, (_image()[:, None],)),
    "pyramid": lambda m: (m.pyramid, (_image()[:, None],)),
    "upsample": lambda m: (m.upsample, (_image()[:, None],)),
    "log_dens": lambda m: (m.log_dens, (_image() - 0.01,)),
})
cases("geomloss_sinkhorn_divergence.py", {
    "dampening": lambda m: (m.dampening, (0.1, 1.0)),
    "log_weights": lambda m: (m.log_weights, (_weights(),)),
    "UnbalancedWeight.forward": lambda m: (m.UnbalancedWeight(0.1, 1.0), (randn(12),)),
    "max_diameter": lambda m: (m.max_diameter, (_cloud(), _cloud(8, seed=16))),
    "epsilon_schedule": lambda m: (m.epsilon_schedule, (2, 1.5, 0.05, 0.5)),
    "scaling_parameters": lambda m: (m.scaling_parameters, (_cloud(), _cloud(8, seed=16), 2, 0.05, None, None, 0.5)),
    "sinkhorn_cost": lambda m: (m.sinkhorn_cost, (0.1, None, _weights(), _weights(8), randn(12), randn(8, seed=2), randn(8, seed=3), randn(12, seed=4))),
})
cases("geomloss_sinkhorn_samples.py", {
    "softmin_tensorized": lambda m: (m.softmin_tensorized, (0.1, rand(2, 12, 8), randn(2, 8))),
    "sinkhorn_tensorized": lambda m: (m.sinkhorn_tensorized, (_weights()[None], _cloud()[None], _weights(8)[None], _cloud(8, seed=16)[None])),
})
cases("geomloss_kernel_samples.py", {
    "double_grad": lambda m: (m.double_grad, (randn(4),)),
    "gaussian_kernel": lambda m: (m.gaussian_kernel, (_cloud(), _cloud(8, seed=16))),
    "laplacian_kernel": lambda m: (m.laplacian_kernel, (_cloud(), _cloud(8, seed=16))),
    "energy_kernel": lambda m: (m.energy_kernel, (_cloud(), _cloud(8, seed=16))),
    "kernel_loss": lambda m: (m.kernel_loss, (_weights()[None], _cloud()[None], _weights(8)[None], _cloud(8, seed=16)[None], 0.05, None, "gaussian")),
    "max_diameter": lambda m: (m.max_diameter, (_cloud(), _cloud(8, seed=16))),
})
cases("geomloss_samples_loss.py", {
    "SamplesLoss.forward": lambda m: (m.SamplesLoss("sinkhorn", blur=0.1), (_cloud(), _cloud(8, seed=16))),
    "SamplesLoss.process_args": lambda m: (m.SamplesLoss("energy").process_args, (_cloud(), _cloud(8, seed=16))),
    "SamplesLoss.generate_weights": lambda m: (m.SamplesLoss("energy").generate_weights, (_cloud(),)),
    "SamplesLoss.check_shapes": lambda m: (m.SamplesLoss("energy").check_shapes, (None, _weights(), _cloud(), None, _weights(8), _cloud(8, seed=16))),
})
cases("geomloss_sinkhorn_images.py", {
    "extrapolate": lambda m: (m.extrapolate, (randn(2, 1, 4, 4), randn(2, 1, 4, 4, seed=2), 0.1, 1, None, None, None)),
})
