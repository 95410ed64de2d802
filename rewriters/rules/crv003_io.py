"""CRV003: printing, logging and other I/O.

    y = x * 2
    print("y =", y)                 # CRV003: eager, printed on every call, in order
    logger.info("step %d", step)    # CRV003
    f.write(line)                   # CRV003: a receiver named like a file
    warnings.warn("slow path")      # not CRV003: torch.compile handles it (CRV021)
    return y + 1

`check_call` finds the call by its name; `check_callee` a call the callee resolver found to
perform I/O under another name (`out = print; out(y)`: the compiler's live resolver), which the
analysis (rewriters/analysis.py) hands it.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.checks.context import TRACED_WARNING_FUNCTIONS, CheckContext, method_name, method_receiver
from carve.rewriters.op_tables import IO_FUNCTIONS, LOGGING_METHODS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV003", "io", "I/O or logging",
    "Printing, logging, file and console I/O have Python side effects that a tensor graph cannot hold. "
    "The statement runs eagerly, in the same order and number as without compilation.",
    "Log less often, collect values and print them after the compiled function returns, or move I/O out.",
    Strategy.DONT_COMPILE,
    hoistable=True, resumable_in_branch=True,
    what="Flags `print`, `input`, `open`, `torch.save`/`torch.load`, `sys.stdout.write` and the other I/O "
         "functions of carve's op table, logging calls (`logger.info(...)`) and `.write()`/`.flush()` on "
         "file-like receivers.",
    why="A graph replays tensor operations only: the output must be produced on every call, in order, with "
        "the values of that call, so the statement has to run as Python between two graphs.",
    bad_example="y = x * 2\nprint('y', y)\nreturn y + 1",
    good_example="y = x * 2\nreturn y + 1  # print at the call site",
    known_problems="Loggers are recognised by name (`logging`, or a receiver whose name contains `log`), files "
                   "by the conventional names `f`, `fh`, `file`, `out`, `stream`, `writer`: a logger called "
                   "`reporter` is missed, and a non-logger named `catalog` with an `.info()` method is flagged.",
    fix_safety="No automatic fix in `carve lint`. The compiler moves the tensor work inside the statement "
               "(`print(y.mean())`: the mean) into the graph before it and runs only the I/O eagerly.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if name in TRACED_WARNING_FUNCTIONS:
        return  # traced by torch.compile: CRV021's
    if name in IO_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() performs I/O")
        return
    method = method_name(call)
    if method in LOGGING_METHODS:
        receiver = ctx.dotted(method_receiver(call)) or ""
        qualified_receiver = ctx.qualified(method_receiver(call)) or ""
        if qualified_receiver == "logging" or "log" in receiver.lower():
            yield Violation(RULE.code, f"{ctx.dotted(call.func)}() logs")
    elif method in ("write", "flush") and (ctx.dotted(method_receiver(call)) or "").lower() in ("f", "fh", "file", "out", "stream", "writer"):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() writes to a file")


def check_callee(callee: CalleeInfo):
    """A call whose target the callee resolver found to perform I/O, whatever its name."""
    if callee.kind is CalleeKind.IO:
        yield Violation(RULE.code, f"{callee.name}() performs I/O")
