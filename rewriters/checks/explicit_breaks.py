"""CRV001 / CRV002: explicit graph breaks and frame skips, in carve's or torch's spelling.

    y = x.sin()
    torch._dynamo.graph_break()     # CRV001: runs eagerly, y.cos() is a second graph
    return y.cos()

    carve.skip_frame()              # CRV002: the whole function runs eagerly
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.findings import Violation

GRAPH_BREAK_NAMES = frozenset({"carve.graph_break", "torch._dynamo.graph_break"})
SKIP_FRAME_NAMES = frozenset({"carve.skip_frame", "torch._dynamo.skip_frame"})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func)
    if name in GRAPH_BREAK_NAMES:
        yield Violation("CRV001", f"{ctx.dotted(call.func)}() forces a graph break")
    elif name in SKIP_FRAME_NAMES:
        yield Violation("CRV002", f"{ctx.dotted(call.func)}() skips compiling this function")
