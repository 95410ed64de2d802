"""CRV012: running the backward pass inside compiled code.

    loss = model(x).sum()
    loss.backward()                 # CRV012: call .backward() outside the compiled function
    g, = torch.autograd.grad(loss, [w])          # CRV012
    y.retain_grad()                 # CRV012: Dynamo cannot trace it under AOT autograd
    y = x.detach()                  # not flagged: an ordinary graph op
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name
from carve.rewriters.op_tables import AUTOGRAD_FUNCTIONS, AUTOGRAD_METHODS, AUTOGRAD_STATE_METHODS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV012", "autograd-in-compiled", "backward pass inside compiled code",
    "`.backward()` and `torch.autograd.grad` inside a compiled function run the autograd engine, "
    "which torch.compile does not trace (compiled autograd aside).",
    "Compile the forward computation and call .backward() outside it.",
    Strategy.DONT_COMPILE,
    what="Flags `.backward()` calls, `torch.autograd.grad` / `torch.autograd.backward`, and `.retain_grad()`.",
    why="torch.compile captures the forward pass and derives the backward graph itself (AOTAutograd); a call "
        "into the autograd engine in the middle of the forward cannot be part of that graph.",
    bad_example="loss = model(x).sum()\nloss.backward()",
    good_example="loss = compiled_model(x).sum()\nloss.backward()  # outside",
    known_problems="`.backward()` is matched by name on any receiver, so a user object with its own "
                   "`backward` method is flagged too.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    if method_name(call) in AUTOGRAD_METHODS:
        yield Violation(RULE.code, ".backward() runs the autograd engine inside compiled code")
    elif method_name(call) in AUTOGRAD_STATE_METHODS:
        yield Violation(RULE.code, f".{method_name(call)}() changes autograd's bookkeeping of a tensor, which "
                                   "torch.compile cannot trace under AOT autograd")
    elif ctx.qualified(call.func) in AUTOGRAD_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() runs the autograd engine inside compiled code")
