"""Accuracy of carve lint against Dynamo's own verdicts (torch._dynamo.explain of the installed torch),
on the corpora of tests/lint_corpus*: small written cases, one per rule and look-alike
(tests/lint_corpus), training code (tests/lint_corpus_training), and functions copied from public
repositories (tests/lint_corpus_real: model code, training, generation and data helpers), each
linted as compiled and, with every torch.compile removed, with --all (which is what brings a case
into scope then; tests/lint/test_lint_all_scope.py has the rest of --all's scope).

    .venv/bin/python tests/lint_corpus/accuracy.py [tests/lint_corpus_real] [--all]   # the numbers
    .venv/bin/python tests/lint_corpus/ground_truth.py tests/lint_corpus_real          # relabel (imports torch)
"""

import json
import re

import pytest

from tests.lint_corpus.accuracy import HERE, REAL_CORPUS, REAL_HOLDOUT, REAL_HOLDOUT2, REAL_HOLDOUT3, REAL_HOLDOUT4, REAL_HOLDOUT5, TRAINING_CORPUS, evaluate


@pytest.mark.parametrize("corpus", [HERE, TRAINING_CORPUS, REAL_CORPUS], ids=["corpus", "training-corpus", "real-code"])
@pytest.mark.parametrize("all_functions", [False, True], ids=["compiled", "all"])
def test_the_corpora_meet_the_accuracy_targets(corpus, all_functions, tmp_path):
    report = evaluate(corpus, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 60 and report["breaking"] >= 25 and report["cases"] - report["breaking"] >= 25
    assert report["recall"] >= 0.95, report["misses"]
    assert report["precision"] >= 0.95, report["misses"]


@pytest.mark.parametrize("all_functions", [False, True], ids=["compiled", "all"])
def test_the_held_out_real_code_corpus_keeps_its_measured_accuracy(all_functions, tmp_path):
    """Functions of four other repositories (docs/lint.md: measured once before any change it led to,
    then after the changes it and the second held-out corpus led to: 26/27 flagged cases break, 26 of
    28 breaks found); a floor against regressions, not a target the checks were tuned to."""
    report = evaluate(REAL_HOLDOUT, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 90 and report["breaking"] >= 25
    assert report["precision"] >= 0.96, report["misses"]
    assert report["recall"] >= 0.92, report["misses"]


@pytest.mark.parametrize("all_functions, recall", [(False, 1.0), (True, 0.94)], ids=["compiled", "all"])
def test_the_second_held_out_real_code_corpus_keeps_its_measured_accuracy(all_functions, recall, tmp_path):
    """Functions of four further repositories (makemore, whisper, CLIP, attention-is-all-you-need; docs/lint.md:
    precision 0.93, recall 0.76 at the first measurement, before any change; after the changes its misses
    led to (no longer held out) 17/18 and 17/17 compiled, 16/17 and 16/17 with --all, whose scope does not
    take a method doing no tensor work of its own); floors against regressions."""
    report = evaluate(REAL_HOLDOUT2, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 90 and report["breaking"] >= 15
    assert report["precision"] >= 0.94, report["misses"]
    assert report["recall"] >= recall, report["misses"]


@pytest.mark.parametrize("all_functions, precision, recall", [(False, 0.95, 0.95), (True, 0.97, 0.90)], ids=["compiled", "all"])
def test_the_third_held_out_real_code_corpus_keeps_its_measured_accuracy(all_functions, precision, recall, tmp_path):
    """160 functions of seven further repositories (d2l, timm, torch-optimizer, pytorch-crf, lion-pytorch,
    ema-pytorch, pytorch-msssim; docs/lint.md), labelled before any lint run: precision 0.80 (28/35), recall 0.65
    (28/43) compiled and 0.81 (26/32), 0.60 (26/43) with --all at the first measurement, before any change; after
    the changes its misses led to (no longer held out) 41/43 and 41/43 compiled, 39/40 and 39/43 with --all;
    floors against regressions."""
    report = evaluate(REAL_HOLDOUT3, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 150 and report["breaking"] >= 40
    assert report["precision"] >= precision, report["misses"]
    assert report["recall"] >= recall, report["misses"]


@pytest.mark.parametrize("all_functions, precision, recall", [(False, 0.76, 0.88), (True, 0.75, 0.84)], ids=["compiled", "all"])
def test_the_fourth_held_out_real_code_corpus_keeps_its_measured_accuracy(all_functions, precision, recall, tmp_path):
    """212 functions of eight further projects (segmentation-models-pytorch, piq, torchdiffeq, dadaptation, prodigy,
    mamba.py, tabnet, fast-pytorch-kmeans; docs/lint.md), labelled before any lint run: precision 0.70 (33/47), recall
    0.62 (33/53) compiled and 0.69 (31/45), 0.58 (31/53) with --all at the first measurement, before any change;
    after the changes its misses led to (no longer held out; one case relabelled, a harness defect) 46/60 and 46/52
    compiled, 44/58 and 44/52 with --all; floors against regressions."""
    report = evaluate(REAL_HOLDOUT4, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 150 and report["breaking"] >= 40
    assert report["precision"] >= precision, report["misses"]
    assert report["recall"] >= recall, report["misses"]


@pytest.mark.parametrize("all_functions, precision, recall", [(False, 0.76, 0.94), (True, 0.76, 0.94)], ids=["compiled", "all"])
def test_the_fifth_held_out_real_code_corpus_keeps_its_measured_accuracy(all_functions, precision, recall, tmp_path):
    """178 labelled functions of twelve further projects (julius, entmax, torch-ema, auraloss, schedulefree, pytorch-warmup,
    torch-dct, pytorch-lr-finder, kmeans-pytorch, madgrad, info-nce-pytorch, geomloss; docs/lint.md), labelled before any
    lint run: precision 0.59 (13/22), recall 0.76 (13/17) compiled and 0.65 (13/20), 0.76 (13/17) with --all at the
    first measurement, before any change; after the changes its misses led to (no longer held out) 16/21 and 16/17,
    both ways; floors against regressions."""
    report = evaluate(REAL_HOLDOUT5, all_functions=all_functions, workdir=tmp_path)
    assert report["cases"] >= 150 and report["breaking"] >= 15
    assert report["precision"] >= precision, report["misses"]
    assert report["recall"] >= recall, report["misses"]


@pytest.mark.parametrize("corpus, cases, repositories",
                         [(REAL_CORPUS, 150, 6), (REAL_HOLDOUT, 90, 4), (REAL_HOLDOUT2, 90, 4), (REAL_HOLDOUT3, 150, 4),
                          (REAL_HOLDOUT4, 150, 6), (REAL_HOLDOUT5, 150, 6)],
                         ids=["real-code", "held-out", "held-out-2", "held-out-3", "held-out-4", "held-out-5"])
def test_the_real_code_corpora_are_copied_code_labelled_by_the_installed_torch(corpus, cases, repositories):
    truth = json.loads((corpus / "ground_truth.json").read_text())
    labelled = [case for case in truth["cases"].values() if "dynamo_error" not in case]
    assert len(labelled) >= cases
    found = set()
    for path in sorted(corpus.glob("*.py")):
        if path.name in ("cases.py", "__init__.py"):
            continue
        header = path.read_text(encoding="utf-8").split("\n\n", 1)[0]
        source = re.search(r"^# Copied from (?:https://github\.com/)?([\w.-]+/[\w.-]+)", header, re.M)
        assert source, f"{path.name} does not say where it was copied from"
        assert "licence" in header.lower() or "license" in header.lower(), f"{path.name} has no licence header"
        found.add(source.group(1))
    assert len(found) >= repositories, found
    import importlib.metadata

    assert truth["meta"]["torch"].split("+")[0] == importlib.metadata.version("torch").split("+")[0], (
        f"the labels come from another torch: relabel with tests/lint_corpus/ground_truth.py {corpus}")
