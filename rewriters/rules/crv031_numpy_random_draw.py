"""CRV031: a NumPy random draw torch.compile cannot keep in its graph.

    lam = np.random.beta(1.0, 1.0)              # CRV031: torch._numpy has no beta
    if np.random.rand() < p: ...                # CRV031: one number, read back into Python
    cy = np.random.randint(0, h, size=count)    # CRV031 when `count` defaults to None (one number)
    noise = np.random.rand(4)                   # not flagged: an array draw, traced (trace_numpy)
    idx = np.random.randint(0, 8, size=4)       # not flagged

torch.compile 2.13 traces NumPy code by translating it to torch operations (torch._numpy), whose
`numpy.random` has only `rand`, `randn`, `random`, `random_sample`, `sample`, `randint`, `uniform`,
`normal`, `choice`, `seed` and `shuffle`. A draw of one number is read back into Python ("Data
dependent operator"), and any other function ("attempted to trace numpy function unsupported by
PyTorch") ends the graph. `choice` breaks either way. The analysis runs `check_call` on every call;
the decision is `numpy_random_break` (rewriters/checks/context.py), which the tensor-work reading
shares: such a draw puts nothing in the graph.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, numpy_random_break
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV031", "numpy-random-draw", "NumPy random draw torch.compile cannot trace",
    "torch.compile traces NumPy through torch._numpy, whose numpy.random lacks most distributions "
    "(beta, gamma, permutation, ...) and reads a single drawn number back into Python: the graph breaks here.",
    "Draw with torch (`torch.distributions.Beta(a, b).sample()`, `torch.rand(())`) and keep the value a tensor, "
    "or draw the numbers outside the compiled function and pass them in.",
    Strategy.REWRITE,
    hoistable=True, resumable_in_branch=True,
    what="Flags calls of `numpy.random` functions torch._numpy does not implement (`beta`, `gamma`, `permutation`, "
         "`default_rng`, ...) and `choice`, and draws of one number (`np.random.rand()`, `np.random.randint(0, n)`, "
         "or a `size` given by a parameter whose default is None).",
    why="Dynamo runs NumPy code as torch operations in its graph. A function it has no translation for cannot be "
        "traced at all, and a single number drawn becomes a Python float or int that the rest of the function "
        "computes with: the graph must end to produce it, as with `.item()`.",
    bad_example="lam = float(np.random.beta(alpha, alpha))\nreturn x * lam + x.flip(0) * (1 - lam)",
    good_example="lam = torch.distributions.Beta(alpha, alpha).sample()\nreturn x * lam + x.flip(0) * (1 - lam)",
    known_problems="A `size` held in a variable is taken for an array draw unless it is a parameter defaulting to "
                   "None, so `size=n` with `n = None` set in the body is missed. Called through the legacy "
                   "`RandomState` or a `Generator` object, the draws are not seen.",
    fix_safety="No automatic fix: a torch draw gives different numbers. The compiler runs the call eagerly "
               "between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    reason = numpy_random_break(call, ctx.imports, ctx.tensors.none_defaults)
    if reason == "unsupported":
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() has no torch._numpy translation: torch.compile breaks here")
    elif reason == "one number":
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() draws one number, read back into Python (no size)")
