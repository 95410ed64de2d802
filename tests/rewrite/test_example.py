"""examples/rewrite_example.py: its rewrite is what docs/rewrite.md shows, and it trains the same."""

from __future__ import annotations

import re
from pathlib import Path

import torch

import carve
from carve.rewriters.rewrite import rewrite_source

from conftest import load_module

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rewrite_example.py"
DOC = ROOT / "docs" / "rewrite.md"


def rewritten_example() -> str:
    return rewrite_source(EXAMPLE.read_text(), str(EXAMPLE)).text


def test_docs_show_the_current_rewrite():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    original_function, rewritten_function = blocks[0], blocks[1]
    assert original_function in EXAMPLE.read_text()
    output = rewritten_example()
    assert rewritten_function in output, "docs/rewrite.md is stale: paste the new rewrite of train_epoch"
    # What the docs leave out is the input verbatim.
    start = EXAMPLE.read_text().index(original_function)
    before, after = EXAMPLE.read_text()[:start], EXAMPLE.read_text()[start + len(original_function):]
    assert output == before + rewritten_function + after


def test_example_trains_the_same_rewritten(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CARVE_BACKEND", "eager")
    emitted_path = tmp_path / "rewrite_example_emitted.py"
    emitted_path.write_text(rewritten_example())
    with monkeypatch.context() as patch:
        patch.setattr(carve, "compile", lambda fn=None, **_: fn if fn is not None else (lambda f: f))
        eager = load_module(EXAMPLE, "carve_example_eager")
    original = load_module(EXAMPLE, "carve_example_original")
    emitted = load_module(emitted_path, "carve_example_emitted")

    def train(module):
        torch.manual_seed(0)
        model = module.TinyRegressor()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        batches = [(torch.randn(32, 8), torch.randn(32)) for _ in range(4)]
        capsys.readouterr()
        losses = [module.train_epoch(model, optimizer, batches) for _ in range(3)]
        return losses, capsys.readouterr().out, [p.detach().clone() for p in model.parameters()]

    expected_losses, expected_printed, expected_parameters = train(eager)
    assert expected_printed.count("batch 0: loss") == 3
    for module in (original, emitted):
        losses, printed, parameters = train(module)
        assert losses == expected_losses
        assert printed == expected_printed
        assert all(torch.equal(a, b) for a, b in zip(parameters, expected_parameters))
