"""The rules found at a call from what a callee resolver says its target is (`CalleeInfo`,
rewriters/callees.py): each rule module's `check_callee` reports its own kind of callee, with its
own code, and the analysis only positions what they yield.

    gb = torch._dynamo.graph_break
    gb()                            # CalleeInfo(GRAPH_BREAK, "gb") -> crv001's check_callee: CRV001
    y = helper(x)                   # CalleeInfo(USER_FUNCTION, findings=(CRV003 ...)) -> CRV016

No torch: the resolver here is a stub, as the compiler's live resolver is one resolver among
others to the analysis.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.findings import Finding
from carve.rewriters.rules import CALLEE_CHECKS, USER_CALLEE_CHECKS
from carve.rewriters.rules import crv001_explicit_graph_break as explicit_graph_break
from carve.rewriters.rules import crv002_skip_frame as skip_frame
from carve.rewriters.rules import crv003_io as io
from carve.rewriters.rules import crv013_disabled_callee as disabled_callee
from carve.rewriters.rules import crv015_disallowed_in_graph as disallowed_in_graph
from carve.rewriters.rules import crv016_callee_graph_break as callee_graph_break
from carve.rewriters.rules import crv018_compile_skips_function as compile_skips_function
from carve.rewriters.rules import crv019_python_side_effect as side_effect

# Each kind of callee a resolver may report, the rule module whose check owns it, and its message.
OWNERS = [
    (CalleeKind.GRAPH_BREAK, explicit_graph_break, "gb() forces a graph break"),
    (CalleeKind.SKIP_FRAME, skip_frame, "gb() skips compiling this function"),
    (CalleeKind.IO, io, "gb() performs I/O"),
    (CalleeKind.DISABLED, disabled_callee, "gb is disabled (carve.disable / torch.compiler.disable)"),
    (CalleeKind.DISALLOWED, disallowed_in_graph, "gb is marked disallow_in_graph"),
]
BREAK = Finding("CRV003", "print() performs I/O", 7, 4, callee_stack=("inner.py:3: CRV001 explicit graph break: x",))
EFFECT = Finding("CRV019", "xs.append() mutates a Python object", 9, subject="xs")
FROZEN = Finding("CRV019", "random.random() draws new random numbers on every call", 11, frozen_by_tracing=True)


def all_callee_violations(callee: CalleeInfo) -> list:
    return [violation for check in CALLEE_CHECKS + USER_CALLEE_CHECKS for violation in check(callee)]


@pytest.mark.parametrize(("kind", "module", "message"), OWNERS, ids=lambda value: getattr(value, "name", None))
def test_a_callee_rule_reports_its_own_kind_of_callee_with_its_own_code(kind, module, message):
    callee = CalleeInfo(kind, "gb")
    assert list(module.check_callee(callee)) == [(module.RULE.code, message, None, (), False)]
    # ... and no other rule's check reports it.
    assert [violation.code for violation in all_callee_violations(callee)] == [module.RULE.code]
    for other_kind in CalleeKind:
        if other_kind is not kind:
            assert list(module.check_callee(CalleeInfo(other_kind, "gb", (BREAK, EFFECT)))) == []


@pytest.mark.parametrize("kind", [CalleeKind.TRACEABLE, CalleeKind.USER_FUNCTION])
def test_a_traceable_or_clean_callee_is_no_finding(kind):
    assert all_callee_violations(CalleeInfo(kind, "helper")) == []


def test_a_user_function_with_a_break_inside_is_crv016_with_the_stack_down_to_it():
    callee = CalleeInfo(CalleeKind.USER_FUNCTION, "helper", (EFFECT, BREAK), "helper.py")
    violation, = all_callee_violations(callee)
    assert violation.code == callee_graph_break.RULE.code == "CRV016"
    assert violation.message == "helper() has a graph break inside (CRV003 at helper.py:7: print() performs I/O)"
    assert violation.callee_stack == (
        "helper.py:7: CRV003 I/O or logging: print() performs I/O", "inner.py:3: CRV001 explicit graph break: x")
    # Its side effect is not reported on top of the break: the call is one finding.
    assert list(side_effect.check_callee(callee)) == []


def test_a_user_function_that_changes_python_state_is_crv019_frozen_when_any_effect_is():
    plain = CalleeInfo(CalleeKind.USER_FUNCTION, "helper", (EFFECT,))
    violation, = all_callee_violations(plain)
    assert violation == (side_effect.RULE.code, "helper() changes Python state (line 9: xs.append() mutates a Python object)",
                         None, (), False)
    frozen = CalleeInfo(CalleeKind.USER_FUNCTION, "helper", (EFFECT, FROZEN), "helper.py")
    violation, = all_callee_violations(frozen)
    assert violation.message == "helper() changes Python state (helper.py:9: xs.append() mutates a Python object)"
    assert violation.frozen_by_tracing


class _Stub:
    """A callee resolver that knows some names (the compiler's live one knows every marker)."""

    def __init__(self, **callees: CalleeInfo) -> None:
        self.callees = callees

    def resolve(self, call, dotted, qualified):
        return self.callees.get(dotted or "")


def analyse(source: str, resolver: _Stub | None = None):
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    return analyze_function(function, ModuleContext(module), resolver)


def test_the_analysis_positions_what_the_callee_checks_report():
    analysis = analyse("""
        def f(x, xs):
            gb()
            y = helper(x)
            z = effects(xs)
            return y
    """, _Stub(gb=CalleeInfo(CalleeKind.GRAPH_BREAK, "gb"),
               helper=CalleeInfo(CalleeKind.USER_FUNCTION, "helper", (BREAK,), "helper.py"),
               effects=CalleeInfo(CalleeKind.USER_FUNCTION, "effects", (FROZEN,))))
    assert [(f.code, f.line, f.column) for f in analysis.findings] == [("CRV001", 3, 4), ("CRV016", 4, 8), ("CRV019", 5, 8)]
    crv016, crv019 = analysis.findings[1:]
    assert crv016.callee_stack == (f"helper.py:7: {BREAK.describe()}",) + BREAK.callee_stack
    assert crv019.frozen_by_tracing
    assert sorted(info.name for info in analysis.user_calls.values()) == ["effects", "helper"]


def test_a_marker_its_call_check_found_by_name_is_not_reported_again_at_that_line():
    resolver = _Stub(**{"torch._dynamo.graph_break": CalleeInfo(CalleeKind.GRAPH_BREAK, "torch._dynamo.graph_break"),
                        "out": CalleeInfo(CalleeKind.IO, "out")})
    analysis = analyse("""
        import torch
        def f(x):
            torch._dynamo.graph_break()
            out(x); out(x)
            return x
    """, resolver)
    assert [(f.code, f.line, f.message) for f in analysis.findings] == [
        ("CRV001", 4, "torch._dynamo.graph_break() forces a graph break"),  # by check_call, once
        ("CRV003", 5, "out() performs I/O"),                                # once per line
    ]


def test_a_skip_frame_callee_makes_the_whole_function_eager():
    analysis = analyse("""
        def f(x):
            y = x + 1
            skip()
            return y
    """, _Stub(skip=CalleeInfo(CalleeKind.SKIP_FRAME, "skip")))
    assert analysis.whole_function is not None and analysis.whole_function.code == skip_frame.RULE.code


def test_a_with_binding_an_object_a_trace_binds_to_none_is_a_frozen_side_effect():
    analysis = analyse("""
        import torch
        def f(x):
            with torch.autocast("cpu") as ac, torch.no_grad() as ng:
                y = x * 2
            return y
    """)
    finding, = analysis.findings
    assert (finding.code, finding.line, finding.column, finding.frozen_by_tracing) == ("CRV019", 4, 9, True)
    assert finding.message == "`as` binds the torch.autocast object, which a traced `with` binds to None"


def test_a_compiled_function_skipped_whole_is_crv018_from_its_whole_function_finding():
    whole = Finding("CRV010", "the function is a generator (contains yield)", 3)
    assert list(compile_skips_function.check_compiled_function("M.forward", whole)) == [(
        "CRV018", "torch.compile would skip M.forward() entirely: the function is a generator (contains yield)",
        None, (), False)]
    assert list(compile_skips_function.check_compiled_function("f", None)) == []
