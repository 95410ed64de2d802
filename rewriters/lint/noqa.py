"""`# noqa` comments, read with tokenize (never by searching the source text).

    y = x.item()  # noqa: CRV004          this finding is not reported
    print(x)      # noqa                  no finding on this line is reported
    # carve: noqa                         (a line of its own) nothing in the file is reported

Codes are matched by prefix, as in flake8 and ruff: `# noqa: CRV00` silences
CRV001 to CRV009. A `# noqa: E501` for another tool silences nothing here.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

# Applied to the text of one comment token.
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]*(?:[\s,]+[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)
_FILE_NOQA = re.compile(r"#\s*carve:\s*noqa\b", re.IGNORECASE)
ALL_CODES = None


@dataclass
class NoqaComments:
    # line -> code prefixes silenced there; None means every code.
    lines: dict[int, tuple[str, ...] | None] = field(default_factory=dict)
    whole_file: bool = False

    def silences(self, code: str, line: int) -> bool:
        if self.whole_file:
            return True
        if line not in self.lines:
            return False
        prefixes = self.lines[line]
        return prefixes is None or any(code.startswith(prefix) for prefix in prefixes)


def read_noqa(source: str) -> NoqaComments:
    """The noqa comments of `source`; an untokenizable file has none."""
    comments = NoqaComments()
    if "NOQA" not in source.upper():
        return comments  # tokenizing a large file costs more than analysing it
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type != tokenize.COMMENT:
                continue
            line = token.start[0]
            if _FILE_NOQA.match(token.string) and not token.line[: token.start[1]].strip():
                comments.whole_file = True
                continue
            match = _NOQA.search(token.string)
            if match is None:
                continue
            codes = match.group("codes")
            if codes is None:
                comments.lines[line] = ALL_CODES
            else:
                prefixes = tuple(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)
                previous = comments.lines.get(line, ())
                comments.lines[line] = None if previous is None else previous + prefixes
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return comments
