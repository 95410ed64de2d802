"""CRV015: a call to a function marked disallow_in_graph.

    torch._dynamo.disallow_in_graph(torch.sub)
    y = torch.sub(x, 1)             # CRV015: every call breaks the graph

`check_callee` reports the call when a callee resolver finds the marker (the analysis,
rewriters/analysis.py, hands it what the resolver found): the module resolver
(rewriters/callees.py) from module-level `disallow_in_graph(...)` calls, the compiler's live
resolver on the running program. Dynamo reports it at run time too, inside a region.
"""

from __future__ import annotations

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV015", "disallowed-in-graph", "call to a function disallowed in graphs",
    "The callee was marked carve.disallow_in_graph / torch._dynamo.disallow_in_graph: every call breaks the graph "
    "and runs eagerly.",
    "Call carve.allow_in_graph on it again if the marking was only for debugging.",
    Strategy.DONT_COMPILE,
    resumable_in_branch=True,
    what="Flags calls to functions marked `carve.disallow_in_graph` / `torch._dynamo.disallow_in_graph`.",
    why="The marker tells torch.compile never to put the function in a graph: each call ends the graph, runs "
        "eagerly and starts a new one.",
    bad_example="torch._dynamo.disallow_in_graph(torch.sub)\ny = torch.sub(x, 1)",
    good_example="y = torch.sub(x, 1)",
    known_problems="`carve lint` sees only module-level `disallow_in_graph(f)` calls of the module it reads; "
                   "a marking made in another module or inside a function is found by the compiler only.",
    fix_safety="No automatic fix. The compiler runs the call eagerly between two graphs.",
)


def check_callee(callee: CalleeInfo):
    """A call whose target the callee resolver found marked disallow_in_graph."""
    if callee.kind is CalleeKind.DISALLOWED:
        yield Violation(RULE.code, f"{callee.name} is marked disallow_in_graph")
