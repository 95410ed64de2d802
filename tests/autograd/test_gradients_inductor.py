"""Gradients under Inductor equal eager's: the ways a value enters a region times the ways
gradients leave it.

Values entering: a tensor that requires grad (`w`, a leaf the optimizer updates), a tensor
that does not (`x`; in the changing sequence it requires grad on every other call), an int
(`n`), a float (`f`), a bool (`flag`, read by an `if` in the region), a list, a tuple and a
dict of tensors mixing leaves that require grad and data. Each is constant over the calls,
or changes on every call (Dynamo then makes the numbers symbolic, and the bool picks another
graph). Gradients leaving: `backward()` inside the compiled function, outside it on the
returned loss, once per iteration of a Python loop, through `torch.autograd.grad`, and
`retain_graph=True` followed by a second backward.

Python numbers computed inside a region and handed back (a float returned, or carried from
one loop iteration to the next as the policy-gradient update of REINFORCE does) change on
every call: torch 2.13's Inductor once returned the first call's value for a symbolic float
output, and computed the gradient of a graph reading it wrongly.

Every call compares, with tight tolerances, the results, every leaf's gradient, and where
an optimizer steps its parameters and state. Inductor compiles take seconds on a CPU, so
the tensors are tiny and each compiled function serves several calls. A region's first calls
run its Python to price its compile (runtime/cost_check.py): each test makes those calls first,
then the calls it was written for, and checks that its regions compiled graphs.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import carve
from carve.runtime import cost_check
from carve.testing import graphs_run_by

pytestmark = pytest.mark.inductor

# The calls that run a region's Python to price its compile, before its compiled calls.
PRICING = cost_check.PYTHON_FIRST_CALLS

TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}


def assert_same(actual, expected, what: str) -> None:
    """Tensors, Python numbers and containers of them; tensors' requires_grad too."""
    torch.testing.assert_close(actual, expected, **TOLERANCE, msg=lambda m: f"{what}: {m}")
    if isinstance(expected, torch.Tensor):
        assert actual.requires_grad == expected.requires_grad, what


def assert_same_grads(leaves, reference_leaves, what: str) -> None:
    for index, (leaf, reference) in enumerate(zip(leaves, reference_leaves, strict=True)):
        assert (leaf.grad is None) == (reference.grad is None), f"{what}: leaf {index} has a grad in one run only"
        if reference.grad is not None:
            assert_same(leaf.grad, reference.grad, f"{what}: grad of leaf {index}")


def assert_compiled(compiled) -> None:
    """The regions ran graphs, their own or, for a region that runs a model, the compiled model's:
    the calls compared were not all of them Python."""
    assert all(graphs_run_by(region) for region in compiled.regions), \
        [(region.name, region.path, region.eager_reason) for region in compiled.regions]


def assert_same_optimizer(optimizer, reference) -> None:
    for group, reference_group in zip(optimizer.param_groups, reference.param_groups, strict=True):
        for p, q in zip(group["params"], reference_group["params"], strict=True):
            assert_same(p, q, "parameter after the step")
    state, expected = optimizer.state_dict()["state"], reference.state_dict()["state"]
    assert state.keys() == expected.keys()
    for key in state:
        for field in state[key]:
            assert_same(state[key][field], expected[key][field], f"optimizer state {key}.{field}")


# -- every kind of value entering a region ---------------------------------------------------------
@dataclass
class Inputs:
    """One call's arguments (`args`) and the leaves whose gradients it compares (`leaves`)."""

    args: tuple
    leaves: list[torch.Tensor]


def make_inputs(call: int, changing: bool, w: torch.Tensor) -> Inputs:
    """The same values on each call of a run when not `changing`; else new tensors, new numbers
    (never integral floats), the bool and x's requires_grad flipping on every call. Called
    twice per call (compiled run, eager run): equal values, distinct leaves."""
    generator = torch.Generator().manual_seed(call if changing else 0)

    def tensor(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator)

    x = tensor(4).requires_grad_(changing and call % 2 == 1)
    a, c = tensor(4).requires_grad_(), tensor(4).requires_grad_()
    items = [a, tensor(4)]
    pair = (tensor(4), tensor(4))
    named = {"c": c, "data": tensor(4)}
    n = 2 + call if changing else 3
    f = 0.5 + 0.75 * call if changing else 0.75
    flag = call % 2 == 0 if changing else True
    leaves = [w, a, c] + ([x] if x.requires_grad else [])
    return Inputs((w, x, n, f, flag, items, pair, named), leaves)


# The same computation in each function: every argument reaches the loss, inside the region.
def backward_inside(w, x, n, f, flag, items, pair, named):
    h = (w * x).sin() * n + f * w
    if flag:
        h = h * 2 - x
    h = h + items[0] * items[1] + pair[0] * pair[1].cos() + named["c"] * named["data"]
    loss = (h ** 2).mean() * f
    loss.backward()
    return loss.detach()


def backward_outside(w, x, n, f, flag, items, pair, named):
    h = (w * x).sin() * n + f * w
    if flag:
        h = h * 2 - x
    h = h + items[0] * items[1] + pair[0] * pair[1].cos() + named["c"] * named["data"]
    return (h ** 2).mean() * f


def backward_per_iteration(w, x, n, f, flag, items, pair, named):
    total = torch.zeros(())
    for k in range(n):
        h = (w * x).sin() * (k + 1) + f * w
        if flag:
            h = h * 2 - x
        h = h + items[0] * items[1] + pair[0] * pair[1].cos() + named["c"] * named["data"]
        loss = (h ** 2).mean() * f
        loss.backward()
        total = total + loss.detach()
    return total


def autograd_grad(w, x, n, f, flag, items, pair, named):
    h = (w * x).sin() * n + f * w
    if flag:
        h = h * 2 - x
    h = h + items[0] * items[1] + pair[0] * pair[1].cos() + named["c"] * named["data"]
    loss = (h ** 2).mean() * f
    grads = torch.autograd.grad(loss, [w, items[0], named["c"]])
    return loss.detach(), grads


def retain_graph(w, x, n, f, flag, items, pair, named):
    h = (w * x).sin() * n + f * w
    if flag:
        h = h * 2 - x
    h = h + items[0] * items[1] + pair[0] * pair[1].cos() + named["c"] * named["data"]
    loss = (h ** 2).mean() * f
    loss.backward(retain_graph=True)
    (loss * f).backward()
    return loss.detach()


EXITS = [backward_inside, backward_outside, backward_per_iteration, autograd_grad, retain_graph]


@pytest.mark.parametrize("changing", [False, True], ids=["constant", "changing"])
@pytest.mark.parametrize("fn", EXITS, ids=[fn.__name__ for fn in EXITS])
def test_gradients_leaving_each_way_equal_eager(fn, changing):
    compiled = carve.compile(fn, backend="inductor")
    w = torch.randn(4, generator=torch.Generator().manual_seed(10)).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    optimizer, reference_optimizer = torch.optim.Adam([w], lr=0.1), torch.optim.Adam([w_ref], lr=0.1)
    for call in range(PRICING + (4 if changing else 3)):
        inputs, reference = make_inputs(call, changing, w), make_inputs(call, changing, w_ref)
        result = compiled(*inputs.args)
        expected = fn(*reference.args)
        if fn is backward_outside:
            result.backward()
            expected.backward()
        assert_same(result, expected, f"call {call}: result")
        assert_same_grads(inputs.leaves, reference.leaves, f"call {call}")
        if fn is autograd_grad:
            w.grad, w_ref.grad = result[1][0], expected[1][0]  # the optimizer steps on the returned grad
        optimizer.step()
        reference_optimizer.step()
        assert_same_optimizer(optimizer, reference_optimizer)
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
    assert_compiled(compiled)


# -- Python numbers a region computes and hands back -----------------------------------------------
gamma = 0.98


def train_net(data, w):            # data: [(reward, prob)], prob from a softmax over w
    R = 0
    for r, prob in data[::-1]:
        R = r + gamma * R
        loss = -torch.log(prob) * R
        loss.backward()
    return R


def episode(w: torch.Tensor, call: int) -> list:
    """A REINFORCE episode: each step's action probability from its own softmax over w, and a
    reward that differs on every step and every call."""
    generator = torch.Generator().manual_seed(100 + call)
    data = []
    for step in range(4):
        state = torch.randn(3, generator=generator)
        probs = torch.softmax(w @ state, dim=0)
        action = step % 2
        data.append((0.5 + 0.37 * step + 0.21 * call, probs[action]))
    return data


def test_policy_gradient_update_equals_eager():
    compiled = carve.compile(train_net, backend="inductor")
    w = torch.randn(2, 3, generator=torch.Generator().manual_seed(11)).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    optimizer, reference_optimizer = torch.optim.Adam([w], lr=0.02), torch.optim.Adam([w_ref], lr=0.02)
    for call in range(PRICING + 4):
        optimizer.zero_grad()
        reference_optimizer.zero_grad()
        R = compiled(episode(w, call), w)
        expected = train_net(episode(w_ref, call), w_ref)
        assert R == pytest.approx(expected, rel=1e-6), f"call {call}: the discounted return"
        assert_same(w.grad, w_ref.grad, f"call {call}: w.grad")
        optimizer.step()
        reference_optimizer.step()
        assert_same_optimizer(optimizer, reference_optimizer)
    assert_compiled(compiled)


def numbers_out(w, x, n, f):
    s = f * 3.0 + 1.0
    m = n * 2 + 1
    loss = ((w * x).sin() * s).sum() + (w * m).mean()
    return loss, s, m


def discounted_sum(w, xs, rewards):
    R = 0.0
    total = 0
    for r, x in zip(rewards, xs):
        R = r + 0.9 * R
        total = total + (w * x).sum() * R
    return total, R


def test_numbers_a_region_returns_change_with_every_call():
    compiled = carve.compile(numbers_out, backend="inductor")
    w = torch.randn(4, generator=torch.Generator().manual_seed(12)).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    for call in range(PRICING + 4):
        x = torch.randn(4, generator=torch.Generator().manual_seed(call))
        loss, s, m = compiled(w, x, 2 + call, 0.25 + 0.6 * call)
        expected_loss, expected_s, expected_m = numbers_out(w_ref, x, 2 + call, 0.25 + 0.6 * call)
        assert (s, m) == (pytest.approx(expected_s, rel=1e-6), expected_m), f"call {call}"
        assert_same(loss, expected_loss, f"call {call}: loss")
        loss.backward()
        expected_loss.backward()
        assert_same(w.grad, w_ref.grad, f"call {call}: w.grad")
    assert_compiled(compiled)


def test_a_float_carried_through_an_unrolled_loop_is_returned_anew():
    # Dynamo (torch 2.13) fails compiling the second compiled call ("Guard failed on the same frame it
    # was created"; torch.compile raises it): the region runs as Python from then on, said once.
    compiled = carve.compile(discounted_sum, backend="inductor")
    w = torch.randn(4, generator=torch.Generator().manual_seed(13)).requires_grad_()
    w_ref = w.detach().clone().requires_grad_()
    for call in range(PRICING + 4):
        generator = torch.Generator().manual_seed(call)
        xs = [torch.randn(4, generator=generator) for _ in range(3)]
        rewards = [0.3 + 0.45 * call + 0.1 * i for i in range(3)]
        total, R = compiled(w, xs, rewards)
        expected_total, expected_R = discounted_sum(w_ref, xs, rewards)
        assert R == pytest.approx(expected_R, rel=1e-6), f"call {call}"
        assert_same(total, expected_total, f"call {call}: total")
        total.backward()
        expected_total.backward()
        assert_same(w.grad, w_ref.grad, f"call {call}: w.grad")
    assert_compiled(compiled)


# -- training steps: optimizers inside, a float weight changing, two backward passes -----------------
def train_step(model, optimizer, x, y, weight):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y) * weight
    loss.backward()
    optimizer.step()
    return loss.detach()


def test_a_training_step_with_a_changing_loss_weight_equals_eager():
    torch.manual_seed(14)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2))
    reference = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    compiled = carve.compile(train_step, backend="inductor")
    for call in range(PRICING + 4):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        weight = 1.0 / (call + 1.5)
        assert_same(compiled(model, optimizer, x, y, weight),
                    train_step(reference, reference_optimizer, x, y, weight), f"call {call}: loss")
        assert_same_optimizer(optimizer, reference_optimizer)
    assert_compiled(compiled)


def gan_step(z, G, D, optimizerG, optimizerD):
    fake = G(z)
    errD = D(fake.detach()).mean()
    errD.backward()
    print(errD.item())
    optimizerD.step()
    errG = D(fake).mean()
    errG.backward()
    optimizerG.step()
    return errD.detach(), errG.detach()


def test_gan_step_equals_eager(capsys):
    torch.manual_seed(15)
    G = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
    D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    G_ref, D_ref = copy.deepcopy(G), copy.deepcopy(D)
    optimizers = torch.optim.Adam(G.parameters(), lr=0.01), torch.optim.Adam(D.parameters(), lr=0.01)
    references = torch.optim.Adam(G_ref.parameters(), lr=0.01), torch.optim.Adam(D_ref.parameters(), lr=0.01)
    compiled = carve.compile(gan_step, backend="inductor")
    for call in range(PRICING + 3):
        z = torch.randn(5, 4)
        for optimizer in (*optimizers, *references):
            optimizer.zero_grad()
        result = compiled(z, G, D, *optimizers)
        printed = capsys.readouterr().out
        expected = gan_step(z, G_ref, D_ref, *references)
        assert float(printed) == pytest.approx(float(capsys.readouterr().out), rel=1e-5), f"call {call}"
        assert_same(result, expected, f"call {call}: losses")
        for optimizer, reference in zip(optimizers, references):
            assert_same_optimizer(optimizer, reference)
    assert_compiled(compiled)
