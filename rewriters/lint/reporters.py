"""Output formats of `carve lint`: text (ruff style), json, github annotations, SARIF 2.1.0.

    model.py:12:9: CRV003 [I/O or logging] print() performs I/O
      hint: Log less often, collect values and print them after the compiled function returns, or move I/O out.

    ::error file=model.py,line=12,col=9,endLine=12,endColumn=17,title=CRV003::print() performs I/O

Lines and columns are 1-based in every format.
"""

from __future__ import annotations

import json
from collections import Counter

from carve.rewriters.lint.driver import LintFinding
from carve.rewriters.rules import RULES

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(findings: list[LintFinding], output_format: str, version: str = "") -> str:
    if output_format == "text":
        return text_report(findings)
    if output_format == "json":
        return json.dumps([finding_dict(f) for f in findings], indent=2) + "\n"
    if output_format == "github":
        return "".join(github_line(f) + "\n" for f in findings)
    if output_format == "sarif":
        return json.dumps(sarif_report(findings, version), indent=2) + "\n"
    if output_format == "html":  # one self-contained page: files, functions, findings on their source
        from carve.rewriters.lint.html_report import html_report

        return html_report(findings, version)
    raise ValueError(f"unknown output format {output_format!r}")


def text_report(findings: list[LintFinding]) -> str:
    """`[*]` marks a finding `--fix` would fix; an unsafe fix is shown with why it is unsafe."""
    lines = []
    for f in findings:
        fixable = " [*]" if f.fix_enabled else ""
        lines.append(f"{f.filename}:{f.line}:{f.column}: {f.code}{fixable} [{f.title}] {f.message}")
        lines.append(f"  hint: {f.hint}")
        if f.fix is not None and not f.fix.safe:
            lines.append(f"  unsafe fix: {f.fix.message} ({f.fix.reason})")
    return "".join(line + "\n" for line in lines)


def summary(findings: list[LintFinding]) -> str:
    if not findings:
        return "All checks passed!\n"
    plural = "" if len(findings) == 1 else "s"
    text = f"Found {len(findings)} graph-break finding{plural}.\n"
    fixable = sum(1 for f in findings if f.fix_enabled)
    hidden = sum(1 for f in findings if f.fix is not None and not f.fix_enabled)
    if fixable:
        text += f"[*] {fixable} fixable with `carve lint --fix`.\n"
    if hidden:
        text += f"{hidden} hidden fix{'es' if hidden != 1 else ''} can be enabled with the `--unsafe-fixes` option.\n"
    return text


def statistics(findings: list[LintFinding]) -> str:
    """One line per code, most frequent first: count, code, fixable marker, title."""
    counts = Counter(f.code for f in findings)
    fixable = {f.code for f in findings if f.fix_enabled}
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{count:>{width}}\t{code}\t{'[*]' if code in fixable else '   '}\t{RULES[code].title}\n"
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def finding_dict(f: LintFinding) -> dict:
    data = {
        "code": f.code, "title": f.title, "message": f.message, "hint": f.hint, "filename": f.filename,
        "line": f.line, "column": f.column, "end_line": f.end_line, "end_column": f.end_column,
    }
    if f.fix is not None:
        data["fix"] = f.fix.as_dict()
    return data


def _github_escape(value: str, in_property: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if in_property:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def github_line(f: LintFinding) -> str:
    properties = (
        f"file={_github_escape(f.filename, True)},line={f.line},col={f.column},"
        f"endLine={f.end_line},endColumn={f.end_column},title={f.code}"
    )
    return f"::error {properties}::{_github_escape(f'{f.code} [{f.title}] {f.message}')}"


def sarif_report(findings: list[LintFinding], version: str = "") -> dict:
    codes = sorted(RULES)
    rule_index = {code: i for i, code in enumerate(codes)}
    rules = []
    for code in codes:
        rule = RULES[code]
        rules.append({
            "id": code,
            "name": rule.name,
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.explanation},
            "help": {"text": rule.hint},
            "defaultConfiguration": {"level": "warning" if rule.lint_default else "note", "enabled": rule.lint_default},
            "properties": {"skipsFrame": rule.skips_frame, "strategy": rule.strategy.name.lower()},
        })
    results = []
    for f in findings:
        region = {"startLine": f.line, "startColumn": f.column, "endLine": f.end_line, "endColumn": f.end_column}
        results.append({
            "ruleId": f.code,
            "ruleIndex": rule_index[f.code],
            "level": "error" if RULES[f.code].skips_frame else "warning",
            "message": {"text": f"{f.message}. {f.hint}"},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.filename.replace("\\", "/")},
                "region": region,
            }}],
        })
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "carve",
                "version": version or "0", "rules": rules,
            }},
            "results": results,
        }],
    }
