"""Accuracy of carve lint against Dynamo's own verdicts on the corpus (tests/lint_corpus)."""

from tests.lint_corpus.accuracy import evaluate


def test_precision_and_recall_against_dynamo_ground_truth():
    report = evaluate()
    assert report["cases"] >= 60 and report["breaking"] >= 25 and report["cases"] - report["breaking"] >= 25
    assert report["recall"] >= 0.95, report["misses"]
    assert report["precision"] >= 0.90, report["misses"]
