"""carve against PyTorch's own Dynamo tests.

Runs PyTorch's `test/dynamo/` tests twice, each file in its own pytest subprocess, one
process at a time:

  baseline   unmodified: the tests' `torch.compile` is torch.compile;
  carve      with a pytest plugin (written by this script into a temporary directory and
             loaded with `-p`) that redirects `torch.compile`, `torch._dynamo.optimize` and
             `torch._dynamo.optimize_assert` (also the copy `torch._dynamo.testing` imported,
             which `standard_test`/`make_test`/`make_dynamo_test` use) to `carve.compile` with
             the same backend / fullgraph / dynamic / mode / options arguments. `nopython=True`
             and `optimize_assert` mean fullgraph; a backend object (a `CompileCounter`) passed
             as `optimize(cnt)`'s first argument is carve's `backend=`. Options carve has no
             equivalent for (`guard_fail_fn`, `guard_export_fn`) are dropped.

and classifies every test (junitxml) for carve:

  passed in both | failed in both (not applicable: the test needs an API this torch lacks, a
  device, or fails under torch.compile here too) | skipped (in either mode; expectedFailure
  tests that fail as expected count as skipped) | passed under carve only | carve regressions
  (passed under torch.compile, failed under carve), split by the failing line of the test file
  and the exception:
     wrong value       an assertion on values failed (assertEqual / assertTrue(same(..)) / an
                       `assert` on data in the test)
     count mismatch    an assertion on Dynamo's bookkeeping failed: frame_count, op_count,
                       the number or printed text of the graphs a backend received, counters,
                       cache entries, guard failures, `is_dynamo_compiling()` (carve makes its
                       own graphs and does not trace everything through Dynamo)
     exception differs an expected exception was not raised, or the code under
                       `with self.assertRaises(X)` raised another one (carve's GraphBreakError
                       or eager Python's own error where Dynamo raises Unsupported)
     crash             any other exception, or the per-test time limit
  Every count mismatch then runs once more under carve with the bookkeeping assertions
  recorded instead of failing (mode carve-recheck), so that the value assertions after them
  run too; one that then fails on a value is counted as a wrong value.

Needs `expecttest` (torch.testing._internal imports it): `.venv/bin/pip install expecttest
-c constraints.txt`.

PyTorch's test code is never copied into this repository. Get the files from
pytorch/pytorch, at the tag of the installed torch if you can:

    git clone --filter=blob:none --sparse https://github.com/pytorch/pytorch
    cd pytorch && git sparse-checkout set test/dynamo && git checkout v2.13.0

and pass the folder holding the test files (`pytorch/test/dynamo`). A `SOURCE.txt` beside
them (free text: where each file came from, which commit) is copied into the report.

test_misc: the newest PyTorch splits it into `_test_misc_part1.py` ... `_part8.py` and a
`test_misc.py` that combines them; this harness runs part 1 (class MiscTestsPart1, the
file's first tests) through a three-line module it writes into the temporary directory. A
folder with a monolithic `test_misc.py` runs its first `--misc-limit` tests instead.

    .venv/bin/python bench/dynamo_suite.py /path/to/test/dynamo              # both modes
    .venv/bin/python bench/dynamo_suite.py DIR --files test_exceptions       # one file
    .venv/bin/python bench/dynamo_suite.py DIR --reuse                       # re-classify the
                                                                             # last run's XML
    .venv/bin/python bench/dynamo_suite.py DIR --write-docs                  # docs/dynamo_suite.md

Results (junit XML, logs) go to bench/results/dynamo_suite/ (not committed).
"""

from __future__ import annotations

import argparse
import ast
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "dynamo_suite"
DOCS = REPO / "docs" / "dynamo_suite.md"
FILES = ["test_functions", "test_ctx_manager", "test_exceptions", "test_generator", "test_misc"]
MODES = ["baseline", "carve"]

PLUGIN = r'''
"""Written by carve's bench/dynamo_suite.py: redirects torch.compile to carve.compile
(when CARVE_DYNAMO_SUITE_REDIRECT=1) and gives every test a time limit."""
import os
import signal

import pytest

TIMEOUT = int(os.environ.get("CARVE_DYNAMO_SUITE_TIMEOUT", "180"))


def _compat():
    """Names older test files import that this torch no longer has (both modes alike)."""
    import torch.testing._internal.common_utils as common_utils

    def identity(fn):
        return fn

    for name in ("disable_translation_validation_if_dynamic_shapes",):
        if not hasattr(common_utils, name):
            setattr(common_utils, name, identity)


_compat()

if os.environ.get("CARVE_DYNAMO_SUITE_REDIRECT") == "1":
    import torch
    import torch._dynamo
    import torch._dynamo.testing
    import carve

    def _carve(fn, backend, fullgraph, dynamic, mode=None, options=None, disable=False):
        kwargs = dict(backend=backend, fullgraph=bool(fullgraph), dynamic=dynamic,
                      mode=mode, options=options, disable=bool(disable))
        if fn is None:
            return carve.compile(**kwargs)
        return carve.compile(fn, **kwargs)

    def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
                options=None, disable=False):
        return _carve(model, backend, fullgraph, dynamic, mode, options, disable)

    def optimize(backend="inductor", *, nopython=False, error_on_graph_break=None,
                 guard_export_fn=None, guard_fail_fn=None, guard_filter_fn=None,
                 disable=False, dynamic=None, package=None, **ignored):
        return _carve(None, backend, nopython, dynamic, disable=disable)

    def optimize_assert(backend="inductor", *, hooks=None, export=False,
                        export_constraints=None, dynamic=None, rebuild_ctx=None, **ignored):
        return _carve(None, backend, True, dynamic)

    torch.compile = compile
    torch._dynamo.optimize = optimize
    torch._dynamo.optimize_assert = optimize_assert
    torch._dynamo.testing.optimize_assert = optimize_assert


if os.environ.get("CARVE_DYNAMO_SUITE_SOFT_COUNTS") == "1":
    # Recheck mode: an assertion on Dynamo's bookkeeping (its source line reads frame_count,
    # graphs, counters, ...) is recorded instead of failing, so that the value assertions
    # after it still run.
    import functools
    import linecache
    import re
    import sys
    import unittest

    import expecttest
    import torch.testing._internal.common_utils as common_utils

    WORDS = re.compile(os.environ["CARVE_DYNAMO_SUITE_COUNT_WORDS"])
    SIMPLE = re.compile(r"self\.assert\w+\((\w+|False|True|len\(\w+\)[^()]*|\"[^\"]*\", \w+)[,)]")

    MACHINERY = (os.path.join("unittest", "case.py"), "common_utils.py", os.path.join("_dynamo", "test_case.py"),
                 os.path.join("_inductor", "test_case.py"), os.path.join("expecttest", "__init__.py"),
                 "carve_dynamo_suite_plugin.py")

    def _bookkeeping(frame):
        filename, lineno = frame.f_code.co_filename, frame.f_lineno
        line = linecache.getline(filename, lineno)
        if WORDS.search(line):
            return True
        window = "".join(linecache.getline(filename, n) for n in range(max(1, lineno - 10), lineno))
        return bool(SIMPLE.search(line.strip())) and bool(WORDS.search(window))

    def _soft(method):
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            try:
                return method(self, *args, **kwargs)
            except AssertionError:
                frame = sys._getframe(1)
                # up through the assertion machinery (TestCase overrides calling super()) to the
                # line that asked for the assertion
                while frame is not None and frame.f_code.co_filename.endswith(MACHINERY):
                    frame = frame.f_back
                if frame is not None and _bookkeeping(frame):
                    return None
                raise
        return wrapper

    for cls in (unittest.TestCase, common_utils.TestCase, expecttest.TestCase):
        for name in ("assertEqual", "assertTrue", "assertFalse", "assertIn", "assertNotIn", "assertGreater",
                     "assertGreaterEqual", "assertLess", "assertLessEqual", "assertExpectedInline", "assertIs",
                     "assertIsNone", "assertIsNotNone"):
            if name in vars(cls):
                setattr(cls, name, _soft(vars(cls)[name]))


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout(f"test took longer than {TIMEOUT} s")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
'''

MISC_SHIM = '''# Written by carve's bench/dynamo_suite.py: test_misc's part 1 as a test module.
from _test_misc_common import *  # noqa: F401,F403
from _test_misc_part1 import MiscTestsPart1


class MiscTests(MiscTestsPart1, torch._inductor.test_case.TestCase):  # noqa: F405
    pass
'''


# ---- running ---------------------------------------------------------------------------------

def run_file(name: str, mode: str, test_dir: Path, tmp: Path, timeout: int, misc_limit: int,
             only: list[str] | None = None) -> dict:
    out_dir = RESULTS / mode
    out_dir.mkdir(parents=True, exist_ok=True)
    xml = out_dir / f"{name}.xml"
    log = out_dir / f"{name}.log"
    if xml.exists():
        xml.unlink()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tmp), str(test_dir), str(REPO)] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["CARVE_DYNAMO_SUITE_REDIRECT"] = "1" if mode.startswith("carve") else "0"
    env["CARVE_DYNAMO_SUITE_SOFT_COUNTS"] = "1" if mode == "carve-recheck" else "0"
    env["CARVE_DYNAMO_SUITE_COUNT_WORDS"] = _COUNT_WORDS.pattern
    env["CARVE_DYNAMO_SUITE_TIMEOUT"] = str(timeout)
    env.setdefault("OMP_NUM_THREADS", "1")
    target, extra = test_target(name, test_dir, tmp, misc_limit)
    if only is not None:
        target = [f"{target[0].split('::')[0]}::{tid.split('::')[0].split('.')[-1]}::{tid.split('::')[-1]}"
                  for tid in only]
    cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", *target, *extra,
           "-p", "carve_dynamo_suite_plugin", "-p", "no:cacheprovider", "-q", "--tb=short",
           "-o", "junit_family=xunit1", f"--junitxml={xml}", "--rootdir", str(tmp),
           "-c", str(tmp / "pytest.ini")]
    start = time.time()
    with open(log, "w") as fh:
        proc = subprocess.run(cmd, cwd=str(tmp), env=env, stdout=fh, stderr=subprocess.STDOUT)
    took = time.time() - start
    tail = log.read_text(errors="replace").strip().splitlines()[-1:] or [""]
    print(f"  {mode:13s} {name:18s} {took:7.1f} s  exit {proc.returncode}  {tail[0][:90]}", flush=True)
    return {"seconds": took, "exit": proc.returncode}


def test_target(name: str, test_dir: Path, tmp: Path, misc_limit: int):
    if name != "test_misc":
        return [str(test_dir / f"{name}.py")], []
    if (test_dir / "_test_misc_part1.py").exists():
        shim = tmp / "test_misc_part1.py"
        shim.write_text(MISC_SHIM)
        return [str(shim)], []
    # A monolithic test_misc.py: its first misc_limit tests, in file order.
    ids = collect(test_dir / "test_misc.py", tmp)
    return ids[:misc_limit], []


def collect(path: Path, tmp: Path) -> list[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp), str(path.parent), str(REPO)]))
    out = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", str(path), "-p", "no:cacheprovider",
                          "--rootdir", str(tmp), "-c", str(tmp / "pytest.ini")],
                         cwd=str(tmp), env=env, capture_output=True, text=True).stdout
    return [line.strip() for line in out.splitlines() if "::" in line]


# ---- reading and classifying ----------------------------------------------------------------

def read_junit(path: Path) -> dict:
    """test id -> (outcome, message, text)."""
    results = {}
    if not path.exists():
        return results
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        tid = f"{case.get('classname', '')}::{case.get('name', '')}"
        outcome, message, text = "passed", "", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message, text = "failed", child.get("message", ""), child.text or ""
                break
            if child.tag == "skipped":
                outcome, message = "skipped", child.get("message", "")
        if tid in results and results[tid][0] == "failed":
            continue  # an error in teardown after a failure: keep the first failure
        results[tid] = (outcome, message, text)
    return results


_COUNT_WORDS = re.compile(
    r"frame_count|op_count|\.graphs\b|graph_count|len\(backend|cnt\b|cnts\b|counter\b|counters\[|"
    r"assertExpectedInline|compile_count|num_graphs|recompil|call_count|inductor_graphs|"
    r"normalize_gm|print_readable|\.graph\b|fw_graph|bw_graph|CompileCounter|metrics|"
    r"cache_entry|_debug_get_cache_entry_list|\bguard")


def frames(text: str, test_file_names: set) -> list[tuple[str, str, int, str]]:
    """(source line, file, line number, function) of each test-file frame of a --tb=short traceback."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.match(r'\s*(\S+\.py):(\d+): in (\S+)', line)
        if m and Path(m.group(1)).name in test_file_names and i + 1 < len(lines):
            found.append((lines[i + 1].strip(), m.group(1), int(m.group(2)), m.group(3)))
    return found


def _source(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def reads_bookkeeping(line: str, path: str, lineno: int, before: int = 10) -> bool:
    """Whether a failing assertion only looks at values computed from Dynamo's bookkeeping:
    `self.assertTrue(found)` with `found = any(... counters["unimplemented"])` just above, or
    `assertIn("m", targets)` with `targets = [... cnt.graphs[0] ...]`. A name assigned from a
    compiled call's result is a value, whatever else the lines around it read."""
    try:
        call = ast.parse(line).body[0].value
    except (SyntaxError, IndexError, AttributeError):
        return False
    if not isinstance(call, ast.Call):
        return False
    args = list(call.args) + [k.value for k in call.keywords]
    pure = {"len", "any", "all", "set", "list", "tuple", "sorted", "str"}
    if any(isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in pure)
           for a in args for node in ast.walk(a)):
        return False
    names = {n.id for a in args for n in ast.walk(a) if isinstance(n, ast.Name) and n.id not in pure}
    window = _source(path)[max(0, lineno - 1 - before):lineno - 1]
    if not names:  # self.assertTrue(False, "...") at the end of a for/else over counters
        return bool(_COUNT_WORDS.search("\n".join(window)))
    for name in names:
        assigned = [w for w in window if re.match(rf"\s*(for\s+)?{name}\b\s*(=|in\b)", w)]
        if not assigned:
            return False
        # the assignment's right-hand side can span lines: take it up to the failing line
        first = window.index(assigned[-1])
        if not _COUNT_WORDS.search("\n".join(window[first:])):
            return False
    return True


def inside_assert_raises(path: str, lineno: int) -> bool:
    """Whether a test-body line sits in a `with self.assertRaises...(...)` block."""
    try:
        tree = ast.parse("\n".join(_source(path)))
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.With) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            for item in node.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
                        expr.func.attr.startswith("assertRaises"):
                    return True
    return False


def classify(message: str, text: str, test_file_names: set) -> tuple[str, str]:
    """(category, one-line reason) of a test that passed under torch.compile and failed under carve."""
    first = (message or (text.strip().splitlines() or [""])[-1]).strip()
    reason = " ".join(first.split())[:240]
    reason = reason.split(" To execute this test")[0]
    stack = frames(text, test_file_names)
    line, path, lineno, _ = stack[-1] if stack else ("", "", 0, "")
    body = [f for f in stack if f[3].startswith("test")]
    body_line, body_path, body_lineno, _ = body[-1] if body else ("", "", 0, "")
    if "Unexpected success" in (message + text):
        return "exception differs", "unexpected success of an expectedFailure test"
    if "took longer than" in (message + text):
        return "crash", reason
    is_assertion = first.startswith("AssertionError") or bool(re.match(r"[\w.]*AssertionError", first))
    if is_assertion and " not raised" in first:
        return "exception differs", reason
    if "is_dynamo_compiling" in line or "is_compiling()" in line:
        return "count mismatch", f"the program asks whether Dynamo is tracing: {line[:90]}"
    if not is_assertion:
        if body_line.startswith("self.assertRaises") or (body_path and inside_assert_raises(body_path, body_lineno)):
            return "exception differs", f"{reason} (the test expects another exception)"
        if re.match(r"(IndexError|KeyError)\b", first) and _COUNT_WORDS.search(line):
            return "count mismatch", f"{line[:100]} -> {reason}"
        return "crash", reason
    raised_in_test = line.startswith(("self.assert", "self.fail", "assert ", "torch._dynamo.testing.standard_test",
                                      "return torch._dynamo.testing.standard_test"))
    if raised_in_test:
        if _COUNT_WORDS.search(line) or reads_bookkeeping(line, path, lineno):
            return "count mismatch", f"{line[:100]} -> {reason}"
        if "standard_test" in line:
            # standard_test checks values first, then frame_count: tell them apart by the message.
            if re.search(r"(Scalars are not equal|\d+ != \d+)", first):
                return "count mismatch", f"standard_test frame_count: {reason}"
            return "wrong value", f"standard_test: {reason}"
        return "wrong value", f"{line[:100]} -> {reason}"
    # an AssertionError raised by carve or torch rather than by the test
    return "crash", reason


def summarize(test_dir: Path, files: list[str]) -> dict:
    test_file_names = {p.name for p in test_dir.glob("*.py")} | {"test_misc_part1.py"}
    per_file = {}
    regressions = []
    for name in files:
        base = read_junit(RESULTS / "baseline" / f"{name}.xml")
        carve = read_junit(RESULTS / "carve" / f"{name}.xml")
        recheck = read_junit(RESULTS / "carve-recheck" / f"{name}.xml")
        counts = Counter()
        for tid in sorted(set(base) | set(carve)):
            b = base.get(tid, ("missing", "", ""))[0]
            c_outcome, c_msg, c_text = carve.get(tid, ("missing", "", ""))
            if b == "skipped" or c_outcome == "skipped":
                counts["skipped"] += 1
            elif b == "passed" and c_outcome == "passed":
                counts["passed in both"] += 1
            elif b != "passed" and c_outcome != "passed":
                counts["failed in both"] += 1
            elif b == "passed":
                cat, why = classify(c_msg, c_text, test_file_names)
                if cat == "count mismatch" and tid in recheck:
                    r_outcome, r_msg, r_text = recheck[tid]
                    if r_outcome == "passed":
                        counts["recheck: values right"] += 1
                        why += " [values right once bookkeeping is not enforced]"
                    else:
                        r_cat, r_why = classify(r_msg, r_text, test_file_names)
                        counts[f"recheck: {r_cat}"] += 1
                        if r_cat == "wrong value":
                            cat, why = "wrong value", f"after its bookkeeping assertions: {r_why}"
                        else:
                            why += f" [then: {r_cat}: {r_why[:120]}]"
                counts[cat] += 1
                regressions.append((name, tid, cat, why))
            else:
                counts["carve only"] += 1
        counts["total"] = sum(v for k, v in counts.items() if not k.startswith("recheck"))
        counts["torch.compile passed"] = sum(1 for o in base.values() if o[0] == "passed")
        counts["carve passed"] = sum(1 for o in carve.values() if o[0] == "passed")
        per_file[name] = counts
    return {"per_file": per_file, "regressions": regressions}


COLUMNS = ["total", "skipped", "torch.compile passed", "carve passed", "passed in both", "failed in both",
           "wrong value", "count mismatch", "exception differs", "crash", "carve only"]


def table(summary: dict) -> list[str]:
    head = ["file"] + COLUMNS
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    total = Counter()
    for name, counts in summary["per_file"].items():
        total.update(counts)
        rows.append("| " + " | ".join([name] + [str(counts.get(c, 0)) for c in COLUMNS]) + " |")
    rows.append("| " + " | ".join(["**all**"] + [f"**{total.get(c, 0)}**" for c in COLUMNS]) + " |")
    return rows


def _display(name: str, tid: str) -> str:
    cls, test = tid.split("::")[0].split(".")[-1], tid.split("::")[-1]
    return f"{name}::{cls}::{test}"


def report(summary: dict, test_dir: Path, files: list[str], meta: dict) -> str:
    import torch

    total = Counter()
    for counts in summary["per_file"].values():
        total.update(counts)
    regressions = summary["regressions"]
    source = (test_dir / "SOURCE.txt").read_text().strip() if (test_dir / "SOURCE.txt").exists() else \
        f"(no SOURCE.txt in {test_dir}: commit unknown)"
    lines = [
        "# carve against PyTorch's Dynamo tests",
        "",
        f"`bench/dynamo_suite.py` ({meta.get('date')}; carve at {meta.get('commit', '?')}; torch {torch.__version__} (git {torch.version.git_version[:12]}), "
        f"Python {platform.python_version()}, {os.cpu_count()} cores, no GPU; both modes took "
        f"{meta.get('minutes', '?')} min). Every test file runs twice in its own pytest process: "
        "unmodified (torch.compile) and with `torch.compile`, `torch._dynamo.optimize` and "
        "`torch._dynamo.optimize_assert` redirected to `carve.compile` (same backend, fullgraph, dynamic; "
        "`nopython=True` and `optimize_assert` are fullgraph; a `CompileCounter` passed as the backend is "
        "carve's backend).",
        "",
        f"**Headline:** of {total['total']} tests, torch.compile passes {total['torch.compile passed']}, "
        f"carve passes {total['carve passed']}; {total['passed in both']} pass in both. Of the tests "
        f"torch.compile passes, carve fails {sum(total[c] for c in ('wrong value', 'count mismatch', 'exception differs', 'crash'))}: "
        f"**{total['wrong value']} with a wrong value**, {total['count mismatch']} on Dynamo's frame/graph "
        f"bookkeeping, {total['exception differs']} on which exception is raised, {total['crash']} with a crash. "
        f"{total['failed in both']} fail under both (not applicable here); carve alone passes {total['carve only']}.",
        "",
        f"The {total['count mismatch'] + total['recheck: wrong value']} tests that failed on Dynamo's bookkeeping "
        "were run once more under carve with those assertions recorded instead of failing (so the value "
        f"assertions after them run too): {total['recheck: values right']} then pass, "
        f"{total['recheck: wrong value']} fail on a value (counted as wrong values above), "
        f"{sum(total[k] for k in total if k.startswith('recheck: ') and k not in ('recheck: values right', 'recheck: wrong value'))} "
        "fail otherwise (an exception or a bookkeeping assertion the recheck does not recognise).",
        "",
        "## The tests",
        "",
        "```",
        source,
        "```",
        "",
        "test_misc: part 1 of the split file (`_test_misc_part1.py`, class MiscTestsPart1) through a module "
        "the harness writes; the other files whole.",
        "",
        "## Counts",
        "",
        *table(summary),
        "",
        "Columns: *skipped*: skipped in either mode (an expectedFailure that fails as expected is recorded "
        "as skipped). *wrong value*: an assertion on values failed (assertEqual, assertTrue(same(...)), an "
        "`assert` on data). *count mismatch*: an assertion on Dynamo's bookkeeping (frame_count, op_count, "
        "the graphs a backend received or their printed text, counters, cache entries, "
        "`is_dynamo_compiling()`): carve makes its own graphs and runs Python eagerly where Dynamo traces it. "
        "*exception differs*: an expected exception was not raised, the code under `with "
        "self.assertRaises(X)` raised another one (carve's GraphBreakError, or eager Python's own error, "
        "where Dynamo raises Unsupported), or an unexpected success. *crash*: any other exception (mostly "
        "carve's GraphBreakError under fullgraph), or the 180 s time limit. *failed in both*: not "
        "applicable (the test needs an API this torch lacks, a device, or a Dynamo internal; "
        "torch.compile fails it too here).",
        "",
        "## Wrong values",
        "",
    ]
    wrong = [r for r in regressions if r[2] == "wrong value"]
    if not wrong:
        lines.append(f"None: no test that torch.compile passes gets a different value under carve, "
                     f"including the {total['recheck: values right']} bookkeeping failures rechecked "
                     "with their value assertions run to the end.")
    for name, tid, _, why in wrong:
        lines.append(f"- `{_display(name, tid)}`: {why}")
    lines += ["", "## The other carve regressions", ""]
    for cat in ("count mismatch", "exception differs", "crash"):
        items = [r for r in regressions if r[2] == cat]
        lines += [f"<details><summary>{cat}: {len(items)}</summary>", ""]
        for name, tid, _, why in items:
            lines.append(f"- `{_display(name, tid)}`: {why.replace('|', '/')}")
        lines += ["", "</details>", ""]
    lines += [
        "## Reproduce",
        "",
        "```",
        "# the test files: a checkout of pytorch/pytorch's test/dynamo (see the docstring of bench/dynamo_suite.py)",
        ".venv/bin/pip install expecttest -c constraints.txt   # torch.testing._internal imports it",
        ".venv/bin/python bench/dynamo_suite.py /path/to/pytorch/test/dynamo --write-docs",
        "```",
        "",
    ]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("test_dir", type=Path, help="folder with PyTorch's test/dynamo files")
    ap.add_argument("--files", nargs="*", default=FILES, help=f"test files (default: {' '.join(FILES)})")
    ap.add_argument("--modes", nargs="*", default=MODES, choices=MODES)
    ap.add_argument("--timeout", type=int, default=180, help="seconds per test (default 180)")
    ap.add_argument("--misc-limit", type=int, default=200, help="tests of a monolithic test_misc.py (default 200)")
    ap.add_argument("--reuse", action="store_true", help="classify the junit XML of the last run; run nothing")
    ap.add_argument("--write-docs", action="store_true", help=f"write {DOCS.relative_to(REPO)}")
    args = ap.parse_args(argv)
    test_dir = args.test_dir.resolve()
    files = [f[:-3] if f.endswith(".py") else f for f in args.files]
    missing = [f for f in files if not (test_dir / f"{f}.py").exists() and not
               (f == "test_misc" and (test_dir / "_test_misc_part1.py").exists())]
    if missing:
        print(f"not in {test_dir}: {', '.join(missing)}", file=sys.stderr)
        return 2
    start = time.time()
    if not args.reuse:
        with tempfile.TemporaryDirectory(prefix="carve-dynamo-suite-") as tmp_name:
            tmp = Path(tmp_name)
            (tmp / "carve_dynamo_suite_plugin.py").write_text(PLUGIN)
            (tmp / "pytest.ini").write_text("[pytest]\naddopts =\n")
            for name in files:
                for mode in args.modes:
                    run_file(name, mode, test_dir, tmp, args.timeout, args.misc_limit)
            if set(args.modes) == set(MODES):
                # The count mismatches once more, with the bookkeeping assertions recorded instead
                # of failing: does a value assertion after them fail?
                counted = summarize(test_dir, files)["regressions"]
                for name in files:
                    ids = [tid for n, tid, cat, _ in counted if n == name and cat == "count mismatch"]
                    xml = RESULTS / "carve-recheck" / f"{name}.xml"
                    if xml.exists():
                        xml.unlink()
                    if ids:
                        run_file(name, "carve-recheck", test_dir, tmp, args.timeout, args.misc_limit, only=ids)
    minutes = round((time.time() - start) / 60, 1)
    if args.reuse and (RESULTS / "minutes.txt").exists():
        minutes = (RESULTS / "minutes.txt").read_text().strip()
    elif not args.reuse:
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "minutes.txt").write_text(str(minutes))
    summary = summarize(test_dir, files)
    print()
    print("\n".join(table(summary)))
    print()
    for _file, tid, cat, why in summary["regressions"]:
        if cat == "wrong value":
            print(f"WRONG VALUE {tid}: {why}")
    if args.write_docs:
        commit = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h (%cd)", "--date=short"],
                                capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        meta = {"date": datetime.date.today().isoformat(), "minutes": minutes,
                "commit": f"commit {commit}" + (" with uncommitted changes" if dirty else "")}
        DOCS.write_text(report(summary, test_dir, files, meta))
        print(f"\nwrote {DOCS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
