"""Checks report typed violations (`rewriters/findings.py` `Violation`), which the analysis turns
into positioned findings."""

from __future__ import annotations

import textwrap

import libcst as cst

from carve.rewriters.analysis import ModuleContext, analyze_function


def test_a_side_effect_names_the_local_object_it_changes():
    """Checks report typed violations; a side effect on a plain name carries that name, which the
    callee resolver compares with the containers the callee made itself."""
    module = cst.parse_module(textwrap.dedent("""
        def f(self, xs, d, y):
            xs.append(y)
            d[0] = y
            self.cache.append(y)
    """))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    findings = analyze_function(function, ModuleContext(module), None, {}).findings
    assert [(f.code, f.subject) for f in findings] == [("CRV019", "xs"), ("CRV019", "d"), ("CRV019", None)]
