"""The checks the fifth held-out real-code corpus (tests/lint_corpus_real_holdout5: julius, entmax, torch-ema, auraloss,
schedulefree, pytorch-warmup, torch-dct, pytorch-lr-finder, kmeans-pytorch, madgrad, info-nce-pytorch, geomloss) led to,
each on a small example, each behaviour first checked with `torch._dynamo.explain` on torch 2.13 (docs/lint.md)."""

import textwrap

import torch
from torch import nn

from carve.rewriters.lint import LintConfig, lint_source

HEADER = "import math\nimport torch\nfrom torch import nn\nimport torch.nn.functional as F\n"


def codes(text, **config):
    source = HEADER + textwrap.dedent(text).lstrip("\n")
    result = lint_source(source, "m.py", LintConfig(**config))
    assert result.error is None, result.error
    return [(f.code, f.line - HEADER.count("\n")) for f in result.findings]


def explain(function, *args):
    torch._dynamo.reset()
    output = torch._dynamo.explain(function)(*args)
    return output.graph_count, output.graph_break_count


# -- a path that only raises is not reported (rewriters/checks/error_paths.py) --------------------


def _distances(x, y):
    if x.dim() == 2:
        return x @ y.T
    else:
        print("x.shape : ", x.shape)
        raise ValueError("Incorrect number of dimensions")


def test_explain_counts_no_break_on_a_path_that_only_raises():
    assert explain(_distances, torch.randn(3, 2), torch.randn(4, 2)) == (1, 0)


def test_a_break_in_a_block_that_ends_in_raise_is_not_reported_nor_its_callers():
    # geomloss's squared_distances: a print before `raise ValueError` when the shape is wrong
    assert codes("""
        def squared_distances(x, y):
            if x.dim() == 2:
                return x @ y.T
            else:
                print("x.shape : ", x.shape)
                raise ValueError("Incorrect number of dimensions")

        @torch.compile
        def gaussian_kernel(x, y):
            return (-squared_distances(x, y) / 2).exp()
    """) == []


def test_a_break_before_a_raise_inside_a_try_is_still_reported():
    # the exception may be caught: the function goes on after the break
    assert codes("""
        @torch.compile
        def f(x):
            y = x * 2
            try:
                if y.dim() == 2:
                    print("bad", y.shape)
                    raise ValueError("bad")
            except ValueError:
                pass
            return y + 1
    """) == [("CRV007", 4), ("CRV003", 6)]


def test_a_break_in_a_block_that_does_not_end_in_raise_is_reported():
    assert codes("""
        @torch.compile
        def f(x):
            y = x * 2
            if y.dim() == 2:
                print("two dims", y.shape)
            return y + 1
    """) == [("CRV003", 5)]


# -- a class built in the compiled function runs its __init__ and, when called, its forward ------


class _Counted(nn.Module):
    def __init__(self, t):
        super().__init__()
        self.n = int(t.sum().item())

    def forward(self, x):
        return x * self.n


def _build_and_call(x):
    y = x + 1
    return _Counted(x).to(x)(y)


def test_explain_counts_a_break_in_the_init_of_a_module_built_in_the_frame():
    assert explain(_build_and_call, torch.ones(3)) == (2, 1)


def test_a_break_in_the_init_of_a_class_built_in_a_compiled_function_is_crv016():
    # julius's split_bands: SplitBands(...).to(signal)(signal), whose __init__ calls mel_frequencies (.item())
    assert codes("""
        def mel_frequencies(n, low, high):
            return torch.linspace(low, high, n).item()

        class SplitBands(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.cutoff = mel_frequencies(n, 0, 1)

            def forward(self, x):
                return x * self.cutoff

        @torch.compile
        def split_bands(signal, n):
            return SplitBands(n).to(signal)(signal)
    """) == [("CRV004", 2), ("CRV016", 7), ("CRV016", 14)]


def test_a_module_built_and_called_in_one_expression_runs_its_forward():
    # julius's resample_frac: ResampleFrac(old, new).to(x)(x), whose forward slices with a tensor value
    assert codes("""
        class Resample(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k

            def forward(self, x):
                print(x.shape)
                return x * self.k

        @torch.compile
        def resample(x, k):
            y = x + 1
            return Resample(k).to(x)(y)
    """) == [("CRV003", 7), ("CRV016", 13)]


def test_a_class_whose_init_does_not_break_is_read_as_before():
    assert codes("""
        class Scale(nn.Module):
            def __init__(self, k):
                super().__init__()
                if k < 0:
                    raise ValueError(f"k must be positive, got {k}")
                self.k = k

            def forward(self, x):
                return x * self.k

        @torch.compile
        def scale(x, k):
            return Scale(k)(x)
    """) == []


# -- CRV037: an assignment to a tensor's requires_grad -------------------------------------------


_LAYER = nn.Linear(3, 3)


def _set_requires_grad(x):
    y = x * 2
    _LAYER.weight.requires_grad = False
    return y + 1


def _requires_grad_method(x):
    y = x * 2
    _LAYER.weight.requires_grad_(False)
    return y + 1


def test_explain_breaks_on_setting_requires_grad_and_not_on_the_method():
    assert explain(_set_requires_grad, torch.randn(3)) == (2, 1)
    assert explain(_requires_grad_method, torch.randn(3)) == (1, 0)


def test_an_assignment_to_requires_grad_is_crv037_and_the_method_is_not():
    # torch-dct's LinearDCT.reset_parameters: `self.weight.requires_grad = False`
    assert codes("""
        class LinearDCT(nn.Linear):
            @torch.compile
            def reset_parameters(self):
                self.weight.data = torch.eye(self.in_features)
                self.weight.requires_grad = False

        @torch.compile
        def unfreeze(x, layer):
            y = x * 2
            layer.weight.requires_grad_(False)
            return y
    """) == [("CRV037", 5)]
