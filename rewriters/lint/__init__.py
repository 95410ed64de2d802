"""`carve lint`: the compiler's graph-break analysis as a CI linter (no torch import, no code run).

    from carve.rewriters.lint import LintConfig, lint_source
    result = lint_source(open("model.py").read(), "model.py", LintConfig())

Modules: `driver` (one file), `scope` (which functions), `positions` (lazy
source positions), `noqa`, `config` (pyproject + selection), `fixes`,
`reporters` (text/json/github/sarif), `docs` (rule reference).
"""

from carve.rewriters.lint.config import ConfigError, LintConfig, find_config, load_config
from carve.rewriters.lint.driver import FileResult, LintFinding, lint_file, lint_source

__all__ = ["ConfigError", "FileResult", "LintConfig", "LintFinding", "find_config", "lint_file", "lint_source", "load_config"]
