"""The static checks read one table of special operations (rewriters/op_tables.py): every
conversion and data-dependent operation in it is flagged, whichever way it is written."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from carve.rewriters import op_tables
from carve.rewriters.analysis import ModuleContext, analyze_function


def codes(source: str) -> set[str]:
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    return {finding.code for finding in analyze_function(function, ModuleContext(module), None, {}).findings}


@pytest.mark.parametrize("method", sorted(op_tables.CONVERSION_METHODS))
def test_every_conversion_method_is_flagged(method):
    # CRV004 a graph break; CRV021 (`.numpy()`) torch.compile traces it, carve runs it eagerly
    assert {"CRV004", "CRV021"} & codes(f"""
        import torch
        def f(x):
            y = torch.relu(x)
            return y.{method}()
    """)


@pytest.mark.parametrize("method", sorted(op_tables.DATA_DEPENDENT_SHAPE_METHODS))
def test_every_data_dependent_method_is_flagged_as_its_function_is(method):
    as_method = codes(f"""
        import torch
        def f(x):
            y = torch.relu(x)
            return y.{method}()
    """)
    as_function = codes(f"""
        import torch
        def f(x):
            y = torch.relu(x)
            return torch.{method}(y)
    """)
    assert "CRV009" in as_method and as_method == as_function

