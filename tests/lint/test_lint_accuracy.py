"""Accuracy of carve lint against Dynamo's own verdicts (torch._dynamo.explain), on two corpora:
tests/lint_corpus (small cases, one per rule and look-alike) and tests/lint_corpus_training
(training code: logging, `.item()`, early stopping, metrics, optimizer and scheduler steps,
progress bars), each linted as compiled and, with every torch.compile removed, with --all
(which is what brings a case into scope then; tests/lint/test_lint_all_scope.py has the rest of
--all's scope).

    .venv/bin/python tests/lint_corpus/accuracy.py [tests/lint_corpus_training] [--all]   # the numbers
"""

import pytest

from tests.lint_corpus.accuracy import HERE, TRAINING_CORPUS, evaluate


@pytest.mark.parametrize("corpus", [HERE, TRAINING_CORPUS], ids=["corpus", "training-corpus"])
@pytest.mark.parametrize("all_functions", [False, True], ids=["compiled", "all"])
def test_both_corpora_meet_the_accuracy_targets(corpus, all_functions, tmp_path):
    report = evaluate(corpus, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 60 and report["breaking"] >= 25 and report["cases"] - report["breaking"] >= 25
    assert report["recall"] >= 0.95, report["misses"]
    assert report["precision"] >= 0.90, report["misses"]
