"""CRV018: a compiled function torch.compile would skip whole.

    @torch.compile
    def f(xs):                      # CRV018: a generator (CRV010), never compiled
        yield from xs

`check_compiled_function` reports it from the analysis's whole-function finding (CRV002,
CRV010, CRV011), which `carve lint` (rewriters/lint/driver.py) hands it for each function it
finds compiled, and positions on the function's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from carve.rewriters.rules._rule import Rule, Strategy, Violation

if TYPE_CHECKING:
    from carve.rewriters.findings import Finding

RULE = Rule(
    "CRV018", "compile-skips-function", "compiled function would be skipped whole",
    "torch.compile gives up on this whole function (a generator, async code, or skip_frame at top level), "
    "so decorating it gains nothing.",
    "Compile the functions it calls instead.",
    Strategy.DONT_COMPILE, outlinable=False,
    what="Flags a function decorated with (or passed to) `torch.compile` / `carve.compile` that is a generator, "
         "a coroutine or calls skip_frame.",
    why="The decorator promises compiled code but the function always runs eagerly: the compile buys nothing "
        "and hides where the time goes.",
    bad_example="@torch.compile\ndef f(xs):\n    yield from xs",
    good_example="@torch.compile\ndef step(x):\n    return x * 2",
    known_problems="Only functions `carve lint` recognises as compiled (a decorator, or `torch.compile(f)` "
                   "in the same project) are checked.",
    fix_safety="No automatic fix.",
)


def check_compiled_function(qualname: str, whole_function: Finding | None):
    """A compiled function (`qualname`, `M.forward`) whose analysis makes it eager as a whole:
    `whole_function` is that finding (a generator, async code, a top-level skip_frame)."""
    if whole_function is not None:
        yield Violation(RULE.code, f"torch.compile would skip {qualname}() entirely: {whole_function.message}")
