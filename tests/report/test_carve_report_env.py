"""CARVE_REPORT=DIR: a program writes one page per compiled function at exit, holding them weakly."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.report.reading import ReadPage, assert_self_contained

ROOT = Path(__file__).resolve().parents[2]

PROGRAM = """
import gc
import weakref

import torch

import carve
from tests.report import programs

step = carve.compile(programs.step, backend="eager")
for n in (2, 3):
    step(torch.randn(4, 4), torch.randn(4, 4), n)
frame = carve.compile(programs.reads_its_frame, backend="eager")
frame(torch.randn(3))
never_called = carve.compile(programs.no_break, backend="eager")


def make():
    def short_lived(x):
        print(x.sum())
        return x + 1

    return short_lived


compiled = carve.compile(make(), backend="eager")
compiled(torch.randn(3))
alive = weakref.ref(compiled)
del compiled
gc.collect()
print("short-lived compiled function collected:", alive() is None)
"""


def run_program(tmp_path, report_dir):
    script = tmp_path / "program.py"
    script.write_text(textwrap.dedent(PROGRAM), encoding="utf-8")
    env = dict(os.environ, CARVE_REPORT=str(report_dir), PYTHONPATH=str(ROOT), CARVE_COST_CHECK="0")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)


def test_a_program_writes_a_page_per_compiled_function_at_exit(tmp_path):
    report_dir = tmp_path / "report"
    result = run_program(tmp_path, report_dir)
    assert result.returncode == 0, result.stderr
    # carve holds compiled functions weakly: one the program dropped is gone, and has no page.
    assert "short-lived compiled function collected: True" in result.stdout
    assert f"carve: report written to {report_dir / 'index.html'}" in result.stderr
    pages = sorted(path.name for path in report_dir.iterdir())
    assert pages == ["index.html", "programs.reads_its_frame.html", "programs.step.html"]

    index = ReadPage((report_dir / "index.html").read_text(encoding="utf-8"))
    assert_self_contained(index)
    assert sorted(index.links) == ["programs.reads_its_frame.html", "programs.step.html"]

    step = ReadPage((report_dir / "programs.step.html").read_text(encoding="utf-8"))
    assert_self_contained(step)
    assert step.row_with("y = x @ w").kinds == {"line-graph"}
    assert step.row_with("y = x @ w").region == "1"
    printed = step.row_with('print("z", z.sum())')
    assert printed.rules == ("CRV003",) and "ran 2\u00d7 as Python" in printed.note  # two calls
    assert step.row_with("for _ in range(n):").kinds == {"line-python"}
    assert "FX code of graph 1 (4 ops)" in step.summaries
    # Each region's calls and their time: region 1 ran once per call of step.
    text = (report_dir / "programs.step.html").read_text(encoding="utf-8")
    card = text[text.index('id="region-1"'):text.index('id="region-2"')]
    assert "<b>2</b> calls" in card and "ms</b> in compiled code" in card

    # A function carve runs as written says so on each line, with the reason.
    frame = ReadPage((report_dir / "programs.reads_its_frame.html").read_text(encoding="utf-8"))
    rows = [frame.row_with("y = x + 1"), frame.row_with("print(sorted(locals()))"), frame.row_with("return y")]
    assert all(row.kinds == {"line-eager"} for row in rows)
    assert "reads its own local variables by name" in rows[0].note


def test_without_carve_report_nothing_is_written(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "CARVE_REPORT"}
    script = tmp_path / "program.py"
    script.write_text("import torch, carve\nf = carve.compile(lambda x: x + 1, backend='eager')\nf(torch.ones(2))\n",
                      encoding="utf-8")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path,
                            env=dict(env, PYTHONPATH=str(ROOT)), timeout=600)
    assert result.returncode == 0, result.stderr
    assert "report" not in result.stderr and sorted(p.name for p in tmp_path.iterdir()) == ["program.py"]
