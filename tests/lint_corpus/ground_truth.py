"""Record what Dynamo does with each corpus case: the ground truth for `carve lint`'s accuracy.

    .venv/bin/python tests/lint_corpus/ground_truth.py     # rewrites tests/lint_corpus/ground_truth.json
    .venv/bin/python tests/lint_corpus/ground_truth.py tests/lint_corpus_training   # another corpus
    .venv/bin/python tests/lint_corpus/ground_truth.py tests/lint_corpus_real       # the real-code corpus

Two kinds of corpus:

- written cases: `cases_*.py` files holding `case_*` functions and compiled `Case*` modules;
  `INPUTS` maps a case name to a function giving its arguments, `DEFAULT_INPUTS` gives the others'.
- copied code (tests/lint_corpus_real, ..._holdout): files copied from public repositories with
  their licences, and a harness `cases.py` whose `CASES` maps "file.py::Qualname" to a builder
  taking the loaded file and returning (callable, args): the module instance for a `forward`, the
  bound method or the function otherwise.

The directory is put on sys.path while its cases load, so they may import each other.

Each case runs once under `torch._dynamo.explain` (fullgraph off, backend eager), as its own
frame. It counts as breaking when explain reports a graph break or a break reason, or when
Dynamo skipped the frame, or the rest of it after a break (a generator, a break inside a loop,
a try or a with block: Dynamo logs "WON'T CONVERT" for the frame or its resume function, and
that code runs eagerly; explain's graph count cannot tell, as it also counts the graphs of
frames called from the skipped code). A function that does no tensor work makes no graph and
is clean. A break Dynamo meets before the frame's first graph
operation (a `print` first thing) cuts no graph and is not counted by explain; Dynamo's own
graph-break counter sees it (`TORCH_LOGS=graph_breaks`, and `fullgraph=True` refuses it), so
each case also records `dynamo_breaks`, the breaks that counter saw, for the stricter reading.
Run by hand when torch changes (the JSON says which torch labelled it), not by the tests, which
read the committed JSON.
"""

from __future__ import annotations

import importlib.util
import io
import json
import logging
import os
import random
import re
import sys
import tempfile
import warnings
from contextlib import redirect_stdout
from pathlib import Path

import torch
import torch._dynamo
from torch._dynamo.utils import counters

HERE = Path(__file__).resolve().parent
# The harness of a copied-code corpus: not corpus code.
HARNESS = "cases.py"


def corpus_files(corpus: Path) -> list[str]:
    return sorted(path.name for path in corpus.glob("cases_*.py"))


def is_copied_code(corpus: Path) -> bool:
    return (corpus / HARNESS).is_file()


def _load(path: Path):
    if path.stem in sys.modules and getattr(sys.modules[path.stem], "__file__", None) == str(path):
        return sys.modules[path.stem]
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module  # corpus files import each other by these names
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


def copied_cases(corpus: Path):
    """("file.py::Qualname", builder) of a copied-code corpus, in the harness's order."""
    harness = _load(corpus / HARNESS)
    return list(harness.CASES.items())


class _SkippedFrames(logging.Handler):
    """The frames Dynamo gave up on ("WON'T CONVERT name file line N"), as (name, file, line)."""

    PATTERN = re.compile(r"WON'T CONVERT (\S+) (.+) line (\d+)")

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.frames: set[tuple[str, str, int]] = set()

    def emit(self, record: logging.LogRecord) -> None:
        match = self.PATTERN.match(str(record.msg) % record.args if record.args else str(record.msg))
        if match:
            self.frames.add((match.group(1), match.group(2), int(match.group(3))))


def _frame_codes(function) -> set[tuple[str, str, int]]:
    """The code objects the case's own frame can run as: the function (and the decorators' wrappers
    around it: `@torch.no_grad()` runs its wrapper's frame), or a module's call and its forward."""
    found = []
    if isinstance(function, torch.nn.Module):
        found += [torch.nn.Module._wrapped_call_impl, torch.nn.Module._call_impl, type(function).forward]
        function = type(function).forward
    while function is not None:
        found.append(getattr(function, "__func__", function))
        function = getattr(getattr(function, "__func__", function), "__wrapped__", None)
    return {(f.__code__.co_name, f.__code__.co_filename, f.__code__.co_firstlineno) for f in found if hasattr(f, "__code__")}


def explain_case(function, args) -> dict:
    torch._dynamo.reset()
    counters.clear()
    random.seed(0)  # cases that draw Python random numbers take the same branch on every run
    torch.manual_seed(0)
    skipped_frames = _SkippedFrames()
    frame_log = logging.getLogger("torch._dynamo.convert_frame")
    level, propagate = frame_log.level, frame_log.propagate
    frame_log.addHandler(skipped_frames)
    frame_log.setLevel(logging.INFO)
    frame_log.propagate = False
    try:
        with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            output = torch._dynamo.explain(function)(*args)
    finally:
        frame_log.removeHandler(skipped_frames)
        frame_log.setLevel(level)
        frame_log.propagate = propagate
    reasons = sorted({str(getattr(reason, "reason", reason)).splitlines()[0][:200] for reason in output.break_reasons})
    # Dynamo gave up on the case's own frame, or on the rest of it after a break (its resume
    # function), not on a generator expression it ran, say: that code then ran eagerly.
    # (A decorated function's frame reports the line of its `def`, its code the decorator's.)
    own = _frame_codes(function)
    skipped = any(
        file == own_file and (name == own_name and own_line <= line <= own_line + 10
                              or name.startswith(f"torch_dynamo_resume_in_{own_name}_at_"))
        for name, file, line in skipped_frames.frames for own_name, own_file, own_line in own
    )
    logged = sorted({reason.splitlines()[0][:200] for reason in counters.get("graph_break", {})})
    return {
        "graph_break": output.graph_break_count > 0 or bool(reasons) or skipped,
        "graph_count": output.graph_count,
        "graph_break_count": output.graph_break_count,
        "frame_skipped": skipped,
        "reasons": reasons,
        "dynamo_breaks": logged,
    }


def label(corpus: Path) -> dict:
    truth = {}
    sys.path.insert(0, str(corpus))
    # Copied scripts write files (checkpoints, images): in a scratch directory, not the repository.
    os.chdir(tempfile.mkdtemp(prefix="carve_ground_truth_"))
    if is_copied_code(corpus):
        for key, builder in copied_cases(corpus):
            filename = key.split("::")[0]
            module = _load(corpus / filename)
            torch.manual_seed(0)
            function, args = builder(module)
            try:
                truth[key] = explain_case(function, args)
            except torch._dynamo.exc.TorchDynamoException as error:
                # Dynamo itself failed (a bug, not a graph break): kept out of the accuracy figures.
                truth[key] = {"dynamo_error": str(error).splitlines()[0][:200]}
            except Exception as error:  # a harness bug: say which case
                raise RuntimeError(f"{key}: {type(error).__name__}: {error}") from error
            verdict = "dynamo error" if "dynamo_error" in truth[key] else "break" if truth[key]["graph_break"] else "clean"
            print(f"{key}: {verdict}", file=sys.stderr)
        return truth
    for filename in corpus_files(corpus):
        module = _load(corpus / filename)
        for name, function, args in _cases(module):
            truth[f"{filename}::{name}"] = explain_case(function, args)
            print(f"{filename}::{name}: {'break' if truth[f'{filename}::{name}']['graph_break'] else 'clean'}", file=sys.stderr)
    return truth


def main(argv: list[str]) -> int:
    corpus = Path(argv[0]).resolve() if argv else HERE
    truth = label(corpus)
    out = corpus / "ground_truth.json"
    meta = {
        "torch": torch.__version__,
        "method": "torch._dynamo.explain, backend eager, fullgraph off; a skipped frame counts as a break",
    }
    out.write_text(json.dumps({"meta": meta, "cases": truth}, indent=2, sort_keys=True) + "\n")
    breaks = sum(case.get("graph_break", False) for case in truth.values())
    print(f"{len(truth)} cases, {breaks} with graph breaks or skipped frames -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
