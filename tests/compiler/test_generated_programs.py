"""Randomly generated break-heavy programs: carve must equal eager on every one of them.

Values, printed output, the mutated `log` list and raised exceptions are
compared over repeated calls that hit the cache (same shapes) and miss it
(new shapes).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys

import pytest
import torch

import carve
from tests.compiler.program_generator import generate_program

SEEDS = range(40)


def _load(tmp_path, seed):
    path = tmp_path / f"generated_{seed}.py"
    path.write_text(generate_program(seed))
    name = f"carve_generated_{seed}_{id(tmp_path)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def _run(fn, x, y):
    log = []
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            result = fn(x, y, log)
        except Exception as error:  # compared with eager's
            result = (type(error), str(error))
    return result, out.getvalue(), log


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and torch.allclose(a, b, atol=1e-5, equal_nan=True)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(p, q) for p, q in zip(a, b))
    return a == b


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_program_matches_eager(tmp_path, seed, backend):
    module, path = _load(tmp_path, seed)
    compiled = carve.compile(module.program, backend=backend)
    generator = torch.Generator().manual_seed(seed)
    shapes = [(4,), (4,), (4,), (6,), (4,)]
    for shape in shapes:
        x = torch.randn(shape, generator=generator) * 2
        y = torch.randn(shape, generator=generator) * 2
        expected = _run(module.program, x.clone(), y.clone())
        got = _run(compiled, x.clone(), y.clone())
        source = path.read_text()
        assert _same(got[0], expected[0]), f"result differs for seed {seed}:\n{source}"
        assert got[1] == expected[1], f"prints differ for seed {seed}:\n{source}"
        assert got[2] == expected[2], f"log differs for seed {seed}:\n{source}"
