"""Record what Dynamo does with each corpus case: the ground truth for `carve lint`'s accuracy.

    .venv/bin/python tests/lint_corpus/ground_truth.py     # rewrites ground_truth.json
    .venv/bin/python tests/lint_corpus/ground_truth.py tests/lint_corpus_training   # the second corpus

A corpus is a directory of `cases_*.py` files (cases: `case_*` functions and compiled
`Case*` modules; `INPUTS` maps a case name to a function giving its arguments,
`DEFAULT_INPUTS` gives the others'). The directory is put on sys.path while its cases
load, so they may import helper modules of their own.

Each case runs under `torch._dynamo.explain` (fullgraph off, backend eager).
A case counts as breaking when Dynamo reports a graph break (or a break reason), or does not
produce exactly one graph for it (0 graphs: the frame was skipped, as for
generators or a break inside a loop). Run by `make bench`, not by the tests,
which read the committed JSON.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import random
import sys
import warnings
from pathlib import Path

import torch
import torch._dynamo

HERE = Path(__file__).resolve().parent


def corpus_files(corpus: Path) -> list[str]:
    return sorted(path.name for path in corpus.glob("cases_*.py"))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cases(module):
    """(case name, the uncompiled callable, its example inputs)."""
    inputs = getattr(module, "INPUTS", {})
    default = getattr(module, "DEFAULT_INPUTS", lambda: (torch.randn(4),))
    for name, value in list(vars(module).items()):
        if name.startswith("case_") and callable(value):
            original = getattr(value, "_torchdynamo_orig_callable", value)
            yield name, original, inputs.get(name, default)()
    for name, value in list(vars(module).items()):
        if isinstance(value, torch.nn.Module) and hasattr(value, "_orig_mod"):
            original = value._orig_mod
            class_name = type(original).__name__
            yield class_name, original, inputs.get(class_name, default)()


def explain_case(function, args) -> dict:
    torch._dynamo.reset()
    random.seed(0)  # cases that draw Python random numbers take the same branch on every run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        output = torch._dynamo.explain(function)(*args)
    reasons = sorted({str(getattr(reason, "reason", reason)).splitlines()[0][:200] for reason in output.break_reasons})
    return {
        "graph_break": output.graph_break_count > 0 or output.graph_count != 1 or bool(reasons),
        "graph_count": output.graph_count,
        "graph_break_count": output.graph_break_count,
        "reasons": reasons,
    }


def main(argv: list[str]) -> int:
    corpus = Path(argv[0]).resolve() if argv else HERE
    truth = {}
    sys.path.insert(0, str(corpus))
    for filename in corpus_files(corpus):
        module = _load(corpus / filename)
        for name, function, args in _cases(module):
            truth[f"{filename}::{name}"] = explain_case(function, args)
            print(f"{filename}::{name}: {'break' if truth[f'{filename}::{name}']['graph_break'] else 'clean'}", file=sys.stderr)
    out = corpus / "ground_truth.json"
    meta = {"torch": torch.__version__, "method": "torch._dynamo.explain, backend eager, fullgraph off"}
    out.write_text(json.dumps({"meta": meta, "cases": truth}, indent=2, sort_keys=True) + "\n")
    breaks = sum(case["graph_break"] for case in truth.values())
    print(f"{len(truth)} cases, {breaks} with graph breaks or skipped frames -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
