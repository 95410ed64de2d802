"""CRV027: a graph break before the compiled function's first tensor operation.

    @torch.compile
    def step(model, x):
        t0 = time.time()            # CRV027 (CRV013 before any tensor work): no graph is split
        log.info("step")            # CRV027 (CRV003)
        y = model(x)                # the first tensor operation: the graph starts here
        print(y.sum())              # CRV003: this break ends a graph
        return y

Dynamo meets such a break while its graph is still empty: it runs the statement, then starts
its graph after it, so the function still compiles to the graphs it would have without the
statement (`torch._dynamo.explain` counts no break). Under `fullgraph=True` it is still an
error, and Dynamo's graph-break log lists it.

Reported by `carve lint` only, in place of the rule the statement breaks (named in the message):
the lint driver (rewriters/lint/driver.py) finds, in each function it lints as compiled, the
breaks no tensor operation can precede (rewriters/lint/leading.py) and hands them to
`check_leading_break`, unless the function is compiled with `fullgraph=True`, where every break
is an error. Off by default: `--extend-select CRV027` lists them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from carve.rewriters.rules._rule import Rule, Strategy, Violation

if TYPE_CHECKING:
    from carve.rewriters.findings import Finding

RULE = Rule(
    "CRV027", "break-before-graph", "graph break before the first tensor operation",
    "torch.compile breaks here, but before the function has done any tensor work: it runs the statement "
    "eagerly and starts its graph after it, so no graph is split (torch._dynamo.explain counts no break). "
    "Under fullgraph=True it is still an error.",
    "Nothing to gain for speed; under fullgraph=True, move the statement out of the compiled function.",
    Strategy.DONT_COMPILE, splits_carve_graph=False, lint_default=False, resumable_in_branch=True,
    what="Reports, in place of the rule it would fall under, a graph break that no tensor operation of the "
         "compiled function can precede: a clock read, a log line, a `.tolist()` of an input, a print, as the "
         "function's first statements.",
    why="A break costs a graph only when there is a graph to end: before the first tensor operation Dynamo's "
        "graph is empty, so it runs the statement and begins tracing after it. Reporting such statements as "
        "breaks would point at code that costs nothing; they matter only where every break is an error "
        "(`fullgraph=True`).",
    bad_example="@torch.compile(fullgraph=True)\ndef step(model, x):\n    t0 = time.time()\n    return model(x)",
    good_example="t0 = time.time()\nout = step(model, x)  # the clock read outside the compiled function",
    known_problems="Whether a statement does tensor work is read from the source: a call to an unknown function "
                   "with a tensor argument counts as tensor work (the break after it is reported as a break), "
                   "and tensor work hidden in a callee that receives no tensor is not seen. Breaks inside "
                   "loops, try blocks and non-torch context managers are never reported this way: Dynamo "
                   "skips the whole frame for them.",
    fix_safety="No automatic fix.",
)


def check_leading_break(finding: Finding):
    """A break found before any tensor operation of a function linted as compiled."""
    yield Violation(RULE.code, f"{finding.message} ({finding.code}, before any tensor operation: no graph is "
                               f"split; an error under fullgraph=True)")
