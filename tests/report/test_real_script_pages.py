"""Pages of two real scripts (tests/real_scripts: DCGAN's training epoch, MNIST's train and test
epochs), made as a user would: `carve.explain(train, calls=2)(...).to_html(path)`, read back
line by line. Each `.item()` line says CRV004, the forward lines are in a graph region, and the
page gives each region's calls and the time split."""

from __future__ import annotations

import contextlib
import io

import pytest

import carve
from tests.real_scripts.harness import CASES, load, unload
from tests.report.reading import ReadPage, assert_self_contained


def page_of(tmp_path, case_name, function_name, args=()):
    run = load(CASES[case_name], "eager")
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            out = carve.explain(getattr(run.module, function_name), backend="aot_eager", calls=2)(*args(run.module))
        path = tmp_path / f"{case_name}.html"
        out.to_html(path)
        text = path.read_text(encoding="utf-8")
    finally:
        unload(run)
    page = ReadPage(text)
    assert_self_contained(page)
    return out, page, text


@pytest.mark.parametrize("case_name, function_name, args, item_line, graph_line", [
    ("dcgan", "train", lambda module: (), "D_x = output.mean().item()", "errD_real = criterion(output, label)"),
    ("mnist", "train", lambda module: (module.args, module.model, module.device, module.train_loader,
                                       module.optimizer, 1),
     "100. * batch_idx / len(train_loader), loss.item()))", "loss = F.nll_loss(output, target)"),
])
def test_a_real_scripts_page_says_what_ran_each_line(tmp_path, case_name, function_name, args, item_line, graph_line):
    out, page, text = page_of(tmp_path, case_name, function_name, args)
    assert out.graph_count >= 1 and out.calls == 2
    assert "CRV004" in page.row_with(item_line).rules
    assert page.row_with(graph_line).kinds == {"line-graph"}
    assert "over 2 calls" in text and "in compiled code" in text
    assert any(card.startswith("region-") for card in page.ids)
