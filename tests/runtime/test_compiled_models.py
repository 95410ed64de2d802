"""A region whose work is mostly a model's runs as Python with the model compiled, once for every
region that calls it: torch.compile(model)'s placement (GraphRegion._run_with_compiled_models).

    netD.zero_grad()
    output = netD(real)               # region 1: Python; netD runs compiled
    errD_real = bce(output, ones)
    errD_real.backward()
    D_x = output.mean().item()        # a graph break
    fake = netG(noise)                # region 2: Python; netG runs compiled
    output = netD(fake.detach())      # netD again: the same compiled netD, no second compile

Each test compares every call with eager (results, parameters after the optimizers' steps,
raised errors) and counts the graphs against torch.compile on the models, on the same calls.
Pricing is on (a backend carve does not know: see test_worth_compiling.priced_backend); the
model rule does not depend on the clock.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import carve
from carve.testing import CountingBackend, graphs_run_by
from tests.runtime.test_worth_compiling import priced_backend

NZ = 4
MODEL_REASON = "its work is mostly its model's"


def assert_left_as_written(model):
    """Nothing a region set to run the model compiled (its compiled forward on the instance) is
    left on it after the region's call."""
    assert "forward" not in vars(model) and "_compiled_call_impl" not in vars(model)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(NZ, 8)
        self.out = nn.Linear(8, 6)

    def forward(self, z):
        return self.out(self.hidden(z).tanh()).tanh()


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 8)
        self.out = nn.Linear(8, 1)
        self.slope = 0.2

    def forward(self, x):
        return self.out(F.leaky_relu(self.hidden(x), self.slope)).sigmoid()


def gan_step(netG, netD, optimizerD, optimizerG, real):
    netD.zero_grad()
    output = netD(real)
    errD_real = F.binary_cross_entropy(output, torch.ones_like(output))
    errD_real.backward()
    D_x = output.mean().item()
    noise = torch.randn(real.size(0), NZ)
    fake = netG(noise)
    output = netD(fake.detach())
    errD_fake = F.binary_cross_entropy(output, torch.zeros_like(output))
    errD_fake.backward()
    D_G_z1 = output.mean().item()
    optimizerD.step()
    netG.zero_grad()
    output = netD(fake)
    errG = F.binary_cross_entropy(output, torch.ones_like(output))
    errG.backward()
    D_G_z2 = output.mean().item()
    optimizerG.step()
    return D_x, D_G_z1, D_G_z2, errG.detach()


class Gan:
    """A generator, a discriminator and their optimizers, made the same way each time."""

    def __init__(self, seed: int = 0) -> None:
        torch.manual_seed(seed)
        self.netG, self.netD = Generator(), Discriminator()
        self.optimizerD = torch.optim.Adam(self.netD.parameters(), lr=0.01)
        self.optimizerG = torch.optim.Adam(self.netG.parameters(), lr=0.01)

    def step(self, fn, real, seed):
        torch.manual_seed(seed)  # the noise each step draws: eager's stream both ways
        return fn(self.netG, self.netD, self.optimizerD, self.optimizerG, real)

    def parameters(self):
        return [*self.netG.parameters(), *self.netD.parameters()]


def assert_same_gans(gan, reference, what):
    for p, q in zip(gan.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(p, q, msg=lambda m: f"{what}: {m}")


def test_a_gan_step_runs_each_model_compiled_once_for_all_its_call_sites_and_equals_eager():
    eager, carved, placed = Gan(), Gan(), Gan()
    backend, torch_backend = priced_backend(), CountingBackend("eager")
    compiled_step = carve.compile(gan_step, backend=backend)
    # torch.compile where a GAN script's authors put it: on each model.
    placed.netG, placed.netD = (torch.compile(placed.netG, backend=torch_backend),
                                torch.compile(placed.netD, backend=torch_backend))
    placed.optimizerD = torch.optim.Adam(placed.netD.parameters(), lr=0.01)
    placed.optimizerG = torch.optim.Adam(placed.netG.parameters(), lr=0.01)
    for call in range(6):
        real = torch.randn(5, 6, generator=torch.Generator().manual_seed(100 + call))
        expected = eager.step(gan_step, real, call)
        torch.testing.assert_close(carved.step(compiled_step, real, call), expected, msg=lambda m: f"call {call}: {m}")
        torch.testing.assert_close(placed.step(gan_step, real, call), expected)
        assert_same_gans(carved, eager, f"call {call}: parameters after the steps")
    model_regions = [region for region in compiled_step.regions if MODEL_REASON in (region.eager_reason or "")]
    # netD(real), netG(noise), netD(fake.detach()), netD(fake): each region runs its model compiled.
    assert len(model_regions) == 4, [(r.name, r.eager_reason) for r in compiled_step.regions]
    assert all(graphs_run_by(region) for region in model_regions)
    # One compile of each model for every region calling it: torch.compile's graphs on the models.
    models = {id(model): model for region in model_regions for model in region.compiled_models}
    assert len(models) == 2
    model_graphs = [graph for model in models.values() for region in model_forward(model).regions
                    for graph in graphs_run_by(region)]
    assert len(model_graphs) == torch_backend.graphs > 0
    assert not any(region.graphs for region in model_regions)  # no region compiled a model again


def model_forward(model):
    return type(model).forward.__carve_version__


def test_outside_the_compiled_function_the_model_runs_as_written():
    carved = Gan()
    backend = priced_backend()
    compiled_step = carve.compile(gan_step, backend=backend)
    for call in range(3):
        carved.step(compiled_step, torch.randn(5, 6), call)
    assert_left_as_written(carved.netD)
    assert carved.netD._compiled_call_impl is None
    calls = backend.calls
    expected = Discriminator.forward(carved.netD, torch.ones(2, 6))
    torch.testing.assert_close(carved.netD(torch.ones(2, 6)), expected)
    assert backend.calls == calls  # the model called from the user's own code: eager


def scores_then_adds(model, x, extra):
    y = model(x)
    z = y + extra  # fails for a wrong shape, after the model call
    print("mean", round(z.mean().item(), 4))
    return z


def test_an_error_after_the_model_call_is_eagers_and_leaves_the_model_as_written():
    torch.manual_seed(3)
    model = Discriminator()
    compiled = carve.compile(scores_then_adds, backend=priced_backend())
    for _ in range(3):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x, torch.ones(4, 1)), scores_then_adds(model, x, torch.ones(4, 1)))
    region = compiled.regions[0]
    assert MODEL_REASON in region.eager_reason
    with pytest.raises(RuntimeError) as expected:
        scores_then_adds(model, x, torch.ones(3, 1))
    with pytest.raises(RuntimeError) as raised:
        compiled(model, x, torch.ones(3, 1))
    assert str(raised.value) == str(expected.value)
    assert_left_as_written(model)


def test_the_model_state_the_compiled_model_reads_changes_between_calls():
    # An attribute the forward reads, the training flag and the weights change before each call.
    torch.manual_seed(4)
    model, reference = Discriminator(), None
    reference = copy.deepcopy(model)
    compiled = carve.compile(scores_then_adds, backend=priced_backend())
    for call in range(8):
        for m in (model, reference):
            m.slope = 0.1 * (call % 3)
            m.train(call % 2 == 0)
            with torch.no_grad():
                m.out.bias.fill_(0.05 * call)
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x, torch.ones(4, 1)), scores_then_adds(reference, x, torch.ones(4, 1)),
                                   msg=lambda m: f"call {call}: {m}")
    assert MODEL_REASON in compiled.regions[0].eager_reason


def test_a_model_the_user_compiled_in_place_is_left_as_it_is():
    torch.manual_seed(5)
    model, reference = Discriminator(), None
    reference = copy.deepcopy(model)
    users_backend, backend = CountingBackend("eager"), priced_backend()
    model.compile(backend=users_backend)
    users_call = model._compiled_call_impl
    compiled = carve.compile(scores_then_adds, backend=backend)
    for _ in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x, torch.ones(4, 1)), scores_then_adds(reference, x, torch.ones(4, 1)))
    assert model._compiled_call_impl is users_call
    assert users_backend.graphs >= 1 and backend.graphs == 0


def test_a_model_in_a_parallel_wrapper_is_compiled_with_its_region():
    # Dynamo traces a wrapper's forward its own way (DDP's buckets): the region is compiled, as before.
    torch.manual_seed(6)
    model = nn.DataParallel(Discriminator())
    reference = copy.deepcopy(model)
    backend = priced_backend()
    compiled = carve.compile(scores_then_adds, backend=backend)
    for _ in range(4):
        x = torch.randn(4, 6)
        torch.testing.assert_close(compiled(model, x, torch.ones(4, 1)), scores_then_adds(reference, x, torch.ones(4, 1)))
    region = compiled.regions[0]
    assert MODEL_REASON not in (region.eager_reason or "") and region.graphs and not region.compiled_models
