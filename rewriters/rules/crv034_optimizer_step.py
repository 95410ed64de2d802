"""CRV034: a torch.optim optimizer's step in compiled code.

    loss = F.cross_entropy(model(x), y)
    optimizer.step()                    # CRV034: torch.optim breaks the graph around its own step
    scheduler.step()                    # CRV013 (schedulers are skipped), not this rule
    opt.zero_grad()                     # not flagged: traced

torch.optim's optimizers (SGD, Adam, AdamW, ...) wrap `step` so that under torch.compile it calls
`torch._dynamo.graph_break()` before and after the update (torch/optim/optimizer.py,
`_use_grad_for_differentiable`: the step becomes a graph of its own, with grad mode off, which
Inductor can update in place). So a compiled training step that calls `optimizer.step()` after its
forward and backward work ends a graph there, on purpose.

The receiver's type cannot be read from the source: the optimizer is recognised by its name
(`optimizer`, `optim`, `opt`, `self.optimizer`, `optimizer_g`), as schedulers and progress bars
are (crv013_disabled_callee.py).

Reported by `carve lint` only (`CheckContext.for_lint`): carve's compiler runs the step eagerly as
a Python side effect (CRV019) either way.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV034", "optimizer-step", "torch.optim optimizer step in compiled code",
    "torch.optim's optimizers call torch._dynamo.graph_break() around their step under torch.compile (the "
    "update is compiled as a graph of its own, with grad mode off): the graph ends at `optimizer.step()`.",
    "Nothing to fix if the step should be its own graph; otherwise call `optimizer.step()` outside the "
    "compiled function (compile the forward and backward, step eagerly).",
    Strategy.DONT_COMPILE,
    what="Flags `.step()` called on an object named like an optimizer (`optimizer`, `optim`, `opt`, "
         "`self.optimizer`, `opt_g`).",
    why="torch.optim decorates `step` with `_use_grad_for_differentiable`, which under Dynamo breaks the graph "
        "before and after the update so that AOT autograd sees an inference graph and Inductor updates the "
        "parameters in place. The work before the step and the step are two graphs.",
    bad_example="@torch.compile\ndef train_step(model, optimizer, x, y):\n    loss = F.mse_loss(model(x), y)\n"
                "    loss.backward()\n    optimizer.step()",
    good_example="@torch.compile\ndef forward_backward(model, x, y):\n    loss = F.mse_loss(model(x), y)\n"
                 "    loss.backward()\n    return loss\n\nforward_backward(model, x, y)\noptimizer.step()",
    known_problems="Recognised by the receiver's name: a hand-written optimizer (a subclass of torch.optim.Optimizer "
                   "whose step is not decorated) named `optimizer` is a false positive, and an optimizer named "
                   "otherwise (`trainer`) is missed.",
    fix_safety="No automatic fix. Reported by `carve lint` only: carve's compiler runs the step eagerly between two "
               "graphs as a Python side effect (CRV019).",
)

OPTIMIZER_NAMES = frozenset({"optimizer", "optim", "opt", "optimiser"})


def is_optimizer_name(node: cst.BaseExpression, ctx: CheckContext) -> bool:
    """`optimizer`, `self.optim`, `opt_d`, `g_optimizer`: a name that says it holds an optimizer."""
    last = (ctx.dotted(node) or "").rsplit(".", 1)[-1].lower()
    return any(word in OPTIMIZER_NAMES for word in last.split("_")) or last.endswith("optimizer")


def check_call(call: cst.Call, ctx: CheckContext):
    if ctx.for_lint and method_name(call) == "step" and is_optimizer_name(method_receiver(call), ctx):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}(): torch.optim breaks the graph around an optimizer's "
                                   "step")
