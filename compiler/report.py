"""The HTML report: what carve did to a program, shown on the user's own source.

    carve.explain(step)(model, x, y, 0).to_html("step.html")   # one call, compiled afresh
    CARVE_REPORT=report/ python train.py                        # every compiled function, at exit

One self-contained page (inline style, no script, no external asset: carve.rewriters.html_page)
per explained call or compiled function. Each function's source, and that of the callees carve
compiled on their own, is listed with every line coloured by what ran it:

    34             def train_step(model, x, y, step):
    35   CRV016        prediction = model(x, verbose=step == 0)    CRV016 model() has a graph break inside
    36   region 1      loss = torch.nn.functional.mse_loss(...)    region 1: 1 graph, 1 compile, 0.09 s
    37   Python        if step % 5 == 0:
    38   CRV004 ...        print(f"step {step}: loss {loss.item():.5f}")

then, per graph region, who runs it and why, its graphs, compiles and compile time, the FX code of
each graph and Dynamo's guards of each version (both collapsed), and the advice `carve.explain`
prints: every break with its rule, message and hint, linked to its line.

Under `CARVE_REPORT=DIR` the compiler hands every compiled function it makes to `track`, which
holds it weakly (carve keeps no reference eager would not keep); at exit each one that ran and is
still alive gets its page in DIR, and DIR/index.html links them.
"""

from __future__ import annotations

import ast
import atexit
import itertools
import linecache
import os
import re
import sys
import weakref
from dataclasses import dataclass, field
from pathlib import Path

from carve.explain_session import fresh_tables
from carve.rewriters.html_page import (
    FunctionSpan, SourceLine, display_path, escape, function_spans, indentation, legend, page, rule_note,
    source_table,
)
from carve.rewriters.rules import rule

REPORT_ENV = "CARVE_REPORT"


# ---- one function: its source lines, each with what ran it ---------------------------------------

@dataclass
class FunctionRun:
    """One compiled function as the page shows it, read from its RegionSet (or a whole-call
    capture, which reads like one)."""

    name: str
    filename: str
    regions: list  # its GraphRegions, in source order
    findings: dict  # line -> Finding (the static analysis)
    eager_calls: dict  # (line, code) -> how often the statement ran as Python
    # Why the whole function runs as written (None: carve compiled it).
    eager_reason: str | None = None
    numbers: dict = field(default_factory=dict)  # id(region) -> its number on the page
    # The call from which it ran as written, every region settled as Python (compiler/as_written.py).
    as_written_from: int | None = None

    @classmethod
    def of(cls, regions) -> FunctionRun:
        graph_regions = sorted(regions.regions, key=lambda region: (region.first_line, region.last_line))
        return cls(regions.name, regions.filename, graph_regions, dict(regions.findings), dict(regions.eager_calls),
                   getattr(regions, "eager_reason", None), as_written_from=getattr(regions, "as_written_from", None))

    def anchor(self, line: int) -> str:
        return f"{_slug(self.name)}-L{line}"


@dataclass
class EagerFunction:
    """A compiled function carve runs as written, for a stated reason (what its RegionSet would
    say of it, had it one)."""

    name: str
    filename: str
    eager_reason: str
    regions: list = field(default_factory=list)
    findings: dict = field(default_factory=dict)
    eager_calls: dict = field(default_factory=dict)


@dataclass
class _Ran:
    """What ran one statement."""

    kind: str  # a kind of html_page.KINDS
    tag: str = ""
    note: str = ""  # HTML
    title: str = ""
    region: int | None = None
    rules: tuple[str, ...] = ()


def region_ran_as_python(region) -> str | None:
    """Why a graph region ran as Python (None: Dynamo ran its graphs, or it has not run)."""
    path = region.capture_path
    if path.kind != "dynamo":
        return path.reason
    if region.capture.skipped:
        return "torch._dynamo gave up on it (a graph break it cannot resume after, such as one in a loop)"
    if region.compile_times and not region.graphs:
        return "Dynamo traced it and made no graph (no tensor operation on the path taken)"
    return None


def _python_kind(reason: str) -> str:
    return "cost" if reason.startswith("faster as Python") else "eager"


def source_lines(run: FunctionRun) -> list[SourceLine]:
    """The function's source, each line saying what ran it; [] when the source is not found."""
    text_lines = linecache.getlines(run.filename)
    span = _span_of(run, "".join(text_lines))
    if span is None:
        return []
    ran: dict[int, _Ran] = {}
    for first, last, header, enclosing in _statements(span.node, text_lines):
        what = _what_ran(run, first, last, header, enclosing)
        for number in range(first, last + 1):
            # Later lines of a statement: its colour, no label.
            ran[number] = what if number == first else _Ran(what.kind, "", "", what.title, what.region, what.rules)
    rows = []
    labelled: set = set()
    indent = indentation(text_lines[span.def_line - 1])  # a method is shown dedented
    for number in range(span.first_line, span.last_line + 1):
        text = text_lines[number - 1].rstrip("\n")
        row = SourceLine(number, text.removeprefix(indent), anchor=run.anchor(number))
        line_ran = ran.get(number)
        if line_ran is not None:
            row.kind, row.tag, row.note, row.title = line_ran.kind, line_ran.tag, line_ran.note, line_ran.title
            row.region, row.rules = line_ran.region, line_ran.rules
            row.alt = line_ran.region is not None and line_ran.region % 2 == 0
            if line_ran.kind not in ("rule", "python") and line_ran.tag:
                # A region, or a function run as written, is labelled beside its first line only.
                group = line_ran.region if line_ran.region is not None else line_ran.kind
                if group in labelled:
                    row.tag, row.note = "", ""
                labelled.add(group)
        rows.append(row)
    return rows


def _span_of(run: FunctionRun, text: str) -> FunctionSpan | None:
    """The function's definition in its file: by qualified name, the one holding its regions and
    findings (a name defined twice), else the innermost definition holding them."""
    spans = function_spans(text)
    known = [region.first_line for region in run.regions if region.filename == run.filename] + list(run.findings)
    named = [span for span in spans if span.qualname == run.name]
    for span in named:
        if all(span.first_line <= line <= span.last_line for line in known):
            return span
    if named:
        return named[0]
    holding = [span for span in spans if known and all(span.first_line <= line <= span.last_line for line in known)]
    return min(holding, key=lambda span: span.last_line - span.first_line) if holding else None


def _statements(node: ast.FunctionDef | ast.AsyncFunctionDef,
                lines: list[str]) -> list[tuple[int, int, bool, tuple[int, ...]]]:
    """(first line, last line, is a compound statement's header, the first lines of the compound
    statements around it) of each statement of the function's body, outer before inner; a nested
    definition is one statement."""
    found: list[tuple[int, int, bool, tuple[int, ...]]] = []

    def visit(body: list[ast.stmt], enclosing: tuple[int, ...]) -> None:
        for index, statement in enumerate(body):
            if index == 0 and not enclosing and _is_docstring(statement):
                continue
            blocks = _blocks(statement)
            if not blocks:
                found.append((statement.lineno, statement.end_lineno or statement.lineno, False, enclosing))
                continue
            end = max(statement.lineno, blocks[0][0].lineno - 1)
            while end > statement.lineno and lines[end - 1].strip()[:1] in ("", "#"):
                end -= 1
            found.append((statement.lineno, end, True, enclosing))
            for block in blocks:
                visit(block, enclosing + (statement.lineno,))

    visit(node.body, ())
    return found


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    """The statement blocks of a compound statement, in order ([] for a nested definition)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    blocks = [block for name in ("body", "orelse", "finalbody") if (block := getattr(statement, name, None))]
    blocks += [handler.body for handler in getattr(statement, "handlers", None) or []]
    blocks += [case.body for case in getattr(statement, "cases", None) or []]
    return blocks


def _what_ran(run: FunctionRun, first: int, last: int, header: bool, enclosing: tuple[int, ...]) -> _Ran:
    if run.eager_reason is not None:
        return _Ran("eager", "Python", f"the function runs as written: {escape(run.eager_reason)}",
                    f"the function runs as written: {run.eager_reason}")
    region = _region_at(run, first)
    number = run.numbers.get(id(region)) if region is not None else None
    python_reason = region_ran_as_python(region) if region is not None else None
    rules = _rules_at(run, first, last, region, number, python_reason is None, enclosing)
    if rules:
        codes = tuple(code for code, _, _ in rules)
        notes = "".join(rule_note(code, rule(code).title, message, rule(code).hint, extra)
                        for code, message, extra in rules)
        title = "; ".join(f"{code} {rule(code).title}, hint: {rule(code).hint}" for code in codes)
        return _Ran("rule", " ".join(codes), notes, f"Python because of {title}", number, codes)
    if number is not None:
        link = f"<a href=\"#region-{number}\">region {number}</a>"
        if python_reason is not None:
            return _Ran(_python_kind(python_reason), f"region {number}", f"{link} runs as Python: {escape(python_reason)}",
                        f"region {number} runs as Python: {python_reason}", number)
        return _Ran("graph", f"region {number}", f"{link}: {_region_summary(region)}",
                    f"graph region {number}, captured by Dynamo ({region.capture_path.reason})", number)
    if header:
        return _Ran("python", "Python", "", "Python control flow: its test or loop runs as Python")
    return _Ran("python", "Python", "", "a Python statement with no graph work")


def _region_at(run: FunctionRun, line: int):
    holding = [region for region in run.regions
               if region.filename == run.filename and region.first_line <= line <= region.last_line]
    return min(holding, key=lambda region: region.last_line - region.first_line) if holding else None


def _rules_at(run: FunctionRun, first: int, last: int, region, number: int | None, region_compiled: bool,
              enclosing: tuple[int, ...]) -> list[tuple[str, str, str]]:
    """(code, message, extra HTML) of each rule that keeps the statement on lines first..last in
    Python: a static finding, a break Dynamo met there, a checkpoint that ran there. A finding
    inside a compiled region that torch.compile traces (a whole call's) is Dynamo's, not Python."""
    found: dict[str, tuple[str, str, str]] = {}
    # A region ending at the statement's first line, outside the statements around it, holds the
    # statement's tensor work moved out of it (`print(y.mean())`); otherwise the statement is
    # inside the region (`if verbose: print(...)` kept in it), where Dynamo breaks the graph.
    inside = region is not None and not (
        region.last_line == first and not any(region.first_line <= line <= region.last_line for line in enclosing))

    def add(code: str, message: str, line: int, when: str, stack: list | None = None) -> None:
        found.setdefault(code, (code, message, _rule_extra(run, line, code, when, number, inside, stack)))

    for line in range(first, last + 1):
        finding = run.findings.get(line)
        if finding is not None and not (inside and region_compiled and not rule(finding.code).breaks_torch_compile):
            add(finding.code, finding.message, line, "before the run")
        for each in run.regions:
            for event in each.break_events:
                if event.filename == run.filename and event.lineno == line:
                    add(event.code, event.message, line, "while Dynamo traced it", event.user_stack)
        for checked_line, code in run.eager_calls:
            if checked_line == line:
                add(code, rule(code).title, line, "before the run")
    return list(found.values())


def _rule_extra(run: FunctionRun, line: int, code: str, when: str, region: int | None, inside: bool,
                stack: list | None) -> str:
    """When the rule was found, how often the statement ran as Python, its region, the calls into
    the callee that breaks."""
    text = escape(f"found {when}")
    calls = run.eager_calls.get((line, code))
    if calls:
        text += escape(f"; ran {calls}\u00d7 as Python")
    if region is not None:
        link = f"<a href=\"#region-{region}\">region {region}</a>"
        text += f"; inside {link}: Dynamo breaks its graph here when it runs" if inside \
            else f"; its tensor work runs in {link}"
    for filename, number, function, source in (stack or [])[1:]:
        text += (f"<br>via {escape(display_path(filename))}:{number} in {escape(function)}: "
                 f"<code>{escape(source.strip())}</code>")
    return text


def _region_summary(region) -> str:
    graphs, compiles = len(region.graphs), len(region.compile_times)
    if not compiles:
        return "not compiled yet (not reached)"
    return f"{_plural(graphs, 'graph')}, {_plural(compiles, 'compile')}, {sum(region.compile_times):.2f} s compiling"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "function"


# ---- the page -----------------------------------------------------------------------------------

def render(output, title: str) -> str:
    """The page of an ExplainOutput: carve.explain's, or one compiled function's at exit."""
    runs = [FunctionRun.of(regions) for regions in output.region_sets]
    numbers = itertools.count(1)
    for run in runs:
        run.numbers.update((id(region), next(numbers)) for region in run.regions)
    listed = [source_lines(run) for run in runs]
    # (file, line) -> the row to link to, from the advice.
    anchors = {(run.filename, line.number): line.anchor for run, lines in zip(runs, listed) for line in lines}
    body = [_summary(output, runs), legend()]
    if not runs:
        body.append("<p>carve compiled no function in this run: it ran as written (the <code>carve</code> "
                    "logger says why).</p>")
    times = getattr(output, "time_by_region", {})
    for index, (run, lines) in enumerate(zip(runs, listed)):
        body.append(_function_section(run, lines, [r.name for r in runs[:index]].count(run.name), times))
    body.append(_advice(output, runs, anchors))
    return page(title, "\n".join(body))


def write_page(output, path, title: str = "carve report") -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(output, title), encoding="utf-8")
    return target


def _summary(output, runs: list[FunctionRun]) -> str:
    regions = [region for run in runs for region in run.regions]
    as_python = sum(1 for region in regions if region_ran_as_python(region) is not None)
    items = [
        (len(runs), "compiled function" if len(runs) == 1 else "compiled functions"),
        (len(regions), "graph region" if len(regions) == 1 else "graph regions"),
        (output.graph_count, "graph" if output.graph_count == 1 else "graphs"),
        (output.graph_break_count, "graph break" if output.graph_break_count == 1 else "graph breaks"),
        (f"{sum(output.compile_times):.2f} s", "compiling"),
        (output.eager_statements_run, "Python statements run at breaks"),
    ]
    if as_python:
        items.append((as_python, "region run as Python" if as_python == 1 else "regions run as Python"))
    items.extend(_time_split(output))
    text = "".join(f"<span><b>{escape(value)}</b> {escape(label)}</span>" for value, label in items)
    return f"<p class=\"summary\">{text}</p>\n"


def _time_split(output) -> list[tuple[str, str]]:
    """A `carve.explain(fn, calls=n)` run's time, compiling aside: shares in compiled code, in
    regions run as Python, and in Python between regions."""
    split = output.time_split()
    if split is None:
        return []
    running, _, compiled, python, between = split
    return [(f"{running * 1e3:.1f} ms", f"over {_plural(output.calls, 'call')}"),
            (f"{100 * compiled / running:.0f}%", "in compiled code"),
            (f"{100 * python / running:.0f}%", "in regions run as Python"),
            (f"{100 * between / running:.0f}%", "Python between regions")]


def _function_section(run: FunctionRun, lines: list[SourceLine], version: int, times: dict) -> str:
    where = display_path(run.filename) + (f":{lines[0].number}-{lines[-1].number}" if lines else "")
    again = f" <span class=\"muted\">(built again: version {version + 1})</span>" if version else ""
    section_id = _slug(run.name) + (f"-{version + 1}" if version else "")
    parts = [f"<section class=\"function\" id=\"{escape(section_id)}\">",
             f"<h2>{escape(run.name)} <span class=\"where\">{escape(where)}</span>{again}</h2>"]
    if run.eager_reason is not None:
        parts.append(f"<p>carve runs this function as written: {escape(run.eager_reason)}</p>")
    if run.as_written_from is not None:
        parts.append(f"<p>Every region settled as Python: from its call {run.as_written_from} on, carve ran this "
                     f"function as written (the counts of statements run as Python stop there).</p>")
    parts.append(source_table(lines) if lines else
                 f"<p class=\"muted\">The source of {escape(run.name)} is not available.</p>")
    if run.regions:
        parts.append("<h3>Graph regions</h3>")
        parts.extend(_region_card(run, region, times.get(id(region), getattr(region, "report_times", None)))
                     for region in run.regions)
    parts.append("</section>")
    return "\n".join(parts)


def _region_card(run: FunctionRun, region, times=None) -> str:
    """One region: who ran it and why, its graphs, compiles, FX code and guards; with `times`
    (explain_session.RegionTime, a `carve.explain(fn, calls=n)` run), its calls and their time."""
    number = run.numbers[id(region)]
    python_reason = region_ran_as_python(region)
    if python_reason is None:
        kind, who = "graph", f"captured by Dynamo ({region.capture_path.reason})"
    else:
        kind, who = _python_kind(python_reason), f"runs as Python: {python_reason}"
    lines = f"line {region.first_line}" if region.first_line == region.last_line \
        else f"lines {region.first_line}-{region.last_line}"
    if region.filename == run.filename:
        lines = f"<a href=\"#{run.anchor(region.first_line)}\">{escape(lines)}</a>"
    else:
        lines = escape(f"{display_path(region.filename)} {lines}")
    compiles = len(region.compile_times)
    graphs = len(region.graphs)
    stats = [
        (graphs, "graph" if graphs == 1 else "graphs"),
        (compiles, "compile" if compiles == 1 else "compiles"),
        (max(compiles - 1, 0), "recompile" if compiles == 2 else "recompiles"),
        (f"{sum(region.compile_times):.2f} s", "compiling"),
        (" + ".join(str(ops) for ops in region.ops_per_graph) or "0", "ops in its graphs"),
    ]
    parts = [f"<div class=\"card\" id=\"region-{number}\">",
             f"<h4><span class=\"swatch line-{kind}\">region {number}</span> {lines}: {escape(who)}</h4>"]
    if times is not None and times.calls:
        stats[:0] = [(times.calls, "call" if times.calls == 1 else "calls"),
                     (f"{times.compiled * 1e3:.2f} ms", "in compiled code"),
                     (f"{times.python * 1e3:.2f} ms", "as Python")]
    if compiles:
        parts.append("<p class=\"stats\">" + "".join(f"<span><b>{escape(value)}</b> {escape(label)}</span>"
                                                    for value, label in stats) + "</p>")
    else:
        parts.append("<p class=\"stats muted\">Not compiled: no call reached it since carve built the function.</p>")
    layers = region.capture.layers_compiled_once
    if layers:
        parts.append(f"<p>layers compiled once each: {escape(', '.join(layers))} (no_grad, Inductor)</p>")
    for event in region.break_events:
        if event.filename != run.filename:  # a break in a callee's file: no line of this page shows it
            where = escape(f"at {display_path(event.filename)}:{event.lineno}")
            parts.append(rule_note(event.code, rule(event.code).title, event.message, rule(event.code).hint, where))
    for index, (graph, ops) in enumerate(zip(region.graphs, region.ops_per_graph), 1):
        code = str(getattr(graph, "code", graph)).strip("\n")
        parts.append(f"<details class=\"fx\"><summary>FX code of graph {index} ({_plural(ops, 'op')})</summary>"
                     f"<pre>{escape(code)}</pre></details>")
    recompiles = region.capture.describe_recompiles()
    if recompiles:
        parts.append(f"<details class=\"recompiles\"><summary>Why Dynamo compiled it again "
                     f"({_plural(len(recompiles), 'guard')} failed)</summary><pre>{escape(chr(10).join(recompiles))}"
                     "</pre></details>")
    # Dynamo lists the newest version first.
    for index, guards in enumerate(reversed(region.guards), 1):
        parts.append(f"<details class=\"guards\"><summary>Dynamo's guards of version {index} "
                     f"({_plural(len(guards), 'guard')})</summary><pre>{escape(chr(10).join(guards))}</pre></details>")
    parts.append("</div>")
    return "\n".join(parts)


def _advice(output, runs: list[FunctionRun], anchors: dict) -> str:
    """What carve.explain says: each break with its rule and hint, linked to its line; the
    regions that ran as Python and why; where to compile instead, when the time says so."""
    parts = ["<section class=\"advice\"><h2>What carve says</h2>"]
    if getattr(output, "advice", None):
        parts.append("<h3>Where to compile</h3>\n<ul>" + "".join(f"<li>{escape(text)}</li>" for text in output.advice)
                     + "</ul>")
    if not output.break_reasons and not output.kept_in_python:
        parts.append("<p>No graph breaks: every statement with tensor work ran in a graph.</p>")
    for heading, reasons in (("Graph breaks (torch.compile breaks here too)", output.break_reasons),
                             ("Kept in Python by carve (not graph breaks under torch.compile)", output.kept_in_python)):
        if not reasons:
            continue
        parts.append(f"<h3>{escape(heading)}</h3>\n<ol class=\"advice\">")
        for reason in reasons:
            where = escape(f"{display_path(reason.filename)}:{reason.line}")
            anchor = anchors.get((reason.filename, reason.line))
            if anchor is not None:
                where = f"<a href=\"#{escape(anchor)}\">{where}</a>"
            source = f"<br><code>{escape(reason.source_line.strip())}</code>" if reason.source_line.strip() else ""
            via = "".join(f"<br>via {escape(display_path(f))}:{n} in {escape(fn)}: <code>{escape(s.strip())}</code>"
                          for f, n, fn, s in reason.user_stack[1:])
            parts.append(f"<li>{where}: <b>{escape(reason.code)}</b> {escape(reason.title)}: {escape(reason.message)}"
                         f" <span class=\"muted\">(found {escape(reason.found)})</span>{source}{via}"
                         f"<p>hint: {escape(reason.hint)}</p></li>")
        parts.append("</ol>")
    as_python = [(run.numbers[id(region)], reason) for run in runs for region in run.regions
                 if (reason := region_ran_as_python(region)) is not None]
    if as_python:
        parts.append("<h3>Regions run as Python</h3>\n<ul>")
        parts.extend(f"<li><a href=\"#region-{number}\">region {number}</a>: {escape(reason)}</li>"
                     for number, reason in as_python)
        parts.append("</ul>")
    parts.append("</section>")
    return "\n".join(parts)


# ---- CARVE_REPORT: a page per compiled function, at exit ------------------------------------------

# The compiled functions made while CARVE_REPORT is set, in order of creation, held weakly.
_tracked: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_order = itertools.count()
# The directory the exit hook writes to, once it is registered (the first compiled function's).
_exit_directory: list[str] = []


def track(compiled) -> None:
    """Called for each compiled function carve makes: under CARVE_REPORT=DIR its page is written
    at exit. carve.explain's own compiles are not the program's and are left out."""
    directory = os.environ.get(REPORT_ENV)
    if not directory or fresh_tables() is not None:
        return
    _tracked[next(_order)] = compiled
    if not _exit_directory:
        _exit_directory.append(directory)
        atexit.register(_write_at_exit, directory)


def _write_at_exit(directory: str) -> None:
    try:
        index = write_reports(directory)
    except Exception as error:  # the program's exit must not fail for its report
        sys.stderr.write(f"carve: could not write the report to {directory}: {type(error).__name__}: {error}\n")
        return
    if index is not None:
        sys.stderr.write(f"carve: report written to {index}\n")


def write_reports(directory) -> Path | None:
    """A page for each tracked compiled function that ran, and DIR/index.html linking them;
    None when none ran."""
    target = Path(directory)
    entries = []
    names: set[str] = set()
    for compiled in list(_tracked.values()):
        regions = regions_of(compiled)
        if regions is None:
            continue
        name = _page_name(regions, names)
        try:
            output = write_function_page(regions, target / name)
        except Exception as error:  # one page's failure must not cost the others
            sys.stderr.write(f"carve: could not write the report of {regions.name}: {type(error).__name__}: {error}\n")
            continue
        entries.append((name, regions, output))
    if not entries:
        return None
    index = target / "index.html"
    index.write_text(_index(entries), encoding="utf-8")
    return index


def write_function_page(regions, path):
    """Write the page of one compiled function's `regions_of`; returns its ExplainOutput."""
    from carve.explanation import summarize

    # The regions' calls and their time, timed under CARVE_REPORT (explain_session.timed_caller).
    times = {id(region): region.report_times for region in getattr(regions, "regions", ())
             if getattr(region, "report_times", None) is not None}
    output = summarize(None, [regions], times)
    write_page(output, path, f"carve report: {regions.name}")
    return output


def regions_of(compiled):
    """What ran the calls of a CompiledFunction (compiler/api.py): its RegionSet, its whole-call
    capture, or the function itself for a stated reason; None before its first call."""
    from carve.api import WholeCall

    impl, build = compiled._impl, compiled._build
    if impl is None:
        return None
    if impl is compiled.fn and compiled._eager_reason is not None:
        code = compiled.fn.__code__
        return EagerFunction(compiled.fn.__qualname__, code.co_filename, compiled._eager_reason)
    if isinstance(impl, WholeCall) and not impl.split_runs:
        return impl
    return build.regions if build is not None else None


def _page_name(regions, taken: set[str]) -> str:
    stem = f"{Path(regions.filename).stem}.{_slug(regions.name)}"
    name, count = f"{stem}.html", 1
    while name in taken:
        count += 1
        name = f"{stem}-{count}.html"
    taken.add(name)
    return name


def _index(entries: list) -> str:
    rows = []
    for name, regions, output in entries:
        rows.append(f"<tr><td><a href=\"{escape(name)}\">{escape(regions.name)}</a></td>"
                    f"<td>{escape(display_path(regions.filename))}</td><td>{len(regions.regions)}</td>"
                    f"<td>{output.graph_count}</td><td>{output.graph_break_count}</td>"
                    f"<td>{sum(output.compile_times):.2f} s</td></tr>")
    table = ("<table class=\"counts\"><tr><th>compiled function</th><th>file</th><th>graph regions</th>"
             "<th>graphs</th><th>graph breaks</th><th>compile time</th></tr>\n" + "\n".join(rows) + "\n</table>")
    program = " ".join(sys.argv) or "the program"
    return page("carve report", f"<p>One page per compiled function of <code>{escape(program)}</code>.</p>\n{table}")


__all__ = ["EagerFunction", "FunctionRun", "REPORT_ENV", "regions_of", "render", "source_lines", "track",
           "write_function_page", "write_page", "write_reports"]
