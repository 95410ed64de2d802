"""The checks the third held-out real-code corpus (tests/lint_corpus_real_holdout3: d2l, timm,
torch-optimizer, pytorch-crf, lucidrains' EMA and Lion, pytorch-msssim) led to, each on a small
example, each behaviour first checked with `torch._dynamo.explain` on torch 2.13 (docs/lint.md)."""

import textwrap

from carve.rewriters.lint import LintConfig, lint_source

HEADER = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"


def codes(text, **config):
    source = HEADER + textwrap.dedent(text).lstrip("\n")
    result = lint_source(source, "m.py", LintConfig(**config))
    assert result.error is None, result.error
    return [(f.code, f.line - HEADER.count("\n")) for f in result.findings]


# -- CRV009: repeat_interleave with Python-int repeats, nonzero without fullgraph -----------------


def test_repeat_interleave_breaks_only_when_its_repeats_are_a_tensor():
    # explain: repeats an int -> one graph; repeats a tensor -> "Dynamic shape operator"
    assert codes("""
        @torch.compile
        def f(x, valid_lens, heads):
            y = x * 2
            a = torch.repeat_interleave(valid_lens, y.shape[1])
            b = torch.repeat_interleave(valid_lens, repeats=heads, dim=0)
            c = y.repeat_interleave(3, dim=0)
            counts = (y.abs() * 3).long()
            d = torch.repeat_interleave(y, counts)
            e = y.repeat_interleave(counts)
            return a, b, c, d, e, torch.repeat_interleave(counts)
    """) == [("CRV009", 8), ("CRV009", 9), ("CRV009", 10)]


def test_nonzero_after_tensor_work_is_a_break_without_fullgraph_and_traced_under_it():
    # explain: `y.nonzero()` after `x * 2` -> two graphs, "Dynamic shape operator"; fullgraph=True: one graph
    source = """
        @torch.compile{options}
        def f(x):
            y = x * 2
            idx = torch.nonzero(y > 0)
            return idx + 1
    """
    assert codes(source.format(options="")) == [("CRV009", 4)]
    assert codes(source.format(options="(fullgraph=True)")) == []
    assert codes(source.format(options="(fullgraph=True)"), extend_select=["CRV021"]) == [("CRV021", 4)]
    # first thing in the function, it splits no graph
    assert codes("""
        @torch.compile
        def f(x):
            idx = x.nonzero()
            return idx.sum()
    """, extend_select=["CRV027"]) == [("CRV027", 3)]


def test_nonzero_in_a_loop_skips_the_frame():
    assert codes("""
        @torch.compile
        def nms(boxes, scores):
            order = torch.argsort(scores, descending=True)
            keep = []
            while order.numel() > 0:
                keep.append(order[0])
                inds = torch.nonzero(boxes[order] > 0.5).reshape(-1)
                order = order[inds + 1]
            return keep
    """) == [("CRV006", 5), ("CRV009", 7)]
