"""CRV000: a file `carve lint` cannot parse.

    def f(x)                        # CRV000: missing colon, nothing in the file is checked
        return x

Detected by `carve lint` itself (rewriters/lint/driver.py), when libcst cannot read the
file or it nests too deeply to be analysed; the compiler never sees such a file.
"""

from carve.rewriters.rules._rule import Rule, Strategy

RULE = Rule(
    "CRV000", "syntax-error", "file cannot be parsed",
    "carve could not read the file as Python source (a syntax error, or bytes that are not valid in the "
    "file's encoding), so nothing in it was checked. Reported by `carve lint` only.",
    "Fix the syntax error or the encoding (add a `# -*- coding: ... -*-` line), or exclude the file.",
    Strategy.REWRITE, outlinable=False, breaks_torch_compile=False, splits_carve_graph=False,
    what="Reports a file that cannot be parsed as Python (a syntax error, an undecodable byte) or that "
         "nests too deeply for the analysis.",
    why="A file carve cannot read is a file carve cannot check: every graph break in it goes unreported, "
        "so a clean lint run would claim more than it knows.",
    bad_example="def f(x)\n    return x",
    good_example="def f(x):\n    return x",
    known_problems="Source that parses under a newer Python than the one running `carve lint` is reported "
                   "as a syntax error.",
    fix_safety="No automatic fix.",
)
