"""A region's cache, checked by changing between calls every value its graph depends on;
GraphBreakError text, CARVE_LOGS parsing."""

import logging

import pytest
import torch

from carve.runtime import GraphBreakError, log
from carve.runtime.errors import BreakEvent
from carve.rewriters.rules import rule
from carve.testing import CountingBackend

LIMIT = 3


def fn(x, n, flag, name):
    return x * n + LIMIT if flag else x


def same(a, b):
    return type(a) is type(b) and (torch.equal(a, b) and a.dtype == b.dtype and a.requires_grad == b.requires_grad
                                   if isinstance(a, torch.Tensor) else a == b)


def test_every_value_the_graph_depends_on_is_guarded(make_region):
    global LIMIT
    backend = CountingBackend()
    r = make_region(fn, backend)
    x = torch.randn(2, 3)
    calls = [(x, 2, True, "a"), (x, 2, 1, "a"), (x, 3, True, "a"), (x.t().contiguous().t(), 2, True, "a"),
             (x.t(), 2, True, "a"), (x.double(), 2, True, "a"), (x.clone().requires_grad_(), 2, True, "a"),
             (x, 2, False, "a"), (torch.randn(5), 2, True, "b")]
    try:
        for args in calls:
            assert same(r(*args), fn(*args)), args
        LIMIT = 4  # a global the graph read, rebound
        assert same(r(*calls[0]), fn(*calls[0]))
        with torch.no_grad():
            assert same(r(*calls[6]), fn(*calls[6]))
    finally:
        LIMIT = 3
    assert backend.graphs >= 1


def branches_on_facts(a, b, c):
    # Facts about the tensor arguments that are not their values: whether they are one tensor,
    # how many distinct ones there are, whether one is an inference tensor.
    if a is b:
        return a * 2
    if len({a, b, c}) == 2:
        return a + c
    if a.is_inference():
        return a - 1
    return a + b + c


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_identity_aliasing_and_inference_flags_of_arguments_are_guarded(make_region, backend):
    r = make_region(branches_on_facts, backend)
    x, y, z = torch.randn(3), torch.randn(3), torch.randn(3)
    with torch.inference_mode():
        inference = torch.randn(3)
    for args in [(x, y, z), (x, x, z), (x, y, x), (x, y, z), (inference, y, z), (x, y, z), (x, x, x)]:
        assert same(r(*args), branches_on_facts(*args)), [id(a) for a in args]


def test_graph_break_error_text_reads_from_rules():
    err = GraphBreakError.from_parts("CRV003", "print() has a side effect a graph cannot hold",
                                     __file__, 1, None)
    r = rule("CRV003")
    text = str(err)
    assert text.splitlines()[0] == f"{__file__}:1: CRV003 {r.title}: print() has a side effect a graph cannot hold"
    assert r.explanation in text and f"hint: {r.hint}" in text and f"strategy: {r.strategy.value}" in text
    assert err.source_line == '"""A region\'s cache, checked by changing between calls every value its graph depends on;'
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


def test_guards_and_dynamic_loggers_say_what_dynamo_did(make_region, caplog):
    def scaled(x):
        return x * 2 + 1

    r = make_region(scaled)
    with caplog.at_level(logging.DEBUG, logger="carve"):
        for n in (3, 4, 5):
            assert torch.equal(r(torch.ones(n)), scaled(torch.ones(n)))
    guards = [rec.getMessage() for rec in caplog.records if rec.name == log.GUARDS]
    dynamic = [rec.getMessage() for rec in caplog.records if rec.name == log.DYNAMIC]
    assert guards and "TENSOR_MATCH" in guards[-1]
    assert dynamic and "symbolic" in dynamic[-1]  # the size that changed is symbolic from the second graph
