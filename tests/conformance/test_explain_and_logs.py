"""carve.explain, CARVE_LOGS-style logging, and GraphBreakError contents."""

from __future__ import annotations

import logging

import pytest
import torch

import carve
from carve.runtime import log as carve_log


def noisy(x):
    print("noisy", x.shape)
    return x * 2


def step(x):
    y = x.sin()
    print("y", y.sum())
    z = noisy(y)
    s = hidden(z)
    return s + 1


def hidden(z):
    return z * z.max().item()


def test_explain_reports_graphs_breaks_and_guards(capsys):
    out = carve.explain(step)(torch.randn(4))
    assert torch.is_tensor(out.result)
    assert out.graph_count >= 2
    codes = [r.code for r in out.break_reasons]
    assert "CRV003" in codes and "CRV016" in codes
    assert out.graph_break_count == len(out.break_reasons)
    first = out.break_reasons[0]
    assert first.filename == __file__ and first.source_line.strip() and first.hint
    assert all(isinstance(n, int) and n > 0 for n in out.ops_per_graph)
    assert out.guards and any("shape" in g or "size" in g for g in out.guards[0])
    assert len(out.compile_times) == out.graph_count
    text = str(out)
    assert "graph breaks:" in text and "CRV003" in text and __file__ in text


def step_in_a_loop(x):
    for _ in range(3):
        x = noisy(x.sin())
    return x


def test_explain_reports_a_function_the_program_compiled_already(capsys):
    # The program's own compile, with the same options, runs first: explain compiles afresh all
    # the same (a version reused from carve's cache would report nothing), and twice alike.
    fresh = carve.explain(step_in_a_loop)(torch.randn(4))
    compiled = carve.compile(step_in_a_loop, backend="eager")
    for _ in range(2):
        compiled(torch.randn(4))
    again = [carve.explain(step_in_a_loop)(torch.randn(4)) for _ in range(2)]
    for out in again:
        assert (out.graph_count, out.graph_break_count, len(out.regions)) == \
            (fresh.graph_count, fresh.graph_break_count, len(fresh.regions))
        assert out.graph_count >= 1 and out.graph_break_count >= 1
    assert compiled(torch.ones(4)).shape == (4,)  # the program's version still serves it


def test_explain_finds_breaks_only_tracing_can_see():
    def f(x):
        a = x + 1
        return scale_by(a, a.sum())

    out = carve.explain(f)(torch.randn(3))
    traced = [r for r in out.break_reasons if r.found == "while tracing"]
    assert traced and traced[0].code == "CRV004"
    assert len(traced[0].user_stack) >= 2  # the region frame, then hidden()


def scale_by(z, k):
    # Static analysis cannot know `k` is a tensor; float(k) is seen while tracing.
    return z * float(k)


def test_graph_breaks_logged_once_per_location(caplog):
    carve_log.reset()

    @carve.compile(backend="eager")
    def f(x):
        for _ in range(3):
            x = x + 1
            print("tick")
        return x

    with caplog.at_level(logging.DEBUG, logger="carve.graph_breaks"):
        f(torch.zeros(1))
        f(torch.zeros(1))
    records = [r for r in caplog.records if r.name == "carve.graph_breaks"]
    assert len(records) == 1
    message = records[0].getMessage()
    assert "CRV003" in message and __file__ in message and "hint" in message


def test_graph_break_error_names_file_line_rule_and_strategy():
    @carve.compile(backend="eager", fullgraph=True)
    def f(x):
        y = x * 2
        print(y)
        return y

    with pytest.raises(carve.GraphBreakError) as info:
        f(torch.ones(2))
    error = info.value
    assert error.code == "CRV003" and error.filename == __file__
    assert "print(y)" in error.source_line
    assert error.hint and error.strategy
    text = str(error)
    assert f"{__file__}:{error.lineno}" in text and "^" in text and "strategy" in text


def test_carve_logs_environment_variable_end_to_end(tmp_path):
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "user_program.py"
    script.write_text(textwrap.dedent('''
        import torch, carve

        @carve.compile(backend="eager")
        def f(x):
            y = x + 1
            print("value", y.sum().item())
            return y * 2

        f(torch.ones(2))
        f(torch.ones(3))
    '''))
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120,
        env={"CARVE_LOGS": "graph_breaks,recompiles,guards", "PATH": ""},
    )
    assert result.returncode == 0, result.stderr
    assert "value 4.0" in result.stdout and "value 6.0" in result.stdout
    logs = result.stderr
    assert f"{script}:7" in logs and "CRV003" in logs  # the print, with file:line and rule
    assert logs.count("CRV003") == 1  # once per location, not once per call
    assert "recompil" in logs.lower()  # the (3,) input recompiled the regions
