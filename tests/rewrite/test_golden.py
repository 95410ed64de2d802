"""Golden files: each construct's rewrite is committed and regenerated here.

Update them after an intended change with:
    CARVE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/rewrite/test_golden.py
"""

from __future__ import annotations

import os
import subprocess
import sys

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from carve.rewriters.rewrite import rewrite_source

from conftest import golden_inputs, rewritten_path

UPDATE = os.environ.get("CARVE_UPDATE_GOLDEN") == "1"
INPUTS = golden_inputs()
EXPECTED_CONSTRUCTS = {
    "loop_break", "try_except_finally", "with_block", "print_io", "item_conversion",
    "data_dependent_if", "early_return", "nested_loops_continue", "methods_and_spellings",
}


def test_every_construct_has_a_golden_pair():
    assert {p.stem for p in INPUTS} == EXPECTED_CONSTRUCTS
    if not UPDATE:
        assert all(rewritten_path(p).exists() for p in INPUTS)


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.stem)
def test_rewrite_matches_golden(source):
    result = rewrite_source(source.read_text(), str(source))
    assert result.changed
    expected = rewritten_path(source)
    if UPDATE:
        expected.write_text(result.text)
    assert result.text == expected.read_text(), f"rewrite of {source.name} changed; see the module docstring"


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.stem)
def test_rewrite_is_idempotent(source):
    once = rewrite_source(source.read_text(), str(source))
    twice = rewrite_source(once.text, "rewritten.py")
    assert not twice.changed
    assert twice.text == once.text


@pytest.mark.parametrize("source", INPUTS, ids=lambda p: p.stem)
def test_rewrite_is_deterministic(source):
    text = source.read_text()
    assert rewrite_source(text, str(source)).text == rewrite_source(text, str(source)).text


def test_rewrite_is_the_same_across_processes_and_hash_seeds(tmp_path):
    """Set and dict orders must not leak into the output: compare runs under different hash seeds."""
    outputs = []
    for seed in ("1", "2", "12345"):
        out = tmp_path / seed
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-m", "carve", "rewrite", str(INPUTS[0].parent), "-o", str(out), "-q", "--exclude", "*.rewritten.py"],
            check=True, env=env,
        )
        outputs.append({p.name: p.read_bytes() for p in sorted(out.glob("*.py"))})
    assert len(outputs[0]) == len(INPUTS)
    assert outputs[0] == outputs[1] == outputs[2]


def _untouched_segments(text: str) -> list[str]:
    """The source text outside the top-level compiled definitions (decorators included), in order."""
    module = cst.parse_module(text)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = text.splitlines(keepends=True)
    compiled_ranges = []
    for statement in module.body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)) and "compile" in module.code_for_node(statement):
            # The position starts at `def`; the (one-line) decorators above belong to the function too.
            first = positions[statement].start.line - len(getattr(statement, "decorators", ()))
            compiled_ranges.append((first, positions[statement].end.line))
    segments, line = [], 1
    for first, last in compiled_ranges:
        segments.append("".join(lines[line - 1:first - 1]))
        line = last + 1
    segments.append("".join(lines[line - 1:]))
    return [s for s in segments if s]


@pytest.mark.parametrize("source", [p for p in INPUTS if p.stem != "methods_and_spellings"], ids=lambda p: p.stem)
def test_everything_outside_compiled_functions_is_kept_byte_for_byte(source):
    text = source.read_text()
    output = rewrite_source(text, str(source)).text
    position = 0
    for segment in _untouched_segments(text):
        found = output.find(segment, position)
        assert found >= 0, f"untouched text not kept verbatim:\n{segment}"
        position = found + len(segment)


def test_classes_and_functions_around_compiled_methods_keep_their_other_lines():
    source = next(p for p in INPUTS if p.stem == "methods_and_spellings")
    text = source.read_text()
    output = rewrite_source(text, str(source)).text
    # The uncompiled parts of the compiled class and the enclosing function, line for line.
    for snippet in [
        "class Base(nn.Module):\n    def forward(self, x):\n        return x + 1\n",
        "class Scaler(Base):\n    def __init__(self):\n        super().__init__()\n        self.__scale = 3.0\n        self.calls = 0\n",
        "def untouched(x):  # not compiled: kept byte for byte\n    return x+1\n",
        "    return affine\n",
        '"""Golden input: a module method using super() and a private name, a nested\ncompiled function',
    ]:
        assert snippet in output
