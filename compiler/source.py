"""Find and parse the source of a live function.

    source = function_source(f)     # file, first line, dedented text, the FunctionDef node

`inspect.getsourcelines` reads through `linecache`, so functions defined in
notebooks and REPL cells (whose source IPython registers there) are found too.
Failures become `SourceUnavailable` with the function's file and line, so the
caller can run the function eagerly and say why.
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass

import libcst as cst


class SourceUnavailable(Exception):
    """carve cannot read or parse the source of a function."""


@dataclass
class FunctionSource:
    filename: str
    first_line: int
    text: str
    module: cst.Module
    node: cst.FunctionDef


def where(fn) -> str:
    code = getattr(fn, "__code__", None)
    if code is None:
        return getattr(fn, "__qualname__", repr(fn))
    return f"{code.co_filename}:{code.co_firstlineno}"


def function_source(fn) -> FunctionSource:
    name = getattr(fn, "__name__", repr(fn))
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    except (OSError, TypeError) as error:
        raise SourceUnavailable(f"cannot find the source of {name} ({where(fn)}): {error}") from None
    text = textwrap.dedent("".join(lines))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise SourceUnavailable(f"cannot parse the source of {name} ({where(fn)}): {error.message}") from None
    node = module.body[0] if module.body else None
    if not isinstance(node, cst.FunctionDef) or node.name.value != fn.__name__:
        raise SourceUnavailable(
            f"the source found for {name} ({where(fn)}) is not its definition "
            "(a lambda, or the file changed since it was imported)"
        )
    return FunctionSource(filename, first_line, text, module, node)
