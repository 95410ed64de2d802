"""CRV036: a NumPy function torch.compile has no translation for.

    m = np.isin(labels, keep)                   # CRV036: torch._numpy has no isin
    v = np.nanmean(a)                           # CRV036: nor the nan-reductions, polynomials, interp, ...
    k = np.poly1d([0.5, 0.5]) ** (n - 1)        # CRV036
    w = np.hanning(n)                           # not flagged: translated to torch operations
    e = np.exp(x.numpy())                       # not flagged (CRV021: the .numpy() itself)

torch.compile 2.13 traces NumPy code by translating each NumPy function to torch operations
(torch._numpy, with `torch._dynamo.config.trace_numpy`). A function torch._numpy does not implement
cannot be traced: Dynamo ends the graph there ("attempted to trace numpy function unsupported by
PyTorch"), whatever the arguments. `UNTRACED_NUMPY` lists NumPy's public functions and (non-scalar)
classes that torch._numpy lacks and that are not another name of one it has (`np.acos` is
`np.arccos`); tests/lint/test_lint_torch_knowledge.py recomputes the list from the installed torch and
NumPy. The analysis runs `check_call` on every call; such a call puts nothing in the graph
(rewriters/checks/tensor_work.py).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, numpy_untraced
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV036", "numpy-untraced", "NumPy function torch.compile cannot trace",
    "torch.compile traces NumPy through torch._numpy, which has no translation for this function "
    "(nan-reductions, polynomials, set operations, interp, digitize, ...): the graph breaks here.",
    "Use the torch equivalent (torch.nanmean, torch.isin, torch.bucketize, ...), or compute the value outside "
    "the compiled function and pass it in.",
    Strategy.REWRITE,
    hoistable=True, resumable_in_branch=True,
    what="Flags calls of NumPy functions and classes that torch._numpy (torch 2.13) does not implement: "
         "`np.isin`, `np.nanmean` and the other nan-reductions, `np.poly1d`, `np.polyval` and the polynomial "
         "functions, `np.interp`, `np.digitize`, `np.setdiff1d`, `np.unravel_index`, `np.lexsort`, "
         "`np.errstate`, ...: whatever their arguments.",
    why="Dynamo runs NumPy code as torch operations in its graph; a function it has no translation for must run "
        "in Python, so the graph ends before it and a new one starts after it.",
    bad_example="m = np.isin(labels.numpy(), keep)\nreturn x[torch.from_numpy(m)]",
    good_example="m = torch.isin(labels, torch.as_tensor(keep))\nreturn x[m]",
    known_problems="Only calls through the `numpy` module are seen (`np.isin(...)`); a method of an array "
                   "(`a.partition(k)`) or a function bound to another name is not. Using the object such a "
                   "call returns (a `poly1d`'s `**` or `.c`) can make Dynamo give up the rest of the frame, "
                   "which the rule does not tell apart.",
    fix_safety="No automatic fix (the torch equivalent may differ in dtype or edge cases). The compiler runs "
               "the call eagerly between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    if numpy_untraced(call, ctx.imports):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() has no torch._numpy translation: torch.compile breaks here")
