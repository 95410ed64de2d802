"""Values of one function back-propagated separately, as in eager: a GAN step, two losses,
a shared trunk kept with retain_graph, two torch.autograd.grad calls.

A compiled region is one autograd node for all its outputs, so a backward through one output
frees what another output's backward needs. carve ends regions where the backward passes
reaching its statements change (rewriters/backward_roots.py); each case here crashed before
("Trying to backward through the graph a second time") or must still equal eager. Every case
runs several calls and compares printed output, returned values, every gradient, the
parameters after the optimizers' steps and the optimizers' state with eager's.
"""

from __future__ import annotations

import copy
import types

import pytest
import torch
from torch import nn

import carve
from carve.testing import CountingBackend

BACKENDS = ["eager", "aot_eager"]
CALLS = 3


def assert_same(actual, expected, what=""):
    torch.testing.assert_close(actual, expected, rtol=1e-6, atol=1e-7, msg=lambda m: f"{what}: {m}")


def assert_same_modules(module, reference):
    for (name, p), q in zip(module.named_parameters(), reference.parameters(), strict=True):
        assert_same(p, q, f"parameter {name}")
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert_same(p.grad, q.grad, f"grad of {name}")


def assert_same_optimizer_state(optimizer, reference):
    state, expected = optimizer.state_dict()["state"], reference.state_dict()["state"]
    assert state.keys() == expected.keys()
    for key in state:
        for field in state[key]:
            assert_same(state[key][field], expected[key][field], f"optimizer state {key}.{field}")


def assert_same_printed(printed: str, expected: str):
    """The same lines; numbers equal up to the rounding aot_eager's decompositions may add."""
    lines, expected_lines = printed.splitlines(), expected.splitlines()
    assert len(lines) == len(expected_lines), (printed, expected)
    for line, expected_line in zip(lines, expected_lines):
        words, expected_words = line.split(), expected_line.split()
        assert len(words) == len(expected_words), (line, expected_line)
        for word, expected_word in zip(words, expected_words):
            try:
                number, expected_number = float(word), float(expected_word)
            except ValueError:
                assert word == expected_word, (line, expected_line)
            else:
                assert number == pytest.approx(expected_number, rel=1e-5, abs=1e-6), (line, expected_line)


# -- the standard GAN step, verbatim: G and D are globals ----------------------------------
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
D = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())


def step(z):
    fake = G(z)
    errD = D(fake.detach()).mean()
    errD.backward()
    print(errD.item())
    errG = D(fake).mean()
    errG.backward()
    return errD, errG


def _with_globals(fn, **names):
    """`fn` reading other globals: the eager reference of a function of module-level models."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, **names}, fn.__name__)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gan_step_of_the_issue_equals_eager(backend, capsys):
    G.zero_grad(set_to_none=True)
    D.zero_grad(set_to_none=True)
    G_ref, D_ref = copy.deepcopy(G), copy.deepcopy(D)
    eager_step = _with_globals(step, G=G_ref, D=D_ref)
    counting = CountingBackend(backend)
    compiled = carve.compile(step, backend=counting)
    torch.manual_seed(1)
    for _ in range(CALLS):
        z = torch.randn(5, 4)
        errD, errG = compiled(z)
        printed = capsys.readouterr().out
        expected_errD, expected_errG = eager_step(z)
        assert_same_printed(printed, capsys.readouterr().out)
        assert_same(errD, expected_errD, "errD")
        assert_same(errG, expected_errG, "errG")
        assert_same_modules(G, G_ref)
        assert_same_modules(D, D_ref)
    # `fake = G(z)` and `errD = D(fake.detach()).mean()` are two graphs (one before), `errG` a third.
    assert counting.graphs == 3


# -- a DCGAN epoch: two optimizers, a label rewritten in place, `output` rebound per loss --------
def make_gan(seed: int):
    torch.manual_seed(seed)
    netG = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 6), nn.Tanh())
    netD = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1), nn.Sigmoid())
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizerG = torch.optim.SGD(netG.parameters(), lr=0.05, momentum=0.9)
    return netG, netD, optimizerG, optimizerD


def gan_epoch(batches, noises, netD, netG, optimizerD, optimizerG, criterion):
    for i, (real, noise) in enumerate(zip(batches, noises)):
        netD.zero_grad()
        batch_size = real.size(0)
        label = torch.full((batch_size,), 1.0)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        fake = netG(noise)
        label.fill_(0.0)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        netG.zero_grad()
        label.fill_(1.0)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        print(i, "Loss_D:", errD.item(), "Loss_G:", errG.item(), "D(x):", D_x, "D(G(z)):", D_G_z1, D_G_z2)
    return errD, errG


@pytest.mark.parametrize("backend", BACKENDS)
def test_dcgan_epoch_with_two_optimizers_equals_eager(backend, capsys):
    netG, netD, optimizerG, optimizerD = make_gan(0)
    refG, refD, ref_optimizerG, ref_optimizerD = make_gan(0)
    criterion = nn.BCELoss()
    compiled = carve.compile(gan_epoch, backend=backend)
    torch.manual_seed(2)
    for _ in range(CALLS):
        batches = [torch.randn(6, 6) for _ in range(3)]
        noises = [torch.randn(6, 4) for _ in range(3)]
        errD, errG = compiled(batches, noises, netD, netG, optimizerD, optimizerG, criterion)
        printed = capsys.readouterr().out
        expected_errD, expected_errG = gan_epoch(batches, noises, refD, refG, ref_optimizerD, ref_optimizerG, criterion)
        assert_same_printed(printed, capsys.readouterr().out)
        assert printed.count("Loss_D") == 3
        assert_same(errD, expected_errD, "errD")
        assert_same(errG, expected_errG, "errG")
        assert_same_modules(netG, refG)
        assert_same_modules(netD, refD)
        assert_same_optimizer_state(optimizerD, ref_optimizerD)
        assert_same_optimizer_state(optimizerG, ref_optimizerG)


# -- two losses of disjoint graphs, computed together, back-propagated one after the other -------
def two_losses(x, m1, m2):
    a = m1(x).sum()
    b = m2(x).pow(2).mean()
    a.backward()
    b.backward()
    return a, b


def two_grads(x, w1, w2):
    a = (x * w1).sin().sum()
    b = (x * w2).cos().sum()
    ga, = torch.autograd.grad(a, [w1])
    gb, = torch.autograd.grad(outputs=b, inputs=[w2])
    return ga, gb


def two_engine_calls(x, m1, m2):
    a = m1(x).tanh().sum()
    b = m2(x).sigmoid().sum()
    torch.autograd.backward(a)
    torch.autograd.backward([b])
    return a.detach() + b.detach()


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_independent_losses_equal_eager(backend):
    torch.manual_seed(3)
    m1, m2 = nn.Linear(4, 3), nn.Sequential(nn.Linear(4, 5), nn.ReLU(), nn.Linear(5, 2))
    ref1, ref2 = copy.deepcopy(m1), copy.deepcopy(m2)
    optimizer = torch.optim.Adam([*m1.parameters(), *m2.parameters()], lr=0.1)
    ref_optimizer = torch.optim.Adam([*ref1.parameters(), *ref2.parameters()], lr=0.1)
    compiled = carve.compile(two_losses, backend=backend)
    for _ in range(CALLS):
        x = torch.randn(6, 4, requires_grad=True)
        x_ref = x.detach().clone().requires_grad_()
        optimizer.zero_grad()
        ref_optimizer.zero_grad()
        a, b = compiled(x, m1, m2)
        expected_a, expected_b = two_losses(x_ref, ref1, ref2)
        assert_same(a, expected_a, "a")
        assert_same(b, expected_b, "b")
        assert_same(x.grad, x_ref.grad, "x.grad")
        optimizer.step()
        ref_optimizer.step()
        assert_same_modules(m1, ref1)
        assert_same_modules(m2, ref2)
        assert_same_optimizer_state(optimizer, ref_optimizer)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_autograd_grad_calls_equal_eager(backend):
    compiled = carve.compile(two_grads, backend=backend)
    torch.manual_seed(4)
    for _ in range(CALLS):
        x = torch.randn(5)
        w1, w2 = torch.randn(5, requires_grad=True), torch.randn(5, requires_grad=True)
        for actual, expected in zip(compiled(x, w1, w2), two_grads(x, w1, w2), strict=True):
            assert_same(actual, expected, "autograd.grad")
        assert w1.grad is None and w2.grad is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_autograd_backward_calls_equal_eager(backend):
    torch.manual_seed(5)
    m1, m2 = nn.Linear(4, 3), nn.Linear(4, 2)
    ref1, ref2 = copy.deepcopy(m1), copy.deepcopy(m2)
    compiled = carve.compile(two_engine_calls, backend=backend)
    for _ in range(CALLS):
        x = torch.randn(3, 4)
        assert_same(compiled(x, m1, m2), two_engine_calls(x, ref1, ref2), "a + b")
        assert_same_modules(m1, ref1)
        assert_same_modules(m2, ref2)


# -- a loss collected in a list on every step, back-propagated after the loop --------------------
def collected_losses(xs, m1, m2):
    outs = []
    for x in xs:
        a = m1(x).sum()
        outs.append(m2(x).square().mean())  # computed by a graph of its own, appended after it
        a.backward()
    total = torch.stack(outs).sum()
    total.backward()
    return total.detach()


@pytest.mark.parametrize("backend", BACKENDS)
def test_losses_collected_in_a_loop_equal_eager(backend):
    torch.manual_seed(8)
    m1, m2 = nn.Linear(4, 3), nn.Linear(4, 2)
    ref1, ref2 = copy.deepcopy(m1), copy.deepcopy(m2)
    compiled = carve.compile(collected_losses, backend=backend)
    for _ in range(CALLS):
        xs = [torch.randn(3, 4) for _ in range(3)]
        assert_same(compiled(xs, m1, m2), collected_losses(xs, ref1, ref2), "total")
        assert_same_modules(m1, ref1)
        assert_same_modules(m2, ref2)


# -- a shared trunk: the user keeps its graph for the second backward ---------------------------
def shared_trunk(x, trunk, head1, head2):
    h = torch.tanh(trunk(x))
    a = head1(h).sum()
    b = head2(h).square().mean()
    a.backward(retain_graph=True)
    b.backward()
    return a.detach() + b.detach()


@pytest.mark.parametrize("backend", BACKENDS)
def test_shared_trunk_with_retain_graph_equals_eager(backend):
    torch.manual_seed(6)
    models = [nn.Linear(4, 6), nn.Linear(6, 2), nn.Linear(6, 3)]
    references = copy.deepcopy(models)
    optimizer = torch.optim.SGD([p for m in models for p in m.parameters()], lr=0.1, momentum=0.9)
    ref_optimizer = torch.optim.SGD([p for m in references for p in m.parameters()], lr=0.1, momentum=0.9)
    compiled = carve.compile(shared_trunk, backend=backend)
    for _ in range(CALLS):
        x = torch.randn(5, 4)
        optimizer.zero_grad()
        ref_optimizer.zero_grad()
        assert_same(compiled(x, *models), shared_trunk(x, *references), "a + b")
        for model, reference in zip(models, references):
            assert_same_modules(model, reference)
        optimizer.step()
        ref_optimizer.step()
        for model, reference in zip(models, references):
            assert_same_modules(model, reference)
        assert_same_optimizer_state(optimizer, ref_optimizer)


# -- one backward site: the split is today's --------------------------------------------------------
def train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    out = model(x)
    loss = nn.functional.mse_loss(out, y)
    loss.backward()
    optimizer.step()
    return out.detach(), loss.detach()


def test_a_step_with_one_backward_keeps_its_graphs():
    torch.manual_seed(7)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    reference = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    counting = CountingBackend("aot_eager")
    compiled = carve.compile(train_step, backend=counting)
    for _ in range(CALLS):
        x, y = torch.randn(5, 4), torch.randn(5, 2)
        for actual, expected in zip(compiled(model, optimizer, x, y), train_step(reference, ref_optimizer, x, y)):
            assert_same(actual, expected, "train_step")
        assert_same_modules(model, reference)
    # `out` and `loss` in one graph, the detached results in another: one backward, no cut.
    assert counting.graphs == 2
