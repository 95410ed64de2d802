"""Precision and recall of `carve lint` on the corpus, against the committed Dynamo ground truth.

    .venv/bin/python tests/lint_corpus/accuracy.py      # prints the table and the misses

A case is predicted to break when `carve lint` (default rules) reports a
finding inside the case: the compiled function, or the class whose forward
is compiled (a break in a callee shows as CRV016 at the call).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from carve.rewriters.lint import LintConfig, lint_file

HERE = Path(__file__).resolve().parent


def case_spans(path: Path) -> dict[str, tuple[int, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    spans = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("case_") or (
            isinstance(node, ast.ClassDef) and node.name.startswith("Case")
        ):
            first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
            spans[node.name] = (first, node.end_lineno)
    return spans


def evaluate() -> dict:
    truth = json.loads((HERE / "ground_truth.json").read_text())["cases"]
    predicted: dict[str, list[str]] = {}
    for filename in sorted({key.split("::")[0] for key in truth}):
        path = HERE / filename
        result = lint_file(str(path), LintConfig())
        assert result.error is None, result.error
        for name, (first, last) in case_spans(path).items():
            predicted[f"{filename}::{name}"] = [f"{f.code}@{f.line}" for f in result.findings if first <= f.line <= last]
    tp = fp = fn = tn = 0
    misses = []
    for key, case in sorted(truth.items()):
        flagged = bool(predicted.get(key))
        if case["graph_break"] and flagged:
            tp += 1
        elif case["graph_break"]:
            fn += 1
            misses.append(f"missed break: {key} ({'; '.join(case['reasons']) or 'frame skipped'})")
        elif flagged:
            fp += 1
            misses.append(f"false alarm: {key} {predicted[key]}")
        else:
            tn += 1
    return {
        "cases": len(truth), "breaking": tp + fn, "tp": tp, "fp": fp, "fn": fn, "tn": tn,
        "precision": tp / (tp + fp) if tp + fp else 1.0, "recall": tp / (tp + fn) if tp + fn else 1.0,
        "misses": misses,
    }


if __name__ == "__main__":
    report = evaluate()
    for line in report.pop("misses"):
        print(line)
    print(json.dumps(report, indent=2))
    sys.exit(0)
