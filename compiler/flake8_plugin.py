"""carve's rules as a flake8 plugin (entry point `CRV` in pyproject's flake8.extension table).

    $ flake8 --select CRV model.py
    model.py:12:9: CRV003 [I/O or logging] print() performs I/O

flake8 selects, ignores and honours `# noqa` itself, so the plugin reports
every rule, in scope as `carve lint` would (compiled functions and what they
call). It reads the file flake8 already read; it never imports torch.
"""

from __future__ import annotations

from carve.rewriters.lint.config import LintConfig
from carve.rewriters.lint.driver import lint_source
from carve.rewriters.rules import RULES


class CarveFlake8Plugin:
    name = "carve"
    version = "0.1.0"

    def __init__(self, tree=None, filename: str = "stdin", lines: list[str] | None = None) -> None:
        self.filename = filename
        self.lines = lines

    def run(self):
        source: str | bytes
        if self.lines is not None:
            source = "".join(self.lines)
        else:
            with open(self.filename, "rb") as handle:
                source = handle.read()
        config = LintConfig(select=sorted(RULES))  # flake8 does the selecting
        result = lint_source(source, self.filename, config, honour_noqa=False)
        if result.error:
            yield 1, 0, f"CRV000 carve could not lint this file: {result.error}", type(self)
            return
        for finding in result.findings:
            yield finding.line, finding.column - 1, f"{finding.code} [{finding.title}] {finding.message}", type(self)
