"""Helpers shared by the carve.runtime tests (a uniquely named module, unlike conftest)."""

import inspect


def line_of(fn, text):
    """The line number of the first line of fn's source containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")
