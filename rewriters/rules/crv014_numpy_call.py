"""CRV014: NumPy functions applied to tensors.

    y = np.exp(x)                   # CRV014: converts x to an array
    y = torch.exp(x)                # the fix
    a = np.exp(np.zeros(3))         # not flagged: no tensor in the call
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV014", "numpy-call", "NumPy call on tensor data",
    "A NumPy function called on a tensor converts it to an array. torch.compile 2.13 traces NumPy calls "
    "(torch._dynamo.config.trace_numpy), so this is not a graph break there; carve runs the call eagerly.",
    "Use the torch equivalent (torch.sum, torch.exp, ...).",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
    resumable_in_branch=True,
    what="Flags calls to `numpy` functions with an argument the analysis knows to be a tensor.",
    why="carve's graphs hold torch operations only: the NumPy call reads the tensor's data on the host and "
        "runs eagerly, splitting carve's graph (torch.compile translates it to torch ops instead).",
    bad_example="y = np.exp(x)",
    good_example="y = torch.exp(x)",
    known_problems="Only arguments inferred to be tensors count: a tensor returned by a function the "
                   "analysis cannot read is missed.",
    fix_safety="No automatic fix (the torch equivalent may differ in dtype or defaults). The compiler runs "
               "the call eagerly between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name.startswith("numpy.") and any(ctx.tensors.is_tensor(arg.value) for arg in call.args):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() is a NumPy call on a tensor")
