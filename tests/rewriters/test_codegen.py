"""Code generation and the line table on their own (every pass tested by itself): an
outlined function becomes the factory module `carve.compile` runs, and the code compiled from it
carries the user's file and lines, so a traceback from generated code points at the user's own
line. The RegionSet is replaced by a stand-in that runs each region as plain Python: nothing of
torch or the runtime is involved.
"""

from __future__ import annotations

import textwrap
import traceback

import libcst as cst
import pytest

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.codegen import FACTORY_NAME, LineTable, factory_module
from carve.rewriters.outline import outline_function

SOURCE = textwrap.dedent("""\
    def f(x, n):
        y = x * 2
        print("y", y)
        z = y / n
        w = z + 1
        return w
""")


class PlainRegions:
    """What the generated code calls on its RegionSet, running every region as written."""

    def __init__(self) -> None:
        self.breaks: list = []

    def graph(self, first, last):
        return lambda fn: fn

    def compiled(self, fn):
        return fn

    def graph_break(self, line, code):
        self.breaks.append((line, code))


def compiled_f(tmp_path):
    path = tmp_path / "user_code.py"
    path.write_text(SOURCE)
    module = cst.parse_module(SOURCE)
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    context = ModuleContext(module, filename=str(path))
    analysis = analyze_function(function, context, None, {})
    outlined = outline_function(function, analysis, context, regions_var="_carve_f", region_prefix="f")
    generated = factory_module(outlined, [], 1, str(path))
    namespace: dict = {}
    exec(LineTable(generated, str(path)).compile(), {}, namespace)
    regions = PlainRegions()
    return namespace[FACTORY_NAME](regions), generated, path, regions


def test_the_factory_returns_a_function_that_computes_as_the_original(tmp_path, capsys):
    f, generated, _, regions = compiled_f(tmp_path)
    assert "def _f_graph_region_" in generated.text  # the print split the body into regions
    assert f(3.0, 2.0) == 4.0
    assert capsys.readouterr().out == "y 6.0\n"
    assert regions.breaks == [(3, "CRV003")]  # the checkpoint before the print names its line


def test_a_traceback_from_a_region_names_the_users_file_and_line(tmp_path):
    f, _, path, _ = compiled_f(tmp_path)
    with pytest.raises(ZeroDivisionError) as raised:
        f(3.0, 0.0)
    last = traceback.extract_tb(raised.value.__traceback__)[-1]
    assert (last.filename, last.lineno, last.line) == (str(path), 4, "z = y / n")


def test_every_generated_line_maps_to_a_line_of_the_function(tmp_path):
    _, generated, _, _ = compiled_f(tmp_path)
    lines = generated.text.splitlines()
    assert set(range(1, len(lines) + 1)) <= set(generated.line_map)
    assert {original for original, _ in generated.line_map.values()} <= set(range(1, SOURCE.count("\n") + 1))
