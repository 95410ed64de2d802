"""Where graph runs end in a function with several backward passes (rewriters/backward_roots.py),
on source alone: no torch, nothing executed. The runtime side (each case equal to eager) is
tests/compiler/test_backward_cuts.py.
"""

from __future__ import annotations

import textwrap

import libcst as cst

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.backward_roots import BackwardRoots
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.partition import GraphRun, partition_block

from tests.rewriters.test_partition import shape


def analysed(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    analysis = analyze_function(function, ModuleContext(module))
    return analysis, Dataflow(function)


def runs(source: str) -> list[list[str]]:
    """The graph runs of the function's body (nested blocks included), as source lines."""
    analysis, dataflow = analysed(source)
    found: list[list[str]] = []

    def collect(items):
        for item in items:
            if isinstance(item, GraphRun):
                found.append([cst.Module([]).code_for_node(s).strip() for s in item.statements])
            for block in getattr(item, "blocks", []):
                collect(block)

    collect(partition_block(analysis.func.body, analysis, dataflow=dataflow))
    return found


def test_the_gan_step_ends_a_region_between_the_generator_and_the_detached_critic():
    assert runs("""
        import torch
        def step(z):
            fake = G(z)
            errD = D(fake.detach()).mean()
            errD.backward()
            print(errD.item())
            errG = D(fake).mean()
            errG.backward()
    """) == [["fake = G(z)"], ["errD = D(fake.detach()).mean()"], ["errG = D(fake).mean()"]]


def test_two_losses_of_one_run_become_two_runs():
    assert runs("""
        import torch
        def f(x):
            a = m1(x).sum()
            b = m2(x).sum()
            a.backward()
            b.backward()
    """) == [["a = m1(x).sum()"], ["b = m2(x).sum()"]]


def test_autograd_functions_are_backward_sites_too():
    assert runs("""
        import torch
        from torch import autograd
        def f(x, w1, w2):
            a = (x * w1).sum()
            b = (x * w2).sum()
            g1, = autograd.grad(a, [w1])
            torch.autograd.backward(tensors=[b])
    """) == [["a = (x * w1).sum()"], ["b = (x * w2).sum()"]]


def test_a_shared_trunk_is_its_own_region():
    assert runs("""
        import torch
        def f(x):
            h = trunk(x)
            a = head1(h).sum()
            b = head2(h).sum()
            a.backward(retain_graph=True)
            b.backward()
    """) == [["h = trunk(x)"], ["a = head1(h).sum()"], ["b = head2(h).sum()"]]


def test_a_name_rebound_between_backward_passes_is_two_values():
    """DCGAN's `output`: each binding reaches its own loss only, so the generator's `fake` (read
    by the last loss) is cut from the critic's second output, and nothing else is cut: the label
    and the batch size cannot require grad, so every loss reading them keeps no two apart."""
    assert runs("""
        import torch
        def epoch(batches, netD, netG, criterion, nz):
            for i, real in enumerate(batches):
                batch_size = real.size(0)
                label = torch.full((batch_size,), 1.0)
                output = netD(real).view(-1)
                errD_real = criterion(output, label)
                errD_real.backward()
                noise = torch.randn(batch_size, nz)
                fake = netG(noise)
                label.fill_(0.0)
                output = netD(fake.detach()).view(-1)
                errD_fake = criterion(output, label)
                errD_fake.backward()
                label.fill_(1.0)
                output = netD(fake).view(-1)
                errG = criterion(output, label)
                errG.backward()
    """) == [
        ["batch_size = real.size(0)", "label = torch.full((batch_size,), 1.0)", "output = netD(real).view(-1)",
         "errD_real = criterion(output, label)"],
        ["noise = torch.randn(batch_size, nz)", "fake = netG(noise)", "label.fill_(0.0)"],
        ["output = netD(fake.detach()).view(-1)", "errD_fake = criterion(output, label)"],
        ["label.fill_(1.0)", "output = netD(fake).view(-1)", "errG = criterion(output, label)"],
    ]


def test_values_made_under_no_grad_or_detached_keep_runs_whole():
    assert runs("""
        import torch
        def f(x, policy, critic):
            with torch.no_grad():
                target = critic(x) * 0.9
            baseline = target.mean().item()
            scale = float(x.shape[0])
            value = critic(x).mean()
            loss = policy(x).sum() * (target - baseline).detach().sum() / scale
            value.backward()
            loss.backward()
    """) == [
        ["with torch.no_grad():\n    target = critic(x) * 0.9"],
        ["scale = float(x.shape[0])", "value = critic(x).mean()"],
        ["loss = policy(x).sum() * (target - baseline).detach().sum() / scale"],
    ]


def test_an_in_place_update_belongs_to_the_value_it_updates():
    assert runs("""
        import torch
        def f(x):
            a = m1(x)
            a.mul_(2)
            b = m2(x).sum()
            a.sum().backward()
            b.backward()
    """) == [["a = m1(x)", "a.mul_(2)"], ["b = m2(x).sum()"]]


ONE_BACKWARD = """
    import torch
    def train_step(model, optimizer, x, y):
        optimizer.zero_grad()
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        aux = model(x * 2).detach()
        loss.backward()
        optimizer.step()
        return out, loss.item(), aux
"""

POLICY_GRADIENT = """
    import torch
    gamma = 0.98
    def train_net(data, w):
        R = 0
        for r, prob in data[::-1]:
            R = r + gamma * R
            loss = -torch.log(prob) * R
            loss.backward()
        return R
"""


def test_a_function_with_one_backward_site_is_split_as_before():
    for source in (ONE_BACKWARD, POLICY_GRADIENT):
        analysis, dataflow = analysed(source)
        backward = BackwardRoots(analysis, dataflow)
        assert backward.sites == []  # built for two sites or more only
        assert all(not backward.roots_of(s) for s in analysis.func.body.body)
    analysis, dataflow = analysed(ONE_BACKWARD)
    assert shape(partition_block(analysis.func.body, analysis, dataflow=dataflow)) == [
        ("eager", ["CRV019"]), ("graph", 3), ("eager", ["CRV012"]), ("eager", ["CRV019"]), ("eager", ["CRV004"]),
    ]
    analysis, dataflow = analysed(POLICY_GRADIENT)
    assert shape(partition_block(analysis.func.body, analysis, dataflow=dataflow)) == [
        ("graph", 1), ("compound", [[("graph", 2), ("eager", ["CRV012"])]]), ("graph", 1),
    ]


def test_a_backward_twice_through_one_loss_cuts_nothing():
    assert runs("""
        import torch
        def f(x):
            h = trunk(x)
            loss = head(h).sum()
            loss.backward(retain_graph=True)
            loss.backward()
    """) == [["h = trunk(x)", "loss = head(h).sum()"]]


def test_autograd_bookkeeping_is_no_backward_site():
    analysis, dataflow = analysed("""
        import torch
        def f(x):
            h = trunk(x)
            h.retain_grad()
            loss = head(h).sum()
            loss.backward()
            return h.grad
    """)
    assert BackwardRoots(analysis, dataflow).sites == []
