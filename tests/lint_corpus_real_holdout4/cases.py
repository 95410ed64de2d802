"""The cases of the fourth held-out real-code corpus: functions of public projects none of the other
corpora draw on (qubvel-org/segmentation_models.pytorch, photosynthesis-team/piq, rtqichen/torchdiffeq,
facebookresearch/dadaptation, konstmish/prodigy, alxndrTL/mamba.py, dreamquark-ai/tabnet,
DeMoriarty/fast_pytorch_kmeans), each copied from the package the project publishes on PyPI,
labelled before any lint run and measured once before any change they led to. The format is
tests/lint_corpus_real/cases.py's: "file.py::Qualname" -> builder(module) -> (callable, args),
labelled by tests/lint_corpus/ground_truth.py.

This file is the harness, not corpus code: carve lints the other files of the folder. It stands in
for psutil (fast_pytorch_kmeans's memory probe) and for a Hugging Face tokenizer (mamba.py's
`generate`); optimizers get parameters whose `.grad` a backward pass filled; ODE solvers get a
small linear vector field.
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


# psutil is not installed: fast_pytorch_kmeans's util.py only asks it how much memory is free.
_psutil = types.ModuleType("psutil")
_psutil.virtual_memory = lambda: types.SimpleNamespace(available=8 * 2**30)
sys.modules.setdefault("psutil", _psutil)


# -- qubvel-org/segmentation_models.pytorch (losses, metrics) ---------------------------------------


def _seg_logits(classes=3, seed=1):
    return randn(2, classes, 8, 8, seed=seed)


def _seg_labels(classes=3, seed=2):
    torch.manual_seed(seed)
    return torch.randint(0, classes, (2, 8, 8))


def _seg_binary(seed=2):
    torch.manual_seed(seed)
    return torch.randint(0, 2, (2, 1, 8, 8)).float()


cases("smp_functional.py", {
    "to_tensor": lambda m: (m.to_tensor, ([1, 2, 3], torch.long)),
    "focal_loss_with_logits": lambda m: (m.focal_loss_with_logits, (randn(2, 8, 8), _seg_binary()[:, 0])),
    "softmax_focal_loss_with_logits": lambda m: (m.softmax_focal_loss_with_logits, (torch.log_softmax(_seg_logits(), 1), _seg_labels())),
    "soft_jaccard_score": lambda m: (m.soft_jaccard_score, (torch.sigmoid(_seg_logits()), _seg_binary().expand(2, 3, 8, 8), 0.0, 1e-7, (0, 2))),
    "soft_dice_score": lambda m: (m.soft_dice_score, (torch.sigmoid(_seg_logits()), _seg_binary().expand(2, 3, 8, 8), 0.0, 1e-7, (0, 2))),
    "soft_tversky_score": lambda m: (m.soft_tversky_score, (torch.sigmoid(_seg_logits()), _seg_binary().expand(2, 3, 8, 8), 0.5, 0.5, 0.0, 1e-7, (0, 2))),
    "wing_loss": lambda m: (m.wing_loss, (randn(4, 2), randn(4, 2, seed=2))),
    "label_smoothed_nll_loss": lambda m: (m.label_smoothed_nll_loss, (torch.log_softmax(randn(4, 5), 1), torch.tensor([0, 1, 4, 2]), 0.1)),
})
cases("smp_dice.py", {
    "DiceLoss.forward": lambda m: (m.DiceLoss("multiclass"), (_seg_logits(), _seg_labels())),
    "DiceLoss.aggregate_loss": lambda m: (m.DiceLoss("binary").aggregate_loss, (rand(3),)),
    "DiceLoss.compute_score": lambda m: (m.DiceLoss("binary").compute_score, (rand(2, 1, 64), _seg_binary().view(2, 1, 64), 0.0, 1e-7, (0, 2))),
})
cases("smp_focal.py", {
    "FocalLoss.forward": lambda m: (m.FocalLoss("multiclass"), (_seg_logits(), _seg_labels())),
})
cases("smp_jaccard.py", {
    "JaccardLoss.forward": lambda m: (m.JaccardLoss("multilabel"), (_seg_logits(), _seg_binary().expand(2, 3, 8, 8).contiguous())),
})
cases("smp_lovasz.py", {
    "_lovasz_grad": lambda m: (m._lovasz_grad, (torch.tensor([1.0, 1.0, 0.0, 1.0, 0.0]),)),
    "_lovasz_hinge": lambda m: (m._lovasz_hinge, (randn(2, 8, 8), _seg_binary()[:, 0], True)),
    "_lovasz_hinge_flat": lambda m: (m._lovasz_hinge_flat, (randn(64), _seg_binary().view(-1)[:64])),
    "_flatten_binary_scores": lambda m: (m._flatten_binary_scores, (randn(2, 8, 8), _seg_binary()[:, 0], 255)),
    "_lovasz_softmax": lambda m: (m._lovasz_softmax, (torch.softmax(_seg_logits(), 1), _seg_labels())),
    "_lovasz_softmax_flat": lambda m: (m._lovasz_softmax_flat, (torch.softmax(randn(64, 3), 1), _seg_labels().view(-1)[:64])),
    "_flatten_probas": lambda m: (m._flatten_probas, (torch.softmax(_seg_logits(), 1), _seg_labels())),
    "mean": lambda m: (m.mean, ([randn(1), randn(1, seed=2)],)),
    "LovaszLoss.forward": lambda m: (m.LovaszLoss("binary"), (randn(2, 1, 8, 8), _seg_binary())),
})
cases("smp_mcc.py", {
    "MCCLoss.forward": lambda m: (m.MCCLoss(), (torch.sigmoid(randn(2, 1, 8, 8)), _seg_binary())),
})
cases("smp_soft_bce.py", {
    "SoftBCEWithLogitsLoss.forward": lambda m: (m.SoftBCEWithLogitsLoss(smooth_factor=0.1), (randn(2, 1, 8, 8), _seg_binary())),
})
cases("smp_soft_ce.py", {
    "SoftCrossEntropyLoss.forward": lambda m: (m.SoftCrossEntropyLoss(smooth_factor=0.1), (_seg_logits(), _seg_labels())),
})
cases("smp_tversky.py", {
    "TverskyLoss.forward": lambda m: (m.TverskyLoss("multiclass", alpha=0.3, beta=0.7), (_seg_logits(), _seg_labels())),
    "TverskyLoss.aggregate_loss": lambda m: (m.TverskyLoss("binary", gamma=1.5).aggregate_loss, (rand(3),)),
    "TverskyLoss.compute_score": lambda m: (m.TverskyLoss("binary").compute_score, (rand(2, 1, 64), _seg_binary().view(2, 1, 64), 0.0, 1e-7, (0, 2))),
})


def _stats(m):
    return m.get_stats(_seg_labels(seed=3), _seg_labels(), mode="multiclass", num_classes=3)


def _metric(name, **kwargs):
    return lambda m: (getattr(m, name), _stats(m) + tuple(kwargs.values()))


cases("smp_metrics.py", {
    "get_stats": lambda m: (m.get_stats, (torch.sigmoid(_seg_logits()), _seg_binary().expand(2, 3, 8, 8).long(), "multilabel", None, 0.5)),
    "_get_stats_multiclass": lambda m: (m._get_stats_multiclass, (_seg_labels(seed=3), _seg_labels(), 3, None)),
    "_get_stats_multilabel": lambda m: (m._get_stats_multilabel, ((_seg_logits() > 0).long(), _seg_binary().expand(2, 3, 8, 8).long())),
    "_handle_zero_division": lambda m: (m._handle_zero_division, (torch.tensor([0.5, float("nan")]), 1.0)),
    "_compute_metric": lambda m: (m._compute_metric, (m._iou_score,) + _stats(m) + ("micro",)),
    "_fbeta_score": _metric("_fbeta_score"),
    "_iou_score": _metric("_iou_score"),
    "_balanced_accuracy": _metric("_balanced_accuracy"),
    "_positive_likelihood_ratio": _metric("_positive_likelihood_ratio"),
    "fbeta_score": lambda m: (m.fbeta_score, _stats(m) + (2.0, "macro")),
    "f1_score": lambda m: (m.f1_score, _stats(m) + ("micro-imagewise",)),
    "iou_score": lambda m: (m.iou_score, _stats(m) + ("micro",)),
    "accuracy": lambda m: (m.accuracy, _stats(m) + ("macro",)),
    "sensitivity": lambda m: (m.sensitivity, _stats(m) + ("weighted", [1.0, 2.0, 1.0])),
    "specificity": lambda m: (m.specificity, _stats(m) + ("macro-imagewise",)),
    "balanced_accuracy": lambda m: (m.balanced_accuracy, _stats(m) + ("micro",)),
    "positive_predictive_value": lambda m: (m.positive_predictive_value, _stats(m) + ("micro",)),
    "negative_predictive_value": lambda m: (m.negative_predictive_value, _stats(m) + (None,)),
    "false_negative_rate": lambda m: (m.false_negative_rate, _stats(m) + ("micro",)),
    "false_positive_rate": lambda m: (m.false_positive_rate, _stats(m) + ("micro",)),
    "false_discovery_rate": lambda m: (m.false_discovery_rate, _stats(m) + ("micro",)),
    "false_omission_rate": lambda m: (m.false_omission_rate, _stats(m) + ("micro",)),
    "positive_likelihood_ratio": lambda m: (m.positive_likelihood_ratio, _stats(m) + ("micro",)),
    "negative_likelihood_ratio": lambda m: (m.negative_likelihood_ratio, _stats(m) + ("micro",)),
})

# -- photosynthesis-team/piq ------------------------------------------------------------------------


def _images(n=2, c=3, size=32, seed=1):
    return rand(n, c, size, size, seed=seed)


cases("piq_common.py", {
    "_validate_input": lambda m: (m._validate_input, ([_images(), _images(seed=2)], (4, 4), (0, 1.0))),
    "_reduce": lambda m: (m._reduce, (rand(4), "mean")),
    "_parse_version": lambda m: (m._parse_version, (torch.__version__,)),
    "is_sha256_hash": lambda m: (m.is_sha256_hash, ("weights-0123456789abcdef.pt",)),
})
cases("piq_colour_conversion.py", {
    "rgb2lmn": lambda m: (m.rgb2lmn, (_images(),)),
    "rgb2xyz": lambda m: (m.rgb2xyz, (_images(),)),
    "xyz2lab": lambda m: (m.xyz2lab, (_images(),)),
    "rgb2lab": lambda m: (m.rgb2lab, (_images() * 255,)),
    "rgb2yiq": lambda m: (m.rgb2yiq, (_images(),)),
    "rgb2lhm": lambda m: (m.rgb2lhm, (_images(),)),
})
cases("piq_filters.py", {
    "haar_filter": lambda m: (m.haar_filter, (4,)),
    "hann_filter": lambda m: (m.hann_filter, (5,)),
    "gaussian_filter": lambda m: (m.gaussian_filter, (11, 1.5, None, torch.float32)),
    "scharr_filter": lambda m: (m.scharr_filter, ()),
    "binomial_filter1d": lambda m: (m.binomial_filter1d, (5,)),
    "average_filter2d": lambda m: (m.average_filter2d, (3,)),
})
cases("piq_functional_base.py", {
    "ifftshift": lambda m: (m.ifftshift, (randn(2, 1, 8, 8),)),
    "get_meshgrid": lambda m: (m.get_meshgrid, ((8, 8),)),
    "similarity_map": lambda m: (m.similarity_map, (rand(2, 1, 8, 8), rand(2, 1, 8, 8, seed=2), 0.01)),
    "gradient_map": lambda m: (m.gradient_map, (rand(2, 1, 16, 16), torch.stack([torch.ones(3, 3), torch.ones(3, 3).T]).unsqueeze(1) / 9)),
    "pow_for_complex": lambda m: (m.pow_for_complex, (randn(2, 4, 4, 2), 2.0)),
    "crop_patches": lambda m: (m.crop_patches, (_images(size=64), 32, 16)),
})
cases("piq_layers.py", {
    "L2Pool2d.forward": lambda m: (m.L2Pool2d(), (_images(),)),
})
cases("piq_psnr.py", {
    "psnr": lambda m: (m.psnr, (_images(), _images(seed=2))),
})
cases("piq_ssim.py", {
    "ssim": lambda m: (m.ssim, (_images(), _images(seed=2))),
    "SSIMLoss.forward": lambda m: (m.SSIMLoss(), (_images(), _images(seed=2))),
    "_ssim_per_channel": lambda m: (m._ssim_per_channel, (_images(), _images(seed=2), m.gaussian_filter(11, 1.5, dtype=torch.float32).repeat(3, 1, 1, 1))),
})
cases("piq_ms_ssim.py", {
    "multi_scale_ssim": lambda m: (m.multi_scale_ssim, (_images(size=176), _images(size=176, seed=2))),
    "MultiScaleSSIMLoss.forward": lambda m: (m.MultiScaleSSIMLoss(), (_images(size=176), _images(size=176, seed=2))),
})
cases("piq_tv.py", {
    "total_variation": lambda m: (m.total_variation, (_images(),)),
    "TVLoss.forward": lambda m: (m.TVLoss(), (_images(),)),
})
cases("piq_gmsd.py", {
    "gmsd": lambda m: (m.gmsd, (_images(), _images(seed=2))),
    "_gmsd": lambda m: (m._gmsd, (_images(c=1), _images(c=1, seed=2))),
    "GMSDLoss.forward": lambda m: (m.GMSDLoss(), (_images(), _images(seed=2))),
    "multi_scale_gmsd": lambda m: (m.multi_scale_gmsd, (_images(size=64), _images(size=64, seed=2))),
    "MultiScaleGMSDLoss.forward": lambda m: (m.MultiScaleGMSDLoss(), (_images(size=64), _images(size=64, seed=2))),
})
cases("piq_haarpsi.py", {
    "haarpsi": lambda m: (m.haarpsi, (_images(), _images(seed=2))),
    "HaarPSILoss.forward": lambda m: (m.HaarPSILoss(), (_images(), _images(seed=2))),
})
cases("piq_vif.py", {
    "vif_p": lambda m: (m.vif_p, (_images(size=48), _images(size=48, seed=2))),
    "VIFLoss.forward": lambda m: (m.VIFLoss(), (_images(size=48), _images(size=48, seed=2))),
})
cases("piq_dss.py", {
    "dss": lambda m: (m.dss, (_images(), _images(seed=2))),
    "_subband_similarity": lambda m: (m._subband_similarity, (rand(2, 1, 4, 4), rand(2, 1, 4, 4, seed=2), True)),
    "_dct_matrix": lambda m: (m._dct_matrix, (8,)),
    "_dct_decomp": lambda m: (m._dct_decomp, (rand(2, 1, 32, 32), 8)),
    "DSSLoss.forward": lambda m: (m.DSSLoss(), (_images(), _images(seed=2))),
})

# -- rtqichen/torchdiffeq ---------------------------------------------------------------------------


class _Linear(nn.Module):
    """dy/dt = A y: the vector field of the solver cases."""

    def __init__(self):
        super().__init__()
        self.A = nn.Parameter(torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]))

    def forward(self, t, y):
        return y @ self.A


def _y0():
    return torch.tensor([[2.0, 0.0]])


def _times():
    return torch.linspace(0.0, 1.0, 5)


def _prepared(method, t=None, **options):
    """The solver odeint would build: the vector field wrapped by _check_inputs, which adds its callbacks."""
    import tdq_dopri5
    import tdq_fixed_grid
    import tdq_misc

    solvers = {"dopri5": tdq_dopri5.Dopri5Solver, "euler": tdq_fixed_grid.Euler, "midpoint": tdq_fixed_grid.Midpoint,
               "rk4": tdq_fixed_grid.RK4, "heun2": tdq_fixed_grid.Heun2, "heun3": tdq_fixed_grid.Heun3,
               "implicit_adams": __import__("tdq_fixed_adams").AdamsBashforthMoulton}
    _, func, y0, _, rtol, atol, method, options, _, _ = tdq_misc._check_inputs(
        seeded(_Linear), _y0(), _times() if t is None else t, 1e-3, 1e-4, method, options or None, None, solvers)
    return solvers[method](func=func, y0=y0, rtol=rtol, atol=atol, **options)


def _rk_solver(m):
    return _prepared("dopri5")


def _rk_ready(m):
    solver = _rk_solver(m)
    solver._before_integrate(_times())
    return solver


_FIXED = {"Euler": "euler", "Midpoint": "midpoint", "RK4": "rk4", "Heun2": "heun2", "Heun3": "heun3",
          "AdamsBashforthMoulton": "implicit_adams"}


def _fixed_solver(m, class_name, **kwargs):
    return _prepared(_FIXED[class_name], step_size=0.25, **kwargs)


def _field():
    return _rk_solver(None).func


cases("tdq_misc.py", {
    "_linf_norm": lambda m: (m._linf_norm, (randn(4),)),
    "_rms_norm": lambda m: (m._rms_norm, (randn(4),)),
    "_mixed_norm": lambda m: (m._mixed_norm, ((randn(4), randn(3, seed=2)),)),
    "_select_initial_step": lambda m: (m._select_initial_step, (_field(), torch.tensor(0.0), _y0(), 5, 1e-3, 1e-4, m._rms_norm)),
    "_compute_error_ratio": lambda m: (m._compute_error_ratio, (randn(1, 2) * 1e-3, 1e-3, 1e-4, _y0(), _y0() * 0.9, m._rms_norm)),
    "_optimal_step_size": lambda m: (m._optimal_step_size, (torch.tensor(0.1), torch.tensor(0.5), torch.tensor(0.9), torch.tensor(10.0), torch.tensor(0.2), 5)),
    "_decreasing": lambda m: (m._decreasing, (_times(),)),
    "_assert_increasing": lambda m: (m._assert_increasing, ("t", _times())),
    "_tuple_tol": lambda m: (m._tuple_tol, ("rtol", (1e-3, 1e-4), [torch.Size([2]), torch.Size([3])])),
    "_flat_to_shape": lambda m: (m._flat_to_shape, (randn(5, 5), (5,), [torch.Size([2]), torch.Size([3])])),
    "_TupleFunc.forward": lambda m: (m._TupleFunc(lambda t, y: (y[0] * 2, y[1] - 1), [torch.Size([2]), torch.Size([3])]), (torch.tensor(0.0), randn(5))),
    "_ReverseFunc.forward": lambda m: (m._ReverseFunc(seeded(_Linear), mul=-1.0), (torch.tensor(0.5), _y0())),
    "_PerturbFunc.forward": lambda m: (_field(), (torch.tensor(0.5), _y0())),
    "_check_inputs": lambda m: (m._check_inputs, (seeded(_Linear), _y0(), _times(), 1e-3, 1e-4, "dopri5", None, None, {"dopri5": __import__("tdq_dopri5").Dopri5Solver})),
    "_nextafter": lambda m: (m._nextafter, (torch.tensor(1.0), torch.tensor(2.0))),
    "_check_timelike": lambda m: (m._check_timelike, ("t", _times(), True)),
})
cases("tdq_interp.py", {
    "_interp_fit": lambda m: (m._interp_fit, (_y0(), _y0() * 0.9, _y0() * 0.95, -_y0(), -_y0() * 0.9, torch.tensor(0.1))),
    "_interp_evaluate": lambda m: (m._interp_evaluate, ([randn(1, 2, seed=s) for s in range(5)], torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.05))),
})
cases("tdq_event_handling.py", {
    "find_event": lambda m: (m.find_event, (lambda t: _y0() * (1 - t), torch.tensor(1.0), torch.tensor(0.0), torch.tensor(2.0),
                                            lambda t, y: y[..., 0] - 1.0, 1e-4)),
})
cases("tdq_rk_common.py", {
    "_runge_kutta_step": lambda m: (m._runge_kutta_step, (_field(), _y0(), _field()(torch.tensor(0.0), _y0()), torch.tensor(0.0),
                                                          torch.tensor(0.1), torch.tensor(0.1), _rk_solver(m).tableau)),
    "rk4_step_func": lambda m: (m.rk4_step_func, (_field(), torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.1), _y0())),
    "rk4_alt_step_func": lambda m: (m.rk4_alt_step_func, (_field(), torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.1), _y0())),
    "rk3_step_func": lambda m: (m.rk3_step_func, (_field(), torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.1), _y0(),
                                                  [[0.0, 0.0, 0.0, 0.0], [1 / 3, 1 / 3, 0.0, 0.0], [2 / 3, 0.0, 2 / 3, 0.0], [0.0, 1 / 4, 0.0, 3 / 4]])),
    "rk2_step_func": lambda m: (m.rk2_step_func, (_field(), torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.1), _y0(),
                                                  [[0.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.5, 0.5]])),
    "RKAdaptiveStepsizeODESolver._before_integrate": lambda m: (_rk_solver(__import__("tdq_dopri5"))._before_integrate, (_times(),)),
    "RKAdaptiveStepsizeODESolver._advance": lambda m: (_rk_ready(__import__("tdq_dopri5"))._advance, (torch.tensor(0.5),)),
    "RKAdaptiveStepsizeODESolver._adaptive_step": lambda m: (lambda s: (s._adaptive_step, (s.rk_state,)))(_rk_ready(__import__("tdq_dopri5"))),
    "RKAdaptiveStepsizeODESolver._interp_fit": lambda m: (_rk_ready(__import__("tdq_dopri5"))._interp_fit,
                                                          (_y0(), _y0() * 0.9, randn(1, 2, 7), torch.tensor(0.1))),
    "_sort_tvals": lambda m: (m._sort_tvals, (torch.tensor([0.5, 0.0, 1.0, 0.25]), torch.tensor(0.2))),
})
cases("tdq_solvers.py", {
    "AdaptiveStepsizeODESolver.integrate": lambda m: (_rk_solver(__import__("tdq_dopri5")).integrate, (_times(),)),
    "AdaptiveStepsizeEventODESolver.integrate_until_event": lambda m: (
        _rk_solver(__import__("tdq_dopri5")).integrate_until_event, (torch.tensor(0.0), lambda t, y: y[..., 0] - 0.5)),
    # the static method itself, which builds the grid constructor (first labelled on the closure it
    # returns, whose lines the case's span leaves out: a harness defect the first measurement showed)
    "FixedGridODESolver._grid_constructor_from_step_size": lambda m: (
        m.FixedGridODESolver._grid_constructor_from_step_size, (0.25,)),
    "FixedGridODESolver.integrate": lambda m: (_fixed_solver(__import__("tdq_fixed_grid"), "RK4").integrate, (_times(),)),
    "FixedGridODESolver.integrate_until_event": lambda m: (
        _fixed_solver(__import__("tdq_fixed_grid"), "Euler").integrate_until_event, (torch.tensor(0.0), lambda t, y: y[..., 0] - 0.5)),
    "FixedGridODESolver._cubic_hermite_interp": lambda m: (_fixed_solver(__import__("tdq_fixed_grid"), "Euler")._cubic_hermite_interp,
                                                           (torch.tensor(0.0), _y0(), -_y0(), torch.tensor(0.1), _y0() * 0.9, -_y0() * 0.9, torch.tensor(0.05))),
    "FixedGridODESolver._linear_interp": lambda m: (_fixed_solver(__import__("tdq_fixed_grid"), "Euler")._linear_interp,
                                                    (torch.tensor(0.0), torch.tensor(0.1), _y0(), _y0() * 0.9, torch.tensor(0.05))),
})
_step_args = lambda: (_field(), torch.tensor(0.0), torch.tensor(0.1), torch.tensor(0.1), _y0())  # noqa: E731
cases("tdq_fixed_grid.py", {
    f"{name}._step_func": (lambda name: lambda m: (_fixed_solver(m, name)._step_func, _step_args()))(name)
    for name in ("Euler", "Midpoint", "RK4", "Heun3", "Heun2")
})


def _adams(m):
    solver = _fixed_solver(m, "AdamsBashforthMoulton")
    solver._step_func(*_step_args())  # one step, so the history has a derivative
    return solver


cases("tdq_fixed_adams.py", {
    "_dot_product": lambda m: (m._dot_product, ([0.5, 0.25, 0.25], [randn(1, 2, seed=s) for s in range(3)])),
    "AdamsBashforthMoulton._update_history": lambda m: (_adams(m)._update_history, (torch.tensor(0.2), -_y0())),
    "AdamsBashforthMoulton._has_converged": lambda m: (_adams(m)._has_converged, (_y0(), _y0() * 0.999)),
    "AdamsBashforthMoulton._step_func": lambda m: (_adams(m)._step_func, (_field(), torch.tensor(0.1), torch.tensor(0.1), torch.tensor(0.2), _y0() * 0.9)),
})

# -- facebookresearch/dadaptation, konstmish/prodigy ------------------------------------------------


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


cases("dadapt_adam.py", {"DAdaptAdam.step": _optimizer_step("DAdaptAdam")})
cases("dadapt_sgd.py", {"DAdaptSGD.step": _optimizer_step("DAdaptSGD")})
cases("dadapt_adagrad.py", {"DAdaptAdaGrad.step": _optimizer_step("DAdaptAdaGrad")})
cases("dadapt_lion.py", {"DAdaptLion.step": _optimizer_step("DAdaptLion")})
cases("dadapt_adan.py", {
    "to_real": lambda m: (m.to_real, (randn(3),)),
    "DAdaptAdan.step": _optimizer_step("DAdaptAdan"),
    "DAdaptAdan.restart_opt": lambda m: (lambda opt: (opt.restart_opt, ()))(m.DAdaptAdan(seeded(lambda: nn.Linear(4, 2)).parameters())),
})
cases("prodigy.py", {
    "Prodigy.step": _optimizer_step("Prodigy"),
})

# -- alxndrTL/mamba.py ------------------------------------------------------------------------------


def _mamba_config(m, **kwargs):
    return m.MambaConfig(d_model=16, n_layers=2, d_state=4, **kwargs)


def _mamba_tokens(seed=3):
    torch.manual_seed(seed)
    return torch.randint(0, 32, (2, 6))


def _block(m, **kwargs):
    return seeded(lambda: m.MambaBlock(_mamba_config(m, **kwargs)))


def _block_cache(m):
    config = _mamba_config(m)
    return (torch.zeros(2, config.d_inner, config.d_state), torch.zeros(2, config.d_inner, config.d_conv - 1))


def _scan_inputs(m):
    config = _mamba_config(m)
    b, l, ed, n = 2, 6, config.d_inner, config.d_state
    return (randn(b, l, ed), torch.nn.functional.softplus(randn(b, l, ed, seed=2)), -torch.exp(randn(ed, n, seed=3)),
            randn(b, l, n, seed=4), randn(b, l, n, seed=5), randn(ed, seed=6))


cases("mambapy_pscan.py", {
    "npo2": lambda m: (m.npo2, (6,)),
    "pad_npo2": lambda m: (m.pad_npo2, (randn(2, 6, 4, 3),)),
    "PScan.pscan": lambda m: (m.PScan.pscan, (rand(2, 4, 8, 3), randn(2, 4, 8, 3))),
    "PScan.pscan_rev": lambda m: (m.PScan.pscan_rev, (rand(2, 4, 8, 3), randn(2, 4, 8, 3))),
})
cases("mambapy_mamba.py", {
    "Mamba.forward": lambda m: (seeded(lambda: m.Mamba(_mamba_config(m))), (randn(2, 6, 16),)),
    "Mamba.step": lambda m: (seeded(lambda: m.Mamba(_mamba_config(m))).step, (randn(2, 16), [_block_cache(m), _block_cache(m)])),
    "ResidualBlock.forward": lambda m: (seeded(lambda: m.ResidualBlock(_mamba_config(m))), (randn(2, 6, 16),)),
    "ResidualBlock.step": lambda m: (seeded(lambda: m.ResidualBlock(_mamba_config(m))).step, (randn(2, 16), _block_cache(m))),
    "MambaBlock._apply_layernorms": lambda m: (_block(m, inner_layernorms=True)._apply_layernorms, (randn(2, 6, 1), randn(2, 6, 4), randn(2, 6, 4))),
    "MambaBlock.forward": lambda m: (_block(m), (randn(2, 6, 16),)),
    "MambaBlock.ssm": lambda m: (_block(m).ssm, (randn(2, 6, 32), randn(2, 6, 32, seed=2))),
    "MambaBlock.selective_scan": lambda m: (_block(m).selective_scan, _scan_inputs(m)),
    "MambaBlock.selective_scan_seq": lambda m: (_block(m).selective_scan_seq, _scan_inputs(m)),
    "MambaBlock.step": lambda m: (_block(m).step, (randn(2, 16), _block_cache(m))),
    "MambaBlock.ssm_step": lambda m: (_block(m).ssm_step, (randn(2, 32), torch.zeros(2, 32, 4))),
    "RMSNorm.forward": lambda m: (seeded(lambda: m.RMSNorm(16)), (randn(2, 6, 16),)),
})


class _Tokenizer:
    """A stand-in for the Hugging Face tokenizer `generate` is given: one token per character."""

    def __call__(self, text, return_tensors=None):
        return types.SimpleNamespace(input_ids=torch.tensor([[ord(c) % 32 for c in text]]))

    def decode(self, ids):
        return "".join(chr(97 + i % 26) for i in ids)


def _lm(m):
    return seeded(lambda: m.LM(_mamba_config(m), vocab_size=32))


cases("mambapy_lm.py", {
    "LM.forward": lambda m: (_lm(m), (_mamba_tokens(),)),
    "LM.step": lambda m: (lambda lm: (lm.step, (_mamba_tokens()[:, 0], [(None, torch.zeros(2, 32, 3)) for _ in range(2)])))(_lm(m)),
    "LM.generate": lambda m: (_lm(m).generate, (_Tokenizer(), "abc", 4, 1, True, 5)),
    "LM._init_weights": lambda m: (_lm(m)._init_weights, (nn.Linear(4, 4),)),
    "LM.configure_optimizers": lambda m: (_lm(m).configure_optimizers, (0.1, 1e-3, (0.9, 0.95), "cpu")),
})

# -- dreamquark-ai/tabnet ---------------------------------------------------------------------------


def _tabular(n=16, d=6, seed=4):
    return randn(n, d, seed=seed)


def _tabnet_kwargs():
    return dict(virtual_batch_size=8, group_attention_matrix=torch.eye(6))


cases("tabnet_sparsemax.py", {
    "_make_ix_like": lambda m: (m._make_ix_like, (randn(3, 5), 1)),
    "SparsemaxFunction._threshold_and_support": lambda m: (m.SparsemaxFunction._threshold_and_support, (randn(3, 5),)),
    "Sparsemax.forward": lambda m: (m.Sparsemax(dim=-1), (randn(3, 5),)),
    "Entmax15Function._threshold_and_support": lambda m: (m.Entmax15Function._threshold_and_support, (randn(3, 5) / 2,)),
    "Entmax15.forward": lambda m: (m.Entmax15(dim=-1), (randn(3, 5),)),
    "Entmoid15._forward": lambda m: (m.Entmoid15._forward, (randn(3, 5),)),
    "Entmoid15._backward": lambda m: (m.Entmoid15._backward, (rand(3, 5), randn(3, 5))),
})


def _group_matrix():
    return torch.eye(6)


cases("tabnet_network.py", {
    "initialize_non_glu": lambda m: (m.initialize_non_glu, (nn.Linear(6, 4), 6, 4)),
    "initialize_glu": lambda m: (m.initialize_glu, (nn.Linear(6, 8), 6, 4)),
    "GBN.forward": lambda m: (seeded(lambda: m.GBN(6, virtual_batch_size=4)), (_tabular(),)),
    "TabNetEncoder.forward": lambda m: (seeded(lambda: m.TabNetEncoder(6, 4, **_tabnet_kwargs())), (_tabular(),)),
    "TabNetEncoder.forward_masks": lambda m: (seeded(lambda: m.TabNetEncoder(6, 4, **_tabnet_kwargs())).forward_masks, (_tabular(),)),
    "TabNetDecoder.forward": lambda m: (seeded(lambda: m.TabNetDecoder(6, n_d=8, n_steps=3, virtual_batch_size=8)),
                                       ([randn(16, 8, seed=s) for s in range(3)],)),
    "TabNetPretraining.forward": lambda m: (seeded(lambda: m.TabNetPretraining(6, **_tabnet_kwargs())), (_tabular(),)),
    "TabNetPretraining.forward_masks": lambda m: (seeded(lambda: m.TabNetPretraining(6, **_tabnet_kwargs())).forward_masks, (_tabular(),)),
    "TabNetNoEmbeddings.forward": lambda m: (seeded(lambda: m.TabNetNoEmbeddings(6, 3, **_tabnet_kwargs())), (_tabular(),)),
    "TabNet.forward": lambda m: (seeded(lambda: m.TabNet(6, 3, cat_idxs=[0], cat_dims=[4], cat_emb_dim=[2], **_tabnet_kwargs())),
                                 (torch.cat([torch.randint(0, 4, (16, 1)).float(), _tabular()[:, 1:]], 1),)),
    "TabNet.forward_masks": lambda m: (seeded(lambda: m.TabNet(6, 3, **_tabnet_kwargs())).forward_masks, (_tabular(),)),
    "AttentiveTransformer.forward": lambda m: (seeded(lambda: m.AttentiveTransformer(8, 6, _group_matrix(), virtual_batch_size=8)),
                                              (torch.ones(16, 6), randn(16, 8))),
    "FeatTransformer.forward": lambda m: (seeded(lambda: m.FeatTransformer(6, 16, None, 2, virtual_batch_size=8)), (_tabular(),)),
    "GLU_Block.forward": lambda m: (seeded(lambda: m.GLU_Block(6, 8, n_glu=2, first=True, virtual_batch_size=8)), (_tabular(),)),
    "GLU_Layer.forward": lambda m: (seeded(lambda: m.GLU_Layer(6, 8, virtual_batch_size=8)), (_tabular(),)),
    "EmbeddingGenerator.forward": lambda m: (seeded(lambda: m.EmbeddingGenerator(6, [4], [0], [2], _group_matrix())),
                                            (torch.cat([torch.randint(0, 4, (16, 1)).float(), _tabular()[:, 1:]], 1),)),
    "RandomObfuscator.forward": lambda m: (m.RandomObfuscator(0.2, _group_matrix()), (_tabular(),)),
})

# -- DeMoriarty/fast_pytorch_kmeans -----------------------------------------------------------------


def _points(n=64, d=4, seed=5):
    return randn(n, d, seed=seed)


def _fitted_kmeans(m, **kwargs):
    km = m.KMeans(n_clusters=3, max_iter=5, **kwargs)
    km.fit(_points())
    return km


cases("kmeans_init_methods.py", {
    "_kpp": lambda m: (m._kpp, (_points(), 3)),
    "_krandinit": lambda m: (m._krandinit, (_points(), 3)),
    "_kpoints": lambda m: (m._kpoints, (_points(), 3)),
})
cases("kmeans_util.py", {
    "check_available_ram": lambda m: (m.check_available_ram, ("cpu",)),
    "will_it_fit": lambda m: (m.will_it_fit, (1024, "cpu")),
    "find_optimal_splits": lambda m: (m.find_optimal_splits, (64, lambda n: n * 1024, "cpu")),
})
cases("kmeans.py", {
    "KMeans.cos_sim": lambda m: (m.KMeans.cos_sim, (_points(), _points(3, seed=6))),
    "KMeans.euc_sim": lambda m: (m.KMeans.euc_sim, (_points(), _points(3, seed=6))),
    "KMeans.max_sim": lambda m: (m.KMeans(n_clusters=3).max_sim, (_points(), _points(3, seed=6))),
    "KMeans.fit_predict": lambda m: (m.KMeans(n_clusters=3, max_iter=5).fit_predict, (_points(),)),
    "KMeans.predict": lambda m: (_fitted_kmeans(m).predict, (_points(8, seed=7),)),
    "KMeans.fit": lambda m: (m.KMeans(n_clusters=3, max_iter=5).fit, (_points(),)),
})


def _fitted_multi(m):
    km = m.MultiKMeans(n_clusters=3, max_iter=5)
    km.fit(randn(2, 32, 4, seed=5))
    return km


cases("kmeans_multi.py", {
    "MultiKMeans.cos_sim": lambda m: (m.MultiKMeans.cos_sim, (randn(2, 32, 4), randn(2, 3, 4, seed=6))),
    "MultiKMeans.euc_sim": lambda m: (m.MultiKMeans.euc_sim, (randn(2, 32, 4), randn(2, 3, 4, seed=6))),
    "MultiKMeans.max_sim": lambda m: (m.MultiKMeans(n_clusters=3).max_sim, (randn(2, 32, 4), randn(2, 3, 4, seed=6))),
    "MultiKMeans.fit_predict": lambda m: (m.MultiKMeans(n_clusters=3, max_iter=5).fit_predict, (randn(2, 32, 4, seed=5),)),
    "MultiKMeans.predict": lambda m: (_fitted_multi(m).predict, (randn(2, 8, 4, seed=7),)),
})
