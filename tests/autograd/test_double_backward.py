"""A gradient differentiated again (`create_graph=True`) runs through eager autograd.

WGAN-GP's gradient penalty differentiates the discriminator's output with
`autograd.grad(..., create_graph=True)`, and the step's backward differentiates that gradient
again. A compiled graph's backward (AOT autograd) cannot be differentiated: torch.compile 2.13
raises at the second backward. carve keeps the statements such a backward reaches as Python
(CRV035) and compiles the rest; gradients equal eager's.
"""

from __future__ import annotations

import pytest
import torch

import carve
from carve.runtime import cost_check

# Under Inductor a region's first calls run its Python to price its compile (runtime/cost_check.py).
PRICING = cost_check.PYTHON_FIRST_CALLS


def _discriminator():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.LeakyReLU(0.2), torch.nn.Linear(8, 1))


def penalty_step(D, real, fake):
    real_validity = D(real)
    fake_validity = D(fake)
    alpha = torch.rand(real.size(0), 1)
    interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    d_interpolates = D(interpolates)
    gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                    grad_outputs=torch.ones_like(d_interpolates),
                                    create_graph=True, retain_graph=True, only_inputs=True)[0]
    penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    loss = -real_validity.mean() + fake_validity.mean() + 10 * penalty
    loss.backward()
    return loss.detach()


def hessian_vector_product(w, x, v):
    loss = (x @ w).tanh().pow(2).sum()
    (grad,) = torch.autograd.grad(loss, w, create_graph=True)
    (grad * v).sum().backward()
    return loss.detach()


@pytest.mark.parametrize("backend", ["aot_eager", pytest.param("inductor", marks=pytest.mark.inductor)])
def test_a_gradient_penalty_step_equals_eager(backend):
    eager_d, carve_d = _discriminator(), _discriminator()
    step = carve.compile(penalty_step, backend=backend)
    # the Python calls that price the compile, then past the cost check's timed calls (tests/conftest.py)
    for call in range(PRICING + 12):
        real, fake = torch.randn(6, 4), torch.randn(6, 4)
        torch.manual_seed(call)
        want = penalty_step(eager_d, real, fake)
        torch.manual_seed(call)
        got = step(carve_d, real, fake)
        torch.testing.assert_close(got, want)
        for mine, theirs in zip(carve_d.parameters(), eager_d.parameters()):
            torch.testing.assert_close(mine.grad, theirs.grad)
    # The real and fake scores still run compiled: only what the penalty differentiates is Python.
    assert any(region.graphs for region in step.regions)
    assert any(finding.code == "CRV035" for region_set in [step._build.regions] for finding in region_set.findings.values())


def test_a_hessian_vector_product_equals_eager():
    torch.manual_seed(0)
    x, v = torch.randn(5, 3), torch.randn(3, 2)
    w_eager = torch.randn(3, 2, requires_grad=True)
    w_carve = w_eager.detach().clone().requires_grad_()
    hvp = carve.compile(hessian_vector_product, backend="aot_eager")
    for _ in range(12):
        torch.testing.assert_close(hvp(w_carve, x, v), hessian_vector_product(w_eager, x, v))
        torch.testing.assert_close(w_carve.grad, w_eager.grad)
