"""CRV035: a value whose gradient is differentiated again (`create_graph=True`).

    d = D(interpolates)                                        # CRV035: stays Python
    g = torch.autograd.grad(d, interpolates, grad_outputs=ones, create_graph=True)[0]
    penalty = ((g.norm(2, dim=1) - 1) ** 2).mean()
    (loss + penalty).backward()                                # differentiates g's graph again

    fake = G(z)                                                # not flagged: a plain backward
    D(fake).mean().backward()

A gradient penalty (WGAN-GP), a Hessian-vector product or a meta-learning step builds a graph of
a gradient and differentiates it again. A compiled graph's backward is AOT autograd's compiled
function, which cannot itself be differentiated: torch.compile 2.13 raises "torch.compile with
aot_autograd does not currently support double backward" at the second backward. carve runs the
statements whose values reach such a `create_graph=True` backward as Python, where autograd
differentiates anything twice.

Found by rewriters/backward_roots.py (`BackwardRoots.differentiated_twice`: the statements whose
values flow, through autograd, into the site's outputs); the outliner records the finding on
each such statement before it partitions the function.
"""

from __future__ import annotations

from carve.rewriters.rules._rule import Rule, Strategy

RULE = Rule(
    "CRV035", "differentiated-twice", "a value whose gradient is differentiated again (create_graph=True)",
    "A backward with `create_graph=True` builds a graph of the gradient, and a later backward differentiates it; "
    "a compiled graph's backward (AOT autograd) cannot be differentiated, so torch.compile 2.13 raises \"does not "
    "currently support double backward\" there. carve runs the statements it reaches as Python.",
    "Keep the computation differentiated twice out of compiled code, or compute the penalty with "
    "torch.func (grad of grad) in eager code.",
    Strategy.DONT_COMPILE, breaks_torch_compile=False, lint_default=False,
    what="Flags each statement whose value flows, through autograd, into the outputs of `torch.autograd.grad(..., "
         "create_graph=True)`, `torch.autograd.backward(..., create_graph=True)` or `x.backward(create_graph=True)` "
         "in the same function.",
    why="AOT autograd compiles a graph's backward into one opaque function; its own gradient does not exist. "
        "torch.compile does not break the graph there: it fails at the second backward, after the step's forward "
        "ran. In eager mode every operation has a differentiable backward.",
    bad_example="d = D(x)\ng = torch.autograd.grad(d, x, torch.ones_like(d), create_graph=True)[0]\n"
                "(((g.norm(2, dim=1) - 1) ** 2).mean()).backward()",
    good_example="# the same code, with the discriminator call left out of compiled code (carve does so by itself)",
    known_problems="Followed by name within one function: a value differentiated twice in a caller, or passed "
                   "to a helper that calls `autograd.grad`, is not seen.",
    fix_safety="No automatic fix (off by default in `carve lint`). The compiler runs the statements as Python.",
)
