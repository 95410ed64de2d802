"""`carve lint --all` and `carve rewrite --all-functions`: one definition of "every function that
does tensor work" (carve.rewriters.tensor_functions), including functions that never name torch.

    .venv/bin/python -m tests.lint.test_lint_all_scope     # --all's accuracy on the corpus

The accuracy is measured on the committed corpus (tests/lint_corpus) with every
`torch.compile` removed, so only `--all` can bring a case into scope; the Dynamo ground
truth is the committed one.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import libcst as cst

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.names import ImportTable
from carve.rewriters.rewrite import rewrite_source
from carve.rewriters.tensor_functions import TensorFunctions
from tests.lint_corpus.accuracy import evaluate

CORPUS = Path(__file__).resolve().parents[1] / "lint_corpus"


def _functions(source: str) -> dict[str, bool]:
    module = cst.parse_module(textwrap.dedent(source))
    scope = TensorFunctions(module, ImportTable.from_module(module))
    return {statement.name.value: statement in scope for statement in module.body if isinstance(statement, cst.FunctionDef)}


def test_functions_that_compute_on_tensors_without_naming_torch_are_in_scope():
    scope = _functions("""
        import torch

        def arithmetic(x):
            y = x + 1
            print(y)
            return y * 2

        def item(loss):
            print(f"loss {loss.item():.3f}")

        def shape(batch):
            print(batch.shape)

        def names_torch(x):
            return torch.relu(x)

        def annotated(x: "Tensor"):
            print(-x)

        def disabled_call(x):
            return _disabled(x)

        def method_of_parameter(x):
            y = x.sin()
            print(y)
            return y.cos()

        def mask(x):
            return x[x > 0].sum()

        @torch.compiler.disable
        def _disabled(x):
            return x

        def passes_on(x):
            y = arithmetic(x)
            return y + 1
    """)
    assert scope == {**dict.fromkeys(scope, True), "_disabled": False}


def test_functions_on_python_values_are_out_of_scope():
    scope = _functions("""
        import torch

        def add_one(a):
            return a + 1

        def log_every(step, every=100):
            if step % every == 0:
                print("step", step)

        def title(name: str):
            return name.upper() + "!"

        def counter(n):
            for i in range(n):
                print(i)

        def lookup(items, i):
            print(items[i] + 1)

        def verbose(x, scale=2.0):
            print(scale * 3)

        def main():
            print("training")
            log_every(3)

        def show(config):
            print(config.name, config.steps)
    """)
    assert scope == dict.fromkeys(scope, False)


def test_without_a_torch_import_only_naming_torch_counts():
    scope = _functions("""
        def arithmetic(x):
            y = x + 1
            print(y)
            return y * 2
    """)
    assert scope == {"arithmetic": False}


ISSUE_EXAMPLE = """\
import torch


def f(x):
    y = x + 1
    print(y)
    return y * 2
"""


def test_lint_all_reports_the_issue_example():
    result = lint_source(ISSUE_EXAMPLE, "example.py", LintConfig(all_functions=True))
    assert [(f.code, f.line) for f in result.findings] == [("CRV003", 6)]
    assert lint_source(ISSUE_EXAMPLE, "example.py", LintConfig()).findings == []


def test_rewrite_all_functions_uses_the_same_definition():
    rewritten = rewrite_source(ISSUE_EXAMPLE, "example.py", all_functions=True)
    text = rewritten if isinstance(rewritten, str) else rewritten.text
    assert "RegionSet" in text and "CRV003" in text
    untouched = rewrite_source(ISSUE_EXAMPLE, "example.py")
    assert (untouched if isinstance(untouched, str) else untouched.text) == ISSUE_EXAMPLE


# ---- accuracy of --all on the corpus, compile markers removed --------------------------------

def all_mode_accuracy(workdir: Path) -> dict:
    return evaluate(CORPUS, all_functions=True, workdir=workdir)


# (its precision and recall are asserted with the other corpora's in test_lint_accuracy.py)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        print(json.dumps(all_mode_accuracy(Path(directory)), indent=2))
