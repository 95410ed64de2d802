"""Guards' descriptions and failure reasons, GraphBreakError text, CARVE_LOGS parsing."""

import torch

from carve.runtime import GraphBreakError, GuardSet, log
from carve.runtime.errors import BreakEvent
from carve.runtime.tracer import trace_region
from carve.rewriters.rules import rule

LIMIT = 3


def fn(x, n, flag, name):
    return x * n + LIMIT if flag else x


def build(args):
    tr = trace_region(fn, args, stop_on_break=False)
    return GuardSet.build(tr, args, fn)


def test_describe_and_failure_reasons():
    x = torch.randn(2, 3)
    args = (x, 2, True, "a")
    gs = build(args)
    text = "\n".join(gs.describe())
    assert "args[0]: Tensor dtype=torch.float32 device=cpu shape=(2, 3) requires_grad=False strides=(3, 1)" in text
    assert "args[1] == 2 (int)" in text and "args[2] == True (bool)" in text and "args[3] == 'a' (str)" in text
    assert "LIMIT == 3 (int)" in text
    assert gs.check(args) and gs.failure_reason(args) is None
    assert not gs.check((x, 2, 1, "a"))  # True vs 1
    assert gs.failure_reason((x, 2, 1, "a")) == "args[2] == True (bool)"
    assert not gs.check((x.t(), 2, True, "a"))
    assert not gs.check((x.double(), 2, True, "a"))
    assert not gs.check((x.requires_grad_(), 2, True, "a"))
    x.requires_grad_(False)
    assert not gs.check((x, 2, True))
    with torch.no_grad():
        assert not gs.check(args)
        assert "grad_mode" in gs.failure_reason(args)
    assert gs.check(args)
    assert gs.source().startswith("def check(args):")


def test_non_contiguous_inputs_guard_strides():
    x = torch.randn(3, 4).t()
    gs = build((x, 2, True, "a"))
    assert gs.check((torch.randn(3, 4).t(), 2, True, "a"))
    assert not gs.check((torch.randn(4, 3), 2, True, "a"))
    assert any("strides=(1, 4)" in d for d in gs.describe())


def test_global_rebinding_of_a_constant_fails_guard():
    global LIMIT
    args = (torch.randn(2), 2, True, "a")
    gs = build(args)
    LIMIT = 4
    try:
        assert not gs.check(args)
        assert gs.failure_reason(args) == "LIMIT == 3 (int)"
    finally:
        LIMIT = 3


def test_graph_break_error_text_reads_from_rules():
    err = GraphBreakError.from_parts("CRV003", "print() has a side effect a graph cannot hold",
                                     __file__, 1, None)
    r = rule("CRV003")
    text = str(err)
    assert text.splitlines()[0] == f"{__file__}:1: CRV003 {r.title}: print() has a side effect a graph cannot hold"
    assert r.explanation in text and f"hint: {r.hint}" in text and f"strategy: {r.strategy.value}" in text
    assert err.source_line == '"""Guards\' descriptions and failure reasons, GraphBreakError text, CARVE_LOGS parsing."""'
    assert err.hint == r.hint and err.strategy == r.strategy.value
    assert isinstance(err, RuntimeError)


def test_log_graph_break_once_and_parse():
    log.reset()
    ev = BreakEvent("CRV001", "graph_break() called", "f.py", 3)
    assert log.log_graph_break(ev) is True
    assert log.log_graph_break(ev) is False
    log.reset()
    assert log.log_graph_break(ev) is True
    assert log.parse_carve_logs("graph_breaks, recompiles") == {"carve.graph_breaks", "carve.recompiles"}
    assert log.parse_carve_logs("+all") == set(log.ARTIFACTS.values())
    try:
        log.parse_carve_logs("nope")
    except ValueError as e:
        assert "nope" in str(e)
    else:
        raise AssertionError("unknown entry accepted")


def test_carve_logs_env_switches_loggers_on(tmp_path):
    import subprocess
    import sys
    code = ("import logging, carve.runtime.log as l; "
            "print(logging.getLogger('carve.recompiles').getEffectiveLevel(), "
            "logging.getLogger('carve.guards').getEffectiveLevel())")
    out = subprocess.run([sys.executable, "-c", code], env={"CARVE_LOGS": "recompiles", "PATH": ""},
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(logging_debug()), str(logging_warning())]


def logging_debug():
    import logging
    return logging.DEBUG


def logging_warning():
    import logging
    return logging.WARNING
