"""`carve lint --output-format html`: one self-contained page for a tree, files, then functions,
then each finding on its source.

    $ carve lint src/ --output-format html > lint.html

    src/model.py
      Net.forward  lines 12-30
         14      for block in self.blocks:
         15  CRV003      print(x.mean())          CRV003 print() performs I/O  [hint behind a <details>]
         16          x = block(x)

The page is the one `carve.explain(...).to_html()` writes (carve.rewriters.html_page): the same
style, the same colours for a line kept in Python by a rule. Each finding shows `CONTEXT` lines
of its function around it; the files are read, never imported, and torch is never imported.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from carve.rewriters.html_page import (
    FunctionSpan, SourceLine, display_path, enclosing_function, escape, function_spans, indentation, legend, page,
    rule_note, source_table,
)
from carve.rewriters.lint.driver import LintFinding, decode_source
from carve.rewriters.rules import RULES

# Lines of source shown before and after a finding.
CONTEXT = 2
MODULE_LEVEL = "(module level)"


def html_report(findings: list[LintFinding], version: str = "") -> str:
    by_file: dict[str, list[LintFinding]] = defaultdict(list)
    for finding in findings:
        by_file[finding.filename].append(finding)
    sections = [_file_section(filename, by_file[filename]) for filename in sorted(by_file)]
    body = [_summary(findings, len(by_file), version)]
    if findings:
        body.append(legend(("rule",)))
    body.extend(sections)
    return page("carve lint report", "\n".join(body))


def _summary(findings: list[LintFinding], files: int, version: str) -> str:
    if not findings:
        return "<p class=\"summary\">All checks passed: no graph-break finding.</p>"
    counts = Counter(finding.code for finding in findings)
    rows = "".join(f"<tr><td><b>{escape(code)}</b></td><td>{count}</td><td>{escape(RULES[code].title)}</td></tr>"
                   for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])))
    plural = "" if len(findings) == 1 else "s"
    made_by = f" <span class=\"muted\">carve {escape(version)}</span>" if version else ""
    return (f"<p class=\"summary\"><span><b>{len(findings)}</b> graph-break finding{plural}</span>"
            f"<span><b>{files}</b> file{'' if files == 1 else 's'}</span>{made_by}</p>\n"
            f"<table class=\"counts\"><tr><th>rule</th><th>findings</th><th>title</th></tr>{rows}</table>")


def _file_section(filename: str, findings: list[LintFinding]) -> str:
    lines = _read_lines(filename)
    spans = function_spans("".join(lines)) if lines else []
    by_function: dict[FunctionSpan | None, list[LintFinding]] = defaultdict(list)
    for finding in sorted(findings, key=lambda f: (f.line, f.column, f.code)):
        by_function[enclosing_function(spans, finding.line)].append(finding)
    parts = [f"<section class=\"file\"><h2>{escape(display_path(filename))} "
             f"<span class=\"where\">{len(findings)} finding{'' if len(findings) == 1 else 's'}</span></h2>"]
    for span, found in by_function.items():
        name = span.qualname if span is not None else MODULE_LEVEL
        where = f"lines {span.first_line}-{span.last_line}" if span is not None else ""
        parts.append(f"<h3>{escape(name)} <span class=\"where\">{escape(where)}</span></h3>")
        if lines:
            parts.append(source_table(_rows(lines, span, found)))
        else:
            parts.append("<ul>" + "".join(f"<li>line {f.line}: {_note(f)}</li>" for f in found) + "</ul>")
    parts.append("</section>")
    return "\n".join(parts)


def _read_lines(filename: str) -> list[str]:
    try:
        with open(filename, "rb") as handle:
            text, _ = decode_source(handle.read())
    except (OSError, UnicodeDecodeError, SyntaxError):
        return []
    return text.splitlines(keepends=True)


def _rows(lines: list[str], span: FunctionSpan | None, findings: list[LintFinding]) -> list[SourceLine]:
    """The lines around each finding, within its function; the finding's lines coloured."""
    low, high = (span.first_line, span.last_line) if span is not None else (1, len(lines))
    marked: dict[int, list[LintFinding]] = defaultdict(list)
    shown: set[int] = set()
    for finding in findings:
        # A statement's lines; a compound statement's (a loop with a break inside) its first only.
        last = finding.end_line if finding.line <= finding.end_line <= finding.line + 3 else finding.line
        for number in range(finding.line, last + 1):
            marked[number].append(finding)
        shown.update(range(max(low, finding.line - CONTEXT), min(high, last + CONTEXT) + 1))
    indent = indentation(lines[span.def_line - 1]) if span is not None else ""  # a method is shown dedented
    rows = []
    for number in sorted(n for n in shown if 1 <= n <= len(lines)):
        row = SourceLine(number, lines[number - 1].rstrip("\r\n").removeprefix(indent))
        here = marked.get(number, [])
        if here:
            codes = tuple(dict.fromkeys(f.code for f in here))
            row.kind, row.rules, row.focus = "rule", codes, True
            starting = [f for f in here if f.line == number]
            row.tag = " ".join(dict.fromkeys(f.code for f in starting))
            row.note = "".join(_note(f) for f in starting)
            row.title = "; ".join(f"{f.code} {f.title}, hint: {f.hint}" for f in here)
        rows.append(row)
    return rows


def _note(finding: LintFinding) -> str:
    extra = escape(f"column {finding.column}")
    if finding.fix is not None:
        safety = "safe" if finding.fix.safe else "unsafe"
        extra += escape(f"; {safety} fix (carve lint --fix): {finding.fix.message}")
    return rule_note(finding.code, finding.title, finding.message, finding.hint, extra)
