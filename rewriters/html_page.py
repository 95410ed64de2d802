"""The page carve's HTML reports share: one self-contained file (inline style, no script, no
external asset) that lists the user's source line by line, each line coloured by what runs it.

    rows = [SourceLine(35, "    prediction = model(x)", kind="rule", tag="CRV016", rules=("CRV016",)),
            SourceLine(36, "    loss = mse_loss(prediction, y)", kind="graph", tag="region 1", region=1)]
    html = page("carve report: train_step", legend() + source_table(rows))

renders as

    <tr class="line line-rule" data-rule="CRV016"><td class="no">35</td><td class="tag">CRV016</td>
        <td class="code">    prediction = model(x)</td><td class="note">...</td></tr>

`carve.explain(...).to_html()` and `CARVE_REPORT` (compiler/report.py) and
`carve lint --output-format html` (lint/html_report.py) build on it, so the two read alike.
The line kinds, and what each says:

    graph    inside a graph region captured by Dynamo
    rule     Python because of a rule (CRVxxx), found before the run or while tracing
    cost     Python because the cost check found it faster
    eager    Python for another stated reason (no tensor operations, a backend failure)
    python   a Python statement with no graph work (control flow, `return`, `total = 0.0`)

Everything here is the standard library (`html.escape`, `ast`); nothing imports torch.
"""

from __future__ import annotations

import ast
import html
import os
from dataclasses import dataclass

KINDS = {
    "graph": "graph region (Dynamo)",
    "rule": "Python: a rule (CRVxxx)",
    "cost": "Python: faster as Python",
    "eager": "Python: another reason",
    "python": "Python statement, no graph work",
}

STYLE = """
:root { --graph: #d9f2df; --graph-alt: #c2e8cc; --graph-edge: #2e8b57; --rule: #fddcd5; --rule-edge: #c8412b;
  --cost: #fff0bf; --cost-edge: #b8860b; --eager: #e2e5f4; --eager-edge: #5a64a8; --python: #f1f1f1;
  --python-edge: #b0b0b0; --ink: #1f2328; --muted: #656d76; --rule-line: #d0d7de; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1280px; padding: 1.5rem 2rem 3rem; color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
h1 { font-size: 1.45rem; margin: 0 0 .25rem; }
h2 { font-size: 1.15rem; margin: 2rem 0 .5rem; padding-bottom: .25rem; border-bottom: 1px solid var(--rule-line); }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
.where, .muted { color: var(--muted); font-weight: normal; font-size: .9em; }
.summary { margin: .3rem 0 .8rem; }
.summary b { font-size: 1.1em; }
.summary span { margin-right: 1.4em; }
.legend { margin: 0 0 1rem; font-size: 12px; }
.legend span, .swatch { display: inline-block; padding: .05em .55em; margin: 0 .35em .3em 0; border-radius: 3px;
  border-left: 4px solid transparent; }
code, pre, table.source { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace; }
table.source { border-collapse: collapse; width: 100%; font-size: 12.5px; line-height: 1.55; }
table.source td { padding: 0 .6em; vertical-align: top; }
td.no { width: 3.2em; text-align: right; color: var(--muted); user-select: none; }
td.tag { width: 10em; white-space: nowrap; font-size: 11px; color: var(--muted); border-left: 4px solid transparent; }
td.code { white-space: pre-wrap; overflow-wrap: anywhere; }
td.note { width: 38%; font: 12px/1.55 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
tr.gap td { height: .6em; border-top: 1px dashed var(--rule-line); }
tr.focus td.no { font-weight: bold; color: var(--ink); }
.line-graph td.code, .line-graph td.tag, .legend .line-graph, .swatch.line-graph { background: var(--graph); }
.line-graph.alt td.code, .line-graph.alt td.tag { background: var(--graph-alt); }
.line-graph td.tag, .line-graph.swatch, .legend .line-graph { border-left-color: var(--graph-edge); }
.line-rule td.code, .line-rule td.tag, .legend .line-rule, .swatch.line-rule { background: var(--rule); }
.line-rule td.tag, .line-rule.swatch, .legend .line-rule { border-left-color: var(--rule-edge); color: #8a2a1a; }
.line-cost td.code, .line-cost td.tag, .legend .line-cost, .swatch.line-cost { background: var(--cost); }
.line-cost td.tag, .line-cost.swatch, .legend .line-cost { border-left-color: var(--cost-edge); }
.line-eager td.code, .line-eager td.tag, .legend .line-eager, .swatch.line-eager { background: var(--eager); }
.line-eager td.tag, .line-eager.swatch, .legend .line-eager { border-left-color: var(--eager-edge); }
.line-python td.code, .line-python td.tag, .legend .line-python, .swatch.line-python { background: var(--python); }
.line-python td.tag, .line-python.swatch, .legend .line-python { border-left-color: var(--python-edge); }
td.note details { margin: 0; }
td.note summary { cursor: pointer; }
td.note summary b, .advice b { color: #8a2a1a; }
td.note p, .advice p { margin: .15em 0 .3em; }
.card { border: 1px solid var(--rule-line); border-radius: 6px; padding: .5rem .9rem .6rem; margin: .6rem 0; }
.card h4 { margin: 0 0 .3rem; font-size: .95rem; }
.card p { margin: .25rem 0; }
.stats span { margin-right: 1.3em; }
.stats b { font-variant-numeric: tabular-nums; }
details > summary { cursor: pointer; }
details pre { background: #f6f8fa; border: 1px solid var(--rule-line); border-radius: 4px; padding: .5rem .7rem;
  font-size: 12px; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 32rem; overflow: auto; }
ol.advice li { margin-bottom: .6rem; }
table.counts { border-collapse: collapse; font-size: 13px; margin: 0 0 .8rem; }
table.counts td, table.counts th { padding: .1rem .8rem .1rem 0; text-align: left; }
a { color: #0b5cad; text-decoration: none; }
a:hover { text-decoration: underline; }
"""


# Characters of a rule's message shown beside a line (all of it behind the <details>).
NOTE_LENGTH = 90


def escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def page(title: str, body: str) -> str:
    """The whole document: `body` (HTML) under a heading, with the style inline."""
    return (
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{escape(title)}</h1>\n{body}\n</body>\n</html>\n"
    )


def legend(kinds: tuple[str, ...] = tuple(KINDS)) -> str:
    items = "".join(f"<span class=\"line-{kind}\">{escape(KINDS[kind])}</span>" for kind in kinds)
    return f"<p class=\"legend\">{items}</p>\n"


@dataclass
class SourceLine:
    """One line of the user's source as a report shows it."""

    number: int
    text: str
    kind: str = ""  # a key of KINDS, or "" (blank, comment, the `def` line)
    tag: str = ""  # the short label beside the line number: "region 2", "CRV003"
    note: str = ""  # HTML shown beside the line
    title: str = ""  # plain text shown on hover
    region: int | None = None  # the graph region the line belongs to
    rules: tuple[str, ...] = ()
    anchor: str = ""  # the row's id, for links
    alt: bool = False  # the second shade of its kind (tells adjacent graph regions apart)
    focus: bool = False  # the line a lint finding points at


def source_table(lines: list[SourceLine]) -> str:
    """`<table class="source">`, a row per line; a dashed row where the numbers jump."""
    rows = []
    previous = None
    for line in lines:
        if previous is not None and line.number != previous + 1:
            rows.append("<tr class=\"gap\"><td colspan=\"4\"></td></tr>")
        previous = line.number
        rows.append(_row(line))
    return "<table class=\"source\">\n" + "\n".join(rows) + "\n</table>\n"


def _row(line: SourceLine) -> str:
    classes = ["line"]
    if line.kind:
        classes.append(f"line-{line.kind}")
    if line.alt:
        classes.append("alt")
    if line.focus:
        classes.append("focus")
    attributes = [f"class=\"{' '.join(classes)}\""]
    if line.anchor:
        attributes.append(f"id=\"{escape(line.anchor)}\"")
    if line.region is not None:
        attributes.append(f"data-region=\"{line.region}\"")
    if line.rules:
        attributes.append(f"data-rule=\"{escape(' '.join(line.rules))}\"")
    if line.title:
        attributes.append(f"title=\"{escape(line.title)}\"")
    return (f"<tr {' '.join(attributes)}><td class=\"no\">{line.number}</td><td class=\"tag\">{escape(line.tag)}</td>"
            f"<td class=\"code\">{escape(line.text.rstrip())}</td><td class=\"note\">{line.note}</td></tr>")


def rule_note(code: str, title: str, message: str, hint: str, extra: str = "") -> str:
    """A rule beside a line: its code and the message's start shown; title, the whole message,
    hint and `extra` (HTML) behind a <details>."""
    shown = message if len(message) <= NOTE_LENGTH else message[:NOTE_LENGTH].rsplit(" ", 1)[0] + " \u2026"
    whole = f"<p>{escape(message)}</p>" if shown != message else ""
    more = f"<p>{extra}</p>" if extra else ""
    return (f"<details><summary><b>{escape(code)}</b> {escape(shown)}</summary>"
            f"<p><i>{escape(title)}</i></p>{whole}<p>hint: {escape(hint)}</p>{more}</details>")


def display_path(filename: str) -> str:
    """`examples/demo.py` for a file under the working directory, else the name as given."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if relative.startswith("..") else relative


@dataclass(frozen=True)
class FunctionSpan:
    qualname: str  # as Python spells it: "Net.forward", "outer.<locals>.inner"
    first_line: int  # its first decorator, else the `def`
    def_line: int
    last_line: int
    node: ast.FunctionDef | ast.AsyncFunctionDef


def function_spans(text: str) -> list[FunctionSpan]:
    """Every function defined in `text` (a module's source), outermost first; [] if it does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    spans: list[FunctionSpan] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qualname = prefix + statement.name
                first = min([statement.lineno] + [d.lineno for d in statement.decorator_list])
                spans.append(FunctionSpan(qualname, first, statement.lineno,
                                          statement.end_lineno or statement.lineno, statement))
                visit(statement.body, qualname + ".<locals>.")
            elif isinstance(statement, ast.ClassDef):
                visit(statement.body, prefix + statement.name + ".")
            else:
                # Definitions under `if`, `try`, `with` keep their enclosing scope's prefix.
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    for child in getattr(statement, name, None) or []:
                        visit(child.body if isinstance(child, (ast.ExceptHandler, ast.match_case)) else [child],
                              prefix)

    visit(tree.body, "")
    return spans


def indentation(line: str) -> str:
    """The leading whitespace of `line`: a method's `def` line gives what its lines are shown without."""
    return line[:len(line) - len(line.lstrip())]


def enclosing_function(spans: list[FunctionSpan], line: int) -> FunctionSpan | None:
    """The innermost function whose definition holds `line`."""
    holding = [span for span in spans if span.first_line <= line <= span.last_line]
    return min(holding, key=lambda span: span.last_line - span.first_line) if holding else None
