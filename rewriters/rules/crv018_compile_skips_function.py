"""CRV018: a compiled function torch.compile would skip whole.

    @torch.compile
    def f(xs):                      # CRV018: a generator (CRV010), never compiled
        yield from xs

Detected by `carve lint` (rewriters/lint/driver.py) on the functions it finds compiled, from
the analysis's whole-function finding (CRV002, CRV010, CRV011).
"""

from carve.rewriters.rules._rule import Rule, Strategy

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
