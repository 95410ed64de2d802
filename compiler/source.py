"""Find and parse the source of a live function.

    source = function_source(f)     # file, first line, dedented text, the FunctionDef node

`inspect.getsourcelines` reads through `linecache`, so functions defined in
notebooks and REPL cells (whose source IPython registers there) are found too.
Failures become `SourceUnavailable` with the function's file and line, so the
caller can capture the function another way and say why. That includes source
edited on disk after the function was imported: the text found is compiled and its
bytecode compared with the code that runs (`same_code`), so carve never compiles
code other than the code Python would run.
"""

from __future__ import annotations

import __future__
import dis
import functools
import inspect
import operator
import textwrap
import types
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
    """The source of the code `fn` runs. A `functools.wraps` wrapper's own, not the wrapped
    function's: `inspect` follows `__wrapped__` from a function, so it is asked about the
    function's code object, and the definition found must bear the code's name (`wraps` copies
    the wrapped function's `__name__` onto the wrapper)."""
    name = getattr(fn, "__name__", repr(fn))
    code = getattr(fn, "__code__", None)
    try:
        lines, first_line = inspect.getsourcelines(code if code is not None else fn)
        filename = inspect.getsourcefile(code if code is not None else fn) or fn.__code__.co_filename
    except (OSError, TypeError) as error:
        raise SourceUnavailable(f"cannot find the source of {name} ({where(fn)}): {error}") from None
    text = textwrap.dedent("".join(lines))
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise SourceUnavailable(f"cannot parse the source of {name} ({where(fn)}): {error.message}") from None
    node = module.body[0] if module.body else None
    if not isinstance(node, cst.FunctionDef) or node.name.value != (code.co_name if code is not None else fn.__name__):
        raise SourceUnavailable(
            f"the source found for {name} ({where(fn)}) is not its definition "
            "(a lambda, or the file changed since it was imported)"
        )
    if not matches_running_code(fn, text):
        raise SourceUnavailable(
            f"the source of {name} in {filename} changed since it was imported (line {first_line})"
        )
    return FunctionSource(filename, first_line, text, module, node)


# Instructions that differ between a function compiled in place and the same text compiled on
# its own (closure set-up, call protocol details), and so say nothing about the source.
_SCOPE_ONLY_OPS = frozenset({
    "COPY_FREE_VARS", "MAKE_CELL", "RESUME", "NOP", "PUSH_NULL", "PRECALL", "EXTENDED_ARG", "CACHE",
})


def matches_running_code(fn, text: str) -> bool:
    """Whether `text` (the dedented definition of `fn`) compiles to the code `fn` runs.

        def scale(x):          # imported, then the file is edited to "x * 100":
            return x * 2       # same_code(scale.__code__, <code of the edited text>) is False

    The text is compiled where it scopes as it did in its file: inside a function binding the
    running code's free variables (a lambda in a closure reads them as cells, not globals), in a
    class for zero-argument `super()`, and under the running code's `from __future__` flags (the
    annotations of a nested function compile to strings or to values by them). Text that still
    cannot be compiled on its own is taken as it is.
    """
    running = getattr(fn, "__code__", None)
    if running is None:
        return True
    try:
        compiled = compile(_in_running_scope(text, running), running.co_filename, "exec",
                           flags=running.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    except (SyntaxError, ValueError):
        return True
    candidate = _find_code(compiled, running.co_name)
    return candidate is not None and same_code(running, candidate)


_FUTURE_FLAGS = functools.reduce(operator.or_, (getattr(__future__, name).compiler_flag
                                                for name in __future__.all_feature_names), 0)


def _in_running_scope(text: str, running: types.CodeType) -> str:
    """`text` nested as the running code's definition was: its free variables bound by an
    enclosing function, `__class__` by an enclosing class.

        def step(xs):                          def _carve_enclosing_scope():
            return sorted(xs, key=...scale)        scale = None
                                                   def step(xs):
                                                       return sorted(xs, key=...scale)
    """
    source = text
    if "__class__" in running.co_freevars:
        source = "class _CarveEnclosingClass:\n" + textwrap.indent(source, "    ")
    free = [name for name in running.co_freevars if name != "__class__"]
    if free:
        bindings = "".join(f"    {name} = None\n" for name in free)
        source = "def _carve_enclosing_scope():\n" + bindings + textwrap.indent(source, "    ")
    return source


def _find_code(code: types.CodeType, name: str):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                return const
            found = _find_code(const, name)
            if found is not None:
                return found
    return None


def same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if (a.co_argcount, a.co_kwonlyargcount, a.co_posonlyargcount) != (b.co_argcount, b.co_kwonlyargcount,
                                                                      b.co_posonlyargcount):
        return False
    ops_a, ops_b = _normalized(a), _normalized(b)
    if len(ops_a) != len(ops_b):
        return False
    for (name_a, arg_a), (name_b, arg_b) in zip(ops_a, ops_b):
        if name_a != name_b:
            return False
        if isinstance(arg_a, types.CodeType) or isinstance(arg_b, types.CodeType):
            if not (isinstance(arg_a, types.CodeType) and isinstance(arg_b, types.CodeType)
                    and same_code(arg_a, arg_b)):
                return False
        elif arg_a != arg_b or type(arg_a) is not type(arg_b):
            return False
    return True


def _normalized(code: types.CodeType) -> list:
    ops = []
    for instruction in dis.get_instructions(code):
        name = instruction.opname
        if name in _SCOPE_ONLY_OPS:
            continue
        argument = instruction.argval
        for kind in ("LOAD", "STORE", "DELETE"):
            if name.startswith(kind + "_") and name.split("_", 1)[1] in (
                    "FAST", "GLOBAL", "DEREF", "NAME", "CLOSURE", "CLASSDEREF", "FAST_CHECK", "FAST_AND_CLEAR"):
                name = kind
        if name == "LOAD_METHOD":  # a method call compiles either way, by where its lines are
            name = "LOAD_ATTR"
        if instruction.opcode in dis.hasjrel or instruction.opcode in dis.hasjabs:
            argument = None  # offsets move with the scope-only instructions
        ops.append((name, argument))
    return ops
