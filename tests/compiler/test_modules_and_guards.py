"""nn.Modules, gradients, and the guards that decide when a cached graph may run."""

from __future__ import annotations

import copy
import logging

import torch

import carve


class LoopyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(8, 8) for _ in range(3))
        self.head = torch.nn.Linear(8, 2)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            print("layer", i, tuple(x.shape))
        x = self.dropout(x)
        return self.head(x)


def test_module_gradients_with_loop_and_print_match_eager(backend, capsys):
    torch.manual_seed(0)
    net = LoopyNet().eval()
    reference = copy.deepcopy(net)
    compiled = carve.compile(net, backend=backend)
    x = torch.randn(4, 8)
    for _ in range(2):
        out = compiled(x)
        printed = capsys.readouterr().out
        expected = reference(x)
        assert printed == capsys.readouterr().out
        assert printed.count("layer") == 3
        assert torch.allclose(out, expected, atol=1e-6)
        out.sum().backward()
        expected.sum().backward()
        for (name, p), q in zip(net.named_parameters(), reference.parameters()):
            assert torch.allclose(p.grad, q.grad, atol=1e-6), name
        net.zero_grad()
        reference.zero_grad()
    assert backend.graphs >= 2


def test_compiled_module_exposes_the_module(backend):
    net = LoopyNet()
    compiled = carve.compile(net, backend=backend)
    assert list(compiled.parameters()) == list(net.parameters())
    assert compiled.state_dict().keys() == net.state_dict().keys()  # no wrapper prefix
    compiled.eval()
    assert not net.training and not net.dropout.training
    compiled.train()
    assert net.training and net.dropout.training
    assert compiled.head is net.head


def test_train_and_eval_modes_are_guarded(backend):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.9))
    compiled = carve.compile(net, backend=backend)
    x = torch.ones(2, 4)
    net.eval()
    compiled(x)
    assert torch.allclose(compiled(x), net(x))
    eval_out = net(x)
    net.train()
    for seed in (1, 2):
        torch.manual_seed(seed)
        out = compiled(x)
        torch.manual_seed(seed)
        expected = net(x)
        assert torch.equal(out, expected)
        assert not torch.allclose(out, eval_out)  # dropout really ran in training mode


def test_optimizer_updates_are_seen(backend):
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 1)
    compiled = carve.compile(net, backend=backend)
    opt = torch.optim.SGD(net.parameters(), lr=0.5)
    x = torch.randn(5, 3)
    for _ in range(3):
        opt.zero_grad()
        loss = compiled(x).pow(2).mean()
        assert torch.allclose(loss, net(x).pow(2).mean())
        loss.backward()
        opt.step()
    assert backend.graphs == 1  # parameters are graph inputs: no recompile after updates


SCALE = torch.tensor(2.0)
FACTOR = 3


def scaled(x):
    return x * SCALE + FACTOR


def test_rebound_globals_are_seen(backend):
    global SCALE, FACTOR
    compiled = carve.compile(scaled, backend=backend)
    x = torch.ones(2)
    try:
        assert torch.equal(compiled(x), torch.full((2,), 5.0))
        assert torch.equal(compiled(x), torch.full((2,), 5.0))
        SCALE = torch.tensor(10.0)
        assert torch.equal(compiled(x), torch.full((2,), 13.0))
        FACTOR = -1
        assert torch.equal(compiled(x), torch.full((2,), 9.0))
    finally:
        SCALE, FACTOR = torch.tensor(2.0), 3


def test_shape_dtype_and_scalar_changes_recompile(backend):
    def f(x, k):
        return x * k + 1

    compiled = carve.compile(f, backend=backend)
    cases = [(torch.randn(3), 2), (torch.randn(3), 2), (torch.randn(5), 2),
             (torch.randn(5, dtype=torch.float64), 2), (torch.randn(5), 3), (torch.randn(3), 2)]
    for x, k in cases:
        assert torch.allclose(compiled(x, k), f(x, k))
    assert backend.graphs == 4  # (3,), (5,), float64, k=3; the last case hits the cache


def test_requires_grad_and_grad_mode_are_guarded(backend):
    def f(x):
        return (x * 2).sum()

    compiled = carve.compile(f, backend=backend)
    x = torch.randn(3, requires_grad=True)
    compiled(x).backward()
    assert torch.allclose(x.grad, torch.full((3,), 2.0))
    with torch.no_grad():
        assert not compiled(x).requires_grad
    assert compiled(x.detach()).requires_grad is False


def test_recompile_limit_falls_back_to_eager_and_says_so_once(backend, caplog):
    def f(x):
        return x + 1

    compiled = carve.compile(f, backend=backend, recompile_limit=2, dynamic=False)
    with caplog.at_level(logging.DEBUG, logger="carve"):
        for n in range(1, 7):
            x = torch.randn(n)
            assert torch.equal(compiled(x), x + 1)
    assert backend.graphs == 2
    limit_messages = [r for r in caplog.records if r.name.startswith("carve") and ("CRV020" in r.getMessage() or "limit" in r.getMessage())]
    assert len(limit_messages) == 1


class Residual(torch.nn.Module):
    def __init__(self, eps=1e-5, act=torch.tanh):
        super().__init__()
        self.linear = torch.nn.Linear(8, 8)
        self._eps = eps
        self.act = act

    def forward(self, x):
        return self.act(self.linear(x)) * (1 + self._eps) + x


class Stack(torch.nn.Module):
    def __init__(self, blocks):
        super().__init__()
        self.blocks = torch.nn.ModuleList(blocks)

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            if i % 4 == 0:
                print("block", i)
        return x


def test_loop_over_same_shaped_blocks_compiles_one_graph(backend, capsys):
    torch.manual_seed(0)
    net = Stack([Residual() for _ in range(12)])
    compiled = carve.compile(net, backend=backend)
    x = torch.randn(2, 8)
    for _ in range(2):
        assert torch.allclose(compiled(x), net(x), atol=1e-6)
    # Twelve blocks, at most three graphs: parameters are inputs, so blocks of one structure share
    # a graph (twelve would exceed the recompile limit of 8 if each block needed its own). The
    # others: block 0 gets the input, the others a graph output that requires grad; the loop
    # index `i` the region reads is specialised once, then symbolic.
    assert backend.graphs <= 3
    assert backend.calls >= 12


def test_blocks_differing_in_plain_or_private_attributes_do_not_share_a_graph(backend):
    torch.manual_seed(0)
    blocks = [Residual(eps=0.0), Residual(eps=0.5), Residual(act=torch.sigmoid)]
    net = Stack(blocks)
    compiled = carve.compile(net, backend=backend)
    x = torch.randn(2, 8)
    for _ in range(2):
        assert torch.allclose(compiled(x), net(x), atol=1e-6)
    assert backend.graphs == 3
    blocks[0]._eps = 2.0  # mutated after compiling: must be seen
    assert torch.allclose(compiled(x), net(x), atol=1e-6)
