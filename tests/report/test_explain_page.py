"""`carve.explain(fn)(*args).to_html(path)`: the page read back, line by line, as a user sees it."""

import contextlib
import io

import pytest
import torch

import carve
from tests.report import programs
from tests.report.reading import ReadPage, assert_self_contained


def explain_page(tmp_path, fn, *args, before_render=None):
    with contextlib.redirect_stdout(io.StringIO()):
        out = carve.explain(fn)(*args)
    if before_render is not None:
        before_render(out)
    path = tmp_path / "report.html"
    out.to_html(path)
    return out, ReadPage(path.read_text(encoding="utf-8"))


@pytest.fixture
def step_page(tmp_path):
    return explain_page(tmp_path, programs.step, torch.randn(4, 4), torch.randn(4, 4), 3)


def test_each_line_of_the_function_says_what_ran_it(step_page):
    _, page = step_page
    first = page.row_with("y = x @ w")
    assert first.kinds == {"line-graph"} and first.region == "1" and first.tag == "region 1"
    assert "graph region 1" in first.title and "region 1: 1 graph, 1 compile" in first.note
    second = page.row_with("z = torch.relu(y) + 1")
    assert second.kinds == {"line-graph"} and second.region == "1"
    printed = page.row_with('print("z", z.sum())')
    assert printed.kinds == {"line-rule"} and printed.rules == ("CRV003",) and printed.tag == "CRV003"
    assert "print() performs I/O" in printed.note and "hint:" in printed.note
    assert "ran 1\u00d7 as Python" in printed.note and "its tensor work runs in region 1" in printed.note
    assert "Log less often" in printed.title  # the rule's hint on hover too
    numbers = page.row_with("scale = n * 2 + 1")
    assert numbers.kinds == {"line-eager"} and "no tensor operations" in numbers.note
    assert page.row_with("for _ in range(n):").kinds == {"line-python"}
    assert page.row_with("z = z * 0.5").kinds == {"line-graph"}
    last = page.row_with("return z * scale")
    assert last.kinds == {"line-graph"} and last.region == "4"
    assert page.row_with('"""A docstring').kinds == set()
    assert page.row_with("def step(x, w, n):").kinds == set()
    # Every line of the function is listed once, in order.
    assert [row.number for row in page.rows] == list(range(page.rows[0].number, page.rows[-1].number + 1))


def test_each_region_shows_its_graphs_compiles_fx_code_and_guards(step_page):
    out, page = step_page
    assert {"region-1", "region-2", "region-3", "region-4"} <= page.ids
    assert "FX code of graph 1 (4 ops)" in page.summaries
    assert any(summary.startswith("Dynamo's guards of version 1 (") for summary in page.summaries)
    fx = [text for text in page.pre if "def forward" in text]
    assert len(fx) == out.graph_count and any("relu" in text for text in fx)
    guards = [text for text in page.pre if "TENSOR_MATCH" in text]
    assert guards, "Dynamo's guards are shown"
    region_two = next(h for h in page.headings if h.startswith("region 2 "))
    assert "runs as Python: no tensor operations" in region_two
    assert f"{out.graph_count} graphs" in page.text


def test_the_page_gives_the_advice_explain_gives(step_page):
    out, page = step_page
    reason = out.break_reasons[0]
    assert reason.code == "CRV003"
    assert reason.message in page.text and f"hint: {reason.hint}" in page.text
    assert "What carve says" in page.headings
    assert "Regions run as Python" in page.headings


def test_the_page_is_self_contained(step_page):
    _, page = step_page
    assert_self_contained(page)
    assert all(link.lstrip("#") in page.ids for link in page.links if link.startswith("#"))


def test_a_callee_compiled_on_its_own_has_its_own_section(tmp_path):
    _, page = explain_page(tmp_path, programs.caller, torch.randn(3))
    assert any(h.startswith("caller ") for h in page.headings)
    assert any(h.startswith("callee_prints ") for h in page.headings)
    call = page.row_with("h = callee_prints(h)")
    assert call.kinds == {"line-rule"} and call.rules == ("CRV016",)
    inside = page.row_with('print("callee", y.shape)')
    assert inside.kinds == {"line-rule"} and inside.rules == ("CRV003",)
    # Regions are numbered across the page: the callee's come after the caller's.
    assert page.row_with("y = x.sin()").region == "3"


def test_a_region_the_cost_check_runs_as_python_is_marked_so(tmp_path):
    # The cost check's verdict hangs on this machine's timing: the region is given it here.
    def faster_as_python(out):
        last = max(out.region_sets[0].regions, key=lambda region: region.first_line)
        last.eager_reason = "faster as Python: 3.1 us as Python, 40.2 us compiled"

    _, page = explain_page(tmp_path, programs.step, torch.randn(4, 4), torch.randn(4, 4), 3,
                           before_render=faster_as_python)
    row = page.row_with("return z * scale")
    assert row.kinds == {"line-cost"} and "faster as Python: 3.1 us" in row.note


def test_a_function_with_no_break_is_one_graph_region(tmp_path):
    out, page = explain_page(tmp_path, programs.no_break, torch.randn(3))
    rows = [page.row_with("y = x.sin()"), page.row_with("return y * 2")]
    assert all(row.kinds == {"line-graph"} and row.region == "1" for row in rows)
    assert out.graph_break_count == 0 and "No graph breaks" in page.text


def test_a_recompile_says_which_guard_failed(tmp_path):
    from carve.report import regions_of, write_function_page

    compiled = carve.compile(programs.caller, backend="eager", dynamic=False)
    for size in (3, 5):
        compiled(torch.randn(size))
    path = tmp_path / "caller.html"
    write_function_page(regions_of(compiled), path)
    page = ReadPage(path.read_text(encoding="utf-8"))
    first = page.row_with("h = x + 1")
    assert first.kinds == {"line-graph"} and "2 compiles" in first.note
    assert any(summary.startswith("Why Dynamo compiled it again (") for summary in page.summaries)
    assert any("size mismatch" in text and "expected 3, actual 5" in text for text in page.pre)


def test_an_explain_of_several_calls_shows_each_regions_calls_and_the_time_split(tmp_path):
    with contextlib.redirect_stdout(io.StringIO()):
        out = carve.explain(programs.step, calls=3)(torch.randn(4, 4), torch.randn(4, 4), 3)
    path = tmp_path / "report.html"
    out.to_html(path)
    text = path.read_text(encoding="utf-8")
    assert "over 3 calls" in text and "in compiled code" in text and "Python between regions" in text
    # Region 1 (`y = x @ w` ...) runs once per call; its card counts the three calls.
    card = text[text.index('id="region-1"'):text.index('id="region-2"')]
    assert "<b>3</b> calls" in card and "ms</b> in compiled code" in card
    page = ReadPage(text)
    assert page.row_with("y = x @ w").kinds == {"line-graph"}


def test_the_advice_on_where_to_compile_is_on_the_page(tmp_path):
    advice = "only m.py:6-6 runs compiled (97% of the compiled time); the rest runs as Python."

    def with_advice(out):
        out.advice = [advice]

    _, page = explain_page(tmp_path, programs.step, torch.randn(4, 4), torch.randn(4, 4), 3, before_render=with_advice)
    assert "Where to compile" in page.text and advice in page.text
