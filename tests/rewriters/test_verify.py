"""verify() of an outlined function (rewriters/verify.py) on its own: it passes what the outliner
makes and names what a broken outline gets wrong."""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.outline import outline_function
from carve.rewriters.verify import verify

SOURCE = """
import torch
def f(x, n, log):
    y = x * 2
    for i in range(n):
        y = y + i
        print(y)
    if n > 2:
        z = y.sum()
    log.append(y)
    return torch.relu(y) + 1
"""


def outlined():
    module = cst.parse_module(textwrap.dedent(SOURCE))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    context = ModuleContext(module)
    analysis = analyze_function(function, context, None, {})
    return outline_function(function, analysis, context, regions_var="_carve_f", region_prefix="f"), function


def test_what_the_outliner_makes_holds():
    result, original = outlined()
    assert len(result.regions) >= 3
    assert verify(result, original) == []


def test_a_region_whose_inputs_do_not_match_its_parameters_is_named():
    result, original = outlined()
    first = result.regions[0]
    broken = dataclasses.replace(result, regions=[dataclasses.replace(first, inputs=[*first.inputs, "ghost"]),
                                                  *result.regions[1:]])
    problems = verify(broken, original)
    assert any(first.name in p and "inputs" in p for p in problems)
    assert any("not locals of the function" in p and "ghost" in p for p in problems)


def test_an_output_the_region_never_binds_is_named():
    result, original = outlined()
    first = result.regions[0]
    broken = dataclasses.replace(result, regions=[dataclasses.replace(first, outputs=["never_bound"]),
                                                  *result.regions[1:]])
    assert any("never_bound" in p for p in verify(broken, original))


def test_a_statement_without_an_origin_is_named():
    result, original = outlined()
    broken = dataclasses.replace(result, origins={})
    assert any("map to no user line" in p for p in verify(broken, original))
