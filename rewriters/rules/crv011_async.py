"""CRV011: async code.

    async def f(x):                 # CRV011: the whole function runs eagerly
        await asyncio.sleep(0)
        return x + 1

Detected on the function itself: rewriters/analysis.py calls `check_function` on each
function it analyses.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV011", "async", "async code",
    "`async def`, `await`, `async for` and `async with` need an event loop; carve runs them eagerly.",
    "Compile the synchronous tensor function that the coroutine calls.",
    Strategy.DONT_COMPILE, outlinable=False,
    what="Flags an `async def` function.",
    why="A coroutine is suspended and resumed by an event loop at every `await`; a compiled graph cannot be "
        "suspended, so the function is not compiled at all.",
    bad_example="async def f(x):\n    await asyncio.sleep(0)\n    return x + 1",
    good_example="def f(x):\n    return x + 1",
    known_problems="Only `async def` itself is reported: `await`, `async for` and `async with` cannot appear "
                   "outside one.",
    fix_safety="No automatic fix. The compiler runs the whole coroutine eagerly.",
)


def check_function(func: cst.FunctionDef):
    if func.asynchronous is not None:
        yield Violation(RULE.code, "async def functions run eagerly")
