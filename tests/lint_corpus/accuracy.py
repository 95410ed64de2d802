"""Precision and recall of `carve lint` on a corpus, against its committed Dynamo ground truth.

    .venv/bin/python tests/lint_corpus/accuracy.py                       # the first corpus
    .venv/bin/python tests/lint_corpus/accuracy.py tests/lint_corpus_training --all

A case is predicted to break when `carve lint` (default rules) reports a
finding inside the case: the compiled function, or the class whose forward
is compiled (a break in a callee shows as CRV016 at the call, also when the
callee is in another file of the corpus). The corpus directory is linted as one
tree, as `carve lint DIR` would.

`--all`: every `torch.compile` is removed first (decorators and `m = torch.compile(...)`
statements), so only `carve lint --all` can bring a case into scope.
"""

from __future__ import annotations

import ast
import json
import sys
import tempfile
from pathlib import Path

import libcst as cst

from carve.rewriters.lint import LintConfig
from carve.rewriters.lint.modules import ProjectLayout
from carve.rewriters.lint.project import lint_project

HERE = Path(__file__).resolve().parent
TRAINING_CORPUS = HERE.parent / "lint_corpus_training"


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


class Uncompile(cst.CSTTransformer):
    """Drops `@torch.compile(...)` decorators and `m = torch.compile(...)` statements."""

    @staticmethod
    def _is_compile(node: cst.BaseExpression) -> bool:
        target = node.func if isinstance(node, cst.Call) else node
        return cst.Module(body=[]).code_for_node(target) == "torch.compile"

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return updated.with_changes(decorators=[d for d in updated.decorators if not self._is_compile(d.decorator)])

    def leave_SimpleStatementLine(self, original, updated):
        for small in updated.body:
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and self._is_compile(small.value):
                return cst.RemoveFromParent()
        return updated


# The measuring scripts live beside the first corpus; they are not part of it.
TOOLS = frozenset({"accuracy.py", "ground_truth.py"})


def corpus_sources(corpus: Path) -> list[Path]:
    """The corpus's own .py files: the cases and the helper modules they import."""
    return [path for path in sorted(corpus.glob("*.py")) if path.name not in TOOLS]


def uncompiled_copy(corpus: Path, workdir: Path) -> Path:
    """The corpus's .py files with every torch.compile removed, written to `workdir`."""
    for path in corpus_sources(corpus):
        stripped = cst.parse_module(path.read_text(encoding="utf-8")).visit(Uncompile()).code
        assert "@torch.compile(" not in stripped and "= torch.compile(" not in stripped
        (workdir / path.name).write_text(stripped, encoding="utf-8")
    return workdir


def evaluate(corpus: Path = HERE, all_functions: bool = False, workdir: Path | None = None) -> dict:
    truth = json.loads((corpus / "ground_truth.json").read_text())["cases"]
    with tempfile.TemporaryDirectory() as temporary:
        tree = uncompiled_copy(corpus, Path(workdir or temporary)) if all_functions else corpus
        files = [str(path) for path in corpus_sources(tree)]
        results = lint_project(files, LintConfig(all_functions=all_functions), ProjectLayout.build([str(tree)], files))
        by_name = {Path(result.filename).name: result for result in results}
        predicted: dict[str, list[str]] = {}
        for filename in sorted({key.split("::")[0] for key in truth}):
            result = by_name[filename]
            assert result.error is None, result.error
            for name, (first, last) in case_spans(tree / filename).items():
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
    arguments = [a for a in sys.argv[1:] if a != "--all"]
    report = evaluate(Path(arguments[0]).resolve() if arguments else HERE, all_functions="--all" in sys.argv)
    for line in report.pop("misses"):
        print(line)
    print(json.dumps(report, indent=2))
    sys.exit(0)
