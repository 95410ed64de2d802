"""The checks the fourth held-out real-code corpus (tests/lint_corpus_real_holdout4: segmentation-models-pytorch,
piq, torchdiffeq, dadaptation, prodigy, mamba.py, tabnet, fast-pytorch-kmeans) led to, each on a small example,
each behaviour first checked with `torch._dynamo.explain` on torch 2.13 (docs/lint.md)."""

import os
import textwrap

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.lint.modules import ProjectLayout
from carve.rewriters.lint.project import lint_project

HEADER = "import functools\nimport torch\nfrom torch import nn\nimport torch.nn.functional as F\n"


def codes(text, **config):
    source = HEADER + textwrap.dedent(text).lstrip("\n")
    result = lint_source(source, "m.py", LintConfig(**config))
    assert result.error is None, result.error
    return [(f.code, f.line - HEADER.count("\n")) for f in result.findings]


# -- CRV005: an assert of a tensor with a message built at run time -----------------------------


def test_an_assert_of_a_tensor_with_a_built_message_is_crv005_and_with_a_literal_is_not():
    # explain: `assert (y > -100).all()` and `assert ..., "literal"` -> one graph (torch._assert_async);
    # an f-string, `.format()`, `%` or `+` message -> "generic_jump TensorVariable()", two graphs
    assert codes("""
        @torch.compile
        def f(x, name):
            y = x * 2
            assert (y > -100).all()
            assert (y > -100).all(), "must be big"
            assert (y > -100).all(), "must " "be big"
            assert (y > -100).all(), f"must be big"
            assert -100 <= y.min(), f"got {y.min()}"
            assert (y > -100).all(), "{} must be big".format(name)
            assert (y > -100).all(), "%s must be big" % name
            assert y.dim() == 1, f"{name} must be 1-d"
            return y + 1
    """) == [("CRV005", 8), ("CRV005", 9), ("CRV005", 10)]


def test_a_tensor_assert_with_a_built_message_in_a_loop_skips_the_frame():
    # piq's `_validate_input`: its frame is skipped
    assert codes("""
        @torch.compile
        def validate(tensors, data_range):
            for t in tensors:
                assert data_range[0] <= t.min(), f"Expected values >= {data_range[0]}, got {t.min()}"
    """) == [("CRV006", 3), ("CRV005", 4)]


# -- a callee Dynamo skips whole makes no graph of its own ---------------------------------------


SKIPPED_CALLEE = """
    def validate(tensors):
        for t in tensors:
            assert t.min() >= -100, f"got {t.min()}"

    @torch.compile
    def first(x, y):
        validate([x, y])
        return (x - y).pow(2).mean()

    @torch.compile
    def after_work(x, y):
        d = x - y
        validate([x, y])
        return d.pow(2).mean()
"""


def test_calling_a_callee_dynamo_skips_whole_before_any_tensor_work_is_leading():
    # explain: `first` -> one graph, no break (validate's frame runs eagerly and makes no graph);
    # `after_work` -> two graphs ("Data-dependent branching" at the call)
    assert codes(SKIPPED_CALLEE) == [("CRV006", 2), ("CRV005", 3), ("CRV016", 13)]
    assert ("CRV027", 7) in codes(SKIPPED_CALLEE, extend_select=["CRV027"])


def test_a_skipped_callee_of_another_file_is_leading_too(tmp_path):
    (tmp_path / "checks.py").write_text(textwrap.dedent("""
        import torch

        def validate(tensors):
            for t in tensors:
                assert t.min() >= -100, f"got {t.min()}"
    """))
    (tmp_path / "metrics.py").write_text(textwrap.dedent("""
        import torch
        from checks import validate

        @torch.compile
        def first(x, y):
            validate([x, y])
            return (x - y).pow(2).mean()

        @torch.compile
        def after_work(x, y):
            d = x - y
            validate([x, y])
            return d.pow(2).mean()
    """))
    files = [str(tmp_path / "checks.py"), str(tmp_path / "metrics.py")]
    results = lint_project(files, LintConfig(), ProjectLayout.build([str(tmp_path)], files), paths=[str(tmp_path)])
    assert all(r.error is None for r in results)
    found = [(os.path.basename(r.filename), f.line, f.code) for r in results for f in r.findings]
    # validate's own breaks are reported where it is (it is reached from compiled code); in metrics.py
    # only after_work's call, not first's
    assert found == [("checks.py", 5, "CRV006"), ("checks.py", 6, "CRV005"), ("metrics.py", 13, "CRV016")]


def test_a_module_whose_forward_computes_on_after_a_metric_with_a_leading_break_breaks():
    # explain: SSIMLoss-shaped `1 - metric(x, y)` -> two graphs (the metric's frame and the rest of forward);
    # GMSDLoss-shaped `return metric(x, y)` -> one graph
    assert codes("""
        def validate(tensors):
            for t in tensors:
                assert t.min() >= 0, f"got {t.min()}"

        def metric(x, y):
            validate([x, y])
            return ((x - y) ** 2).mean()

        class ComputesOn(nn.Module):
            def forward(self, x, y):
                score = metric(x, y)
                return torch.ones_like(score) - score

        class ReturnsIt(nn.Module):
            def forward(self, x, y):
                return metric(x, y)

        model = torch.compile(ComputesOn())
        other = torch.compile(ReturnsIt())
    """) == [("CRV006", 2), ("CRV005", 3), ("CRV016", 6), ("CRV016", 11)]


# -- a function bound to an attribute with functools.partial -------------------------------------


def test_calling_an_attribute_bound_to_a_partial_calls_its_function():
    # explain: DSSLoss-shaped `self.dss = functools.partial(dss, ...)`, then `self.dss(x, y)` inlines dss
    assert codes("""
        def score(x, y, scale=1.0):
            d = (x - y) * scale
            print(d.sum())
            return d.mean()

        class Loss(nn.Module):
            def __init__(self, scale):
                super().__init__()
                self.score = functools.partial(score, scale=scale)
                self.plain = score

            def forward(self, x, y):
                return 1 - self.score(x, y) - self.plain(x, y)

        model = torch.compile(Loss(2.0))
    """) == [("CRV003", 3), ("CRV016", 13), ("CRV016", 13)]


# -- attributes of self that hold tensors; names bound by enumerate and zip ----------------------


def test_a_tensor_attribute_of_self_is_a_tensor_and_enumerate_binds_its_elements():
    # explain: tabnet's EmbeddingGenerator (`for i, flag in enumerate(self.flags): if flag:`) -> frame skipped;
    # `if self.limit > 0` with `self.limit = torch.tensor(0.5)` -> "generic_jump TensorVariable()"
    assert codes("""
        class Embed(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.flags = torch.ones(n, dtype=torch.bool)
                self.embedding = nn.Embedding(4, 2)

            def forward(self, x):
                cols = []
                for i, flag in enumerate(self.flags):
                    if flag:
                        cols.append(x[:, i].view(-1, 1))
                    else:
                        cols.append(self.embedding(x[:, i].long()))
                return torch.cat(cols, 1)

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("scale", torch.tensor(2.0))
                self.limit = torch.tensor(0.5)
                self.bias = nn.Parameter(torch.zeros(3))
                self.count = None
                self.name = "scaled"

            def forward(self, x):
                y = x * self.scale + self.bias
                if self.limit > 0:
                    y = y + 1
                if self.bias.sum() > 0:
                    y = y - 1
                if self.name == "scaled" and self.count is None:
                    y = y * 2
                return y

        a = torch.compile(Embed(3))
        b = torch.compile(Scaled())
    """) == [("CRV006", 9), ("CRV005", 10), ("CRV005", 27), ("CRV005", 29)]


def test_an_attribute_also_given_a_number_is_not_a_tensor():
    assert codes("""
        class Counter(nn.Module):
            def __init__(self):
                super().__init__()
                self.steps = torch.tensor(0)

            def reset(self):
                self.steps = 0

            def forward(self, x):
                if self.steps > 3:
                    return x
                return x * 2

        model = torch.compile(Counter())
    """) == []


def test_zip_binds_the_elements_of_the_tensors_it_pairs():
    # torchdiffeq's `for t0, t1 in zip(grid[:-1], grid[1:])`: 0-dim tensors, compared in Python
    assert codes("""
        @torch.compile
        def integrate(y, steps):
            grid = torch.cumsum(steps, 0)
            for t0, t1 in zip(grid[:-1], grid[1:]):
                if t1 > t0:
                    y = y + (t1 - t0)
            return y
    """) == [("CRV006", 4), ("CRV005", 5)]


# -- methods only tensors have ---------------------------------------------------------------------


def test_type_as_and_the_other_tensor_only_methods_make_a_tensor_and_mark_their_receiver():
    # torchdiffeq's `_optimal_step_size`: `error_ratio.type_as(last_step)` with `if error_ratio == 0:` before;
    # explain -> "generic_jump TensorVariable()"
    assert codes("""
        @torch.compile
        def step_size(last_step, error_ratio, helper):
            if error_ratio == 0:
                return last_step
            dy = helper(last_step).type_as(last_step)
            if dy > 1:
                return dy
            return last_step * error_ratio.type_as(last_step)
    """) == [("CRV005", 3), ("CRV005", 6)]


# -- CRV004: range() of a tensor; torch functions that read their input's values -----------------


def test_range_of_a_tensor_is_crv004_and_of_a_size_is_not():
    # explain: `range(n.long())` after `torch.ceil(x.sum())` -> "Failed to trace builtin operator";
    # `range(x.shape[0])` -> one graph
    assert codes("""
        @torch.compile
        def f(x):
            n = torch.ceil(x.sum())
            s = x * 0
            for _ in range(x.shape[0]):
                s = s + 1
            for _ in range(n.long()):
                s = s + 1
            return s
    """) == [("CRV004", 7)]  # the loop's iterable is evaluated before the loop: no CRV006


def test_cov_corrcoef_allclose_and_equal_read_their_inputs():
    # explain: torch.cov, Tensor.cov, torch.corrcoef, torch.allclose, torch.equal after tensor work ->
    # "Data dependent operator"; torch.cdist, torch.histc, torch.quantile -> traced
    assert codes("""
        @torch.compile
        def f(x):
            y = torch.relu(x)
            a = torch.cov(y)
            b = y.corrcoef()
            c = torch.cdist(y, y) + torch.histc(y, bins=4).sum() + torch.quantile(y, 0.5)
            same = torch.allclose(y, x) and y.equal(x)
            return a, b, c, same
    """) == [("CRV004", 4), ("CRV004", 5), ("CRV004", 7), ("CRV004", 7)]


def test_lstsq_and_combinations_have_data_dependent_output_shapes():
    # explain: torch.linalg.lstsq, torch.combinations -> "Dynamic shape operator"
    assert codes("""
        @torch.compile
        def f(x):
            y = x * 1.0
            s = torch.linalg.lstsq(y, y).solution
            c = torch.combinations(y[0])
            return s, c
    """) == [("CRV009", 4), ("CRV009", 5)]


# -- CRV036: NumPy functions torch._numpy does not translate --------------------------------------


def test_a_numpy_function_torch_numpy_lacks_is_crv036_and_a_translated_one_is_not():
    # explain: np.isin, np.nanmean, np.interp, np.poly1d after tensor work -> "attempted to trace numpy
    # function unsupported by PyTorch"; np.hanning, np.linspace, np.acos (np.arccos) -> traced
    assert codes("""
        import numpy as np

        @torch.compile
        def f(x, keep):
            y = x * 2
            a = np.isin(np.arange(4), keep)
            b = np.nanmean(np.ones(3)) + np.interp(0.5, [0.0, 1.0], [1.0, 2.0])
            k = np.poly1d([0.5, 0.5])
            w = np.hanning(4) + np.linspace(0, 1, 4) + np.acos(np.ones(4) * 0.5)
            np.save("y.npy", w)
            return y, a, b, k, w
    """) == [("CRV036", 6), ("CRV036", 7), ("CRV036", 7), ("CRV036", 8), ("CRV003", 10)]


def test_a_numpy_function_torch_numpy_lacks_first_thing_is_leading():
    # explain: `m = np.polyval(...)` before any tensor work -> one graph, no break
    assert codes("""
        import numpy as np

        @torch.compile
        def f(x):
            m = np.polyval([1.0, 2.0], 3.0)
            return x + m
    """, extend_select=["CRV027"]) == [("CRV027", 5)]


# -- a name that only holds NumPy arrays ------------------------------------------------------------


def test_the_methods_of_a_name_holding_a_numpy_array_are_not_tensor_evidence():
    # transformers' `zero_mean_unit_var_norm`: `attention_mask = np.array(attention_mask)`, then
    # `zip(input_values, attention_mask.sum(-1))`: NumPy lengths, not tensor elements
    assert codes("""
        import numpy as np

        @torch.compile
        def normalize(input_values, attention_mask, x):
            attention_mask = np.array(attention_mask, np.int32)
            out = []
            for vector, length in zip(input_values, attention_mask.sum(-1)):
                if length < vector.shape[0]:
                    vector = vector[:length]
                out.append(vector)
            y = x.sum(-1)
            for row, total in zip(x, y):
                if total > 0:
                    out.append(row)
            return out
    """) == [("CRV006", 12), ("CRV005", 13)]
