"""Checks measured on training code (tests/lint_corpus_training), each on a small example: the
breaks torch.compile 2.13 has there and the look-alikes it traces."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.names import ImportTable
from carve.rewriters.tensor_functions import TensorFunctions

HEADER = """\
import math
import time

import torch
import torch.nn.functional as F
from tqdm import tqdm


"""


def _found(body: str, all_functions: bool = False) -> list[tuple[int, str]]:
    source = HEADER + textwrap.dedent(body).lstrip("\n")
    result = lint_source(source, "train.py", LintConfig(all_functions=all_functions))
    assert result.error is None, result.error
    offset = HEADER.count("\n")
    return [(f.line - offset, f.code) for f in result.findings]


@pytest.mark.parametrize("body, expected", [
    # `.tolist()` of a computed tensor: Dynamo breaks (float: unsupported; int: .item() per element).
    ("""
    @torch.compile
    def per_class(preds, y):
        counts = torch.stack([(preds == c).sum() for c in range(3)])
        return counts.tolist()
    """, [(4, "CRV004")]),
    # A math function takes a Python number: the tensor is converted.
    ("""
    @torch.compile
    def check(model, x, y):
        loss = F.cross_entropy(model(x), y)
        if not math.isfinite(loss):
            raise FloatingPointError("loss is not finite")
        return loss
    """, [(4, "CRV004")]),
    # `not` of a tensor condition reads its value, as the condition itself would.
    ("""
    @torch.compile
    def guard(loss):
        loss = loss * 2
        if not torch.isfinite(loss):
            return None
        return loss
    """, [(4, "CRV005")]),
    # An elif condition is evaluated before any branch runs.
    ("""
    @torch.compile
    def pick(x, mode):
        if mode == "a":
            return x * 2
        elif x.sum() > 0:
            return x * 3
        return x
    """, [(5, "CRV005")]),
    # Indexing with a name that only ever holds a mask.
    ("""
    @torch.compile
    def drop_padding(x):
        keep = x.abs().sum(dim=-1) > 0
        return x[keep].mean(dim=0)
    """, [(4, "CRV009")]),
    # A same-module function that returns a tensor makes its result a tensor.
    ("""
    def accuracy(logits, y):
        return (logits.argmax(dim=-1) == y).float().mean()

    @torch.compile
    def early_exit(logits, y, target):
        acc = accuracy(logits, y)
        if acc >= target:
            return acc, True
        return acc, False
    """, [(7, "CRV005")]),
    # Dynamo's skip rules: clocks, lr schedulers, progress bars, skipped packages.
    ("""
    @torch.compile
    def timed(model, x, scheduler, pbar):
        y = model(x)
        elapsed = time.perf_counter()
        scheduler.step()
        pbar.update(1)
        bar = tqdm(range(3))
        return y, elapsed, bar
    """, [(4, "CRV013"), (5, "CRV013"), (6, "CRV013"), (7, "CRV013")]),
])
def test_breaks_of_training_code(body, expected):
    assert _found(body) == expected


@pytest.mark.parametrize("body", [
    """
    @torch.compile
    def numpy_of_predictions(model, x):
        return model(x).argmax(dim=-1).numpy()
    """,
    """
    @torch.compile
    def int_indexing(x, idx):
        order = x.argsort()
        return x[order] + x[idx]
    """,
    """
    @torch.compile
    def python_math(step, x):
        lr = 0.5 * (1.0 + math.cos(math.pi * step / 1000))
        return x * lr
    """,
    """
    @torch.compile
    def not_none(x, bias=None):
        if not bias is None:
            x = x + bias
        return x
    """,
    """
    class Trainer:
        def step(self):
            return 1

    @torch.compile
    def steps_something_else(x, trainer):
        trainer.step()
        return x * 2
    """,
])
def test_look_alikes_torch_compile_traces(body):
    assert _found(body) == []


def test_an_optimizer_step_is_not_a_skipped_call_but_torch_optims_own_break():
    # not a scheduler (CRV013); torch.optim's step calls torch._dynamo.graph_break() around itself (CRV034)
    assert _found("""
    @torch.compile
    def step(x, optimizer):
        y = x * 2
        optimizer.step()
        return y
    """) == [(4, "CRV034")]


def test_all_scope_includes_functions_that_run_a_model_or_read_the_clock():
    module = cst.parse_module(HEADER + textwrap.dedent("""
        def timed(model, x):
            start = time.perf_counter()
            out = model(x)
            return out, time.perf_counter() - start

        def early_exit(model, x, target):
            acc = model(x)
            if acc >= target:
                return acc
            return None

        def drop_padding(x):
            keep = x.abs().sum(dim=-1) > 0
            return x[keep]

        def apply_twice(fn, value):
            return fn(fn(value))
    """))
    scope = TensorFunctions(module, ImportTable.from_module(module))
    found = {s.name.value: s in scope for s in module.body if isinstance(s, cst.FunctionDef)}
    assert found == {"timed": True, "early_exit": True, "drop_padding": True, "apply_twice": False}
