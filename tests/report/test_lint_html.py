"""`carve lint --output-format html`: files, functions and findings, each on its source."""

import subprocess
import sys
import textwrap

from tests.lint.conftest import ROOT, run_cli
from tests.report.reading import ReadPage, assert_self_contained

TRAIN = """
import torch


@torch.compile
def step(model, x, y):
    prediction = model(x)
    loss = torch.nn.functional.mse_loss(prediction, y)
    print("loss", loss)
    return loss


def unrelated(a, b):
    return a + b
"""

MODEL = """
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    @torch.compile
    def forward(self, x):
        h = self.fc(x)
        scale = h.max().item()
        h = h / scale
        return h.relu()
"""


def lint_tree(tmp_path):
    for name, text in (("pkg/train.py", TRAIN), ("pkg/model.py", MODEL)):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return run_cli("pkg", "--output-format", "html", cwd=tmp_path)


def test_the_page_lists_files_functions_and_findings_on_their_source(tmp_path):
    result = lint_tree(tmp_path)
    assert result.returncode == 1, result.stderr  # findings, as with every output format
    page = ReadPage(result.stdout)
    assert_self_contained(page)
    assert any(h.startswith("pkg/model.py") for h in page.headings)
    assert any(h.startswith("pkg/train.py") for h in page.headings)
    assert any(h.startswith("Net.forward lines") for h in page.headings)
    assert any(h.startswith("step lines") for h in page.headings)
    assert not any(h.startswith("unrelated") for h in page.headings)

    printed = page.row_with('print("loss", loss)')
    assert printed.kinds == {"line-rule"} and printed.rules == ("CRV003",) and printed.tag == "CRV003"
    assert "print() performs I/O" in printed.note and "hint:" in printed.note
    item = page.row_with("scale = h.max().item()")
    assert item.kinds == {"line-rule"} and item.rules == ("CRV004",)
    # The source around each finding, uncoloured, and the method shown dedented.
    around = page.row_with("loss = torch.nn.functional.mse_loss(prediction, y)")
    assert around.kinds == set() and not around.tag
    assert page.row_with("h = self.fc(x)").code.startswith("    h = self.fc(x)")
    # Counts per rule at the top.
    assert "CRV003" in page.text and "I/O or logging" in page.text


def test_a_clean_tree_says_so(tmp_path):
    (tmp_path / "clean.py").write_text("import torch\n\n@torch.compile\ndef f(x):\n    return x + 1\n")
    result = run_cli("clean.py", "--output-format", "html", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    page = ReadPage(result.stdout)
    assert "All checks passed" in page.text and not page.rows


def test_the_html_reporter_does_not_import_torch():
    code = "import sys, carve.rewriters.lint.html_report; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip() == "False", result.stderr
