"""Precision and recall of `carve lint` on a corpus, against its committed Dynamo ground truth.

    .venv/bin/python tests/lint_corpus/accuracy.py                       # the first corpus
    .venv/bin/python tests/lint_corpus/accuracy.py tests/lint_corpus_training --all
    .venv/bin/python tests/lint_corpus/accuracy.py tests/lint_corpus_real          # copied code

A case is predicted to break when `carve lint` (default rules) reports a
finding inside the case: the compiled function, or the class whose forward
is compiled (a break in a callee shows as CRV016 at the call, also when the
callee is in another file of the corpus). The corpus directory is linted as one
tree, as `carve lint DIR` would.

`--all`: every `torch.compile` is removed first (decorators and `m = torch.compile(...)`
statements), so only `carve lint --all` can bring a case into scope.

A corpus of copied code (a `cases.py` harness, tests/lint_corpus/ground_truth.py) has no
compile calls: each case's function is handed to the linter as compiled (what `torch.compile(f)`
in another file of the tree would make it), or, with `--all`, nothing is and `carve lint --all`
decides the scope. A case Dynamo itself failed on (`dynamo_error`) is left out.
"""

from __future__ import annotations

import ast
import json
import sys
import tempfile
from pathlib import Path

import libcst as cst

from carve.rewriters.lint import LintConfig
from carve.rewriters.lint.driver import lint_file
from carve.rewriters.lint.modules import ExternalTarget, ProjectLayout
from carve.rewriters.lint.project import lint_project, lint_tree

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


# The measuring scripts live beside the first corpus, the harness in a copied-code corpus: not
# part of either.
TOOLS = frozenset({"accuracy.py", "ground_truth.py", "cases.py"})
REAL_CORPUS = HERE.parent / "lint_corpus_real"
REAL_HOLDOUT = HERE.parent / "lint_corpus_real_holdout"
REAL_HOLDOUT2 = HERE.parent / "lint_corpus_real_holdout2"
REAL_HOLDOUT3 = HERE.parent / "lint_corpus_real_holdout3"
REAL_HOLDOUT4 = HERE.parent / "lint_corpus_real_holdout4"
REAL_HOLDOUT5 = HERE.parent / "lint_corpus_real_holdout5"


def function_spans(path: Path) -> dict[str, list[tuple[int, int]]]:
    """Qualified name ("f", "Net.forward") -> its lines: (first line, decorators included; last line),
    less the lines of the functions and classes defined inside it (linted on their own)."""
    spans: dict[str, list[tuple[int, int]]] = {}

    def lines(node) -> tuple[int, int]:
        return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]), node.end_lineno

    def visit(body, prefix):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first, last = lines(node)
                nested = sorted(lines(inner) for inner in ast.walk(node) if inner is not node and isinstance(
                    inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
                ranges, start = [], first
                for inner_first, inner_last in nested:
                    if inner_first > start:
                        ranges.append((start, inner_first - 1))
                    start = max(start, inner_last + 1)
                ranges.append((start, last))
                spans.setdefault(prefix + node.name, ranges)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, prefix + node.name + ".")

    visit(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return spans


def _lint_copied_code(corpus: Path, truth: dict, all_functions: bool) -> dict[str, list[str]]:
    files = [str(path) for path in corpus_sources(corpus)]
    config = LintConfig(all_functions=all_functions)
    layout = ProjectLayout.build([str(corpus)], files)
    compiled: dict[str, list[ExternalTarget]] = {}
    if not all_functions:
        for key in truth:
            filename, qualname = key.split("::")
            path = str((corpus / filename).resolve())
            compiled.setdefault(path, []).append(ExternalTarget(path, qualname, True, "the corpus harness"))

    def run(items):
        return [lint_file(name, config, False, layout, tuple(extra) + tuple(compiled.get(str(Path(name).resolve()), ())))
                for name, extra in items]

    results = lint_tree(files, run)
    predicted: dict[str, list[str]] = {}
    for result in results:
        assert result.error is None, result.error
        spans = function_spans(Path(result.filename))
        for key in truth:
            filename, qualname = key.split("::")
            if filename == Path(result.filename).name:
                predicted[key] = [f"{f.code}@{f.line}" for f in result.findings
                                  if any(first <= f.line <= last for first, last in spans[qualname])]
    return predicted


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
    truth = {key: case for key, case in truth.items() if "dynamo_error" not in case}
    if (corpus / "cases.py").is_file():
        return _score(truth, _lint_copied_code(corpus, truth, all_functions))
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
    return _score(truth, predicted)


def _score(truth: dict, predicted: dict[str, list[str]]) -> dict:
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
