"""Attributes of plain Python objects a region reads must be guarded, not frozen at trace time."""

from __future__ import annotations

from types import SimpleNamespace

import torch

import carve


class Config:
    def __init__(self, scale, sizes):
        self.scale = scale
        self.sizes = sizes
        self.inner = SimpleNamespace(shift=1.0)


CONFIG = Config(2.0, (1, 2))


def test_mutated_argument_attribute_is_seen(backend):
    def f(x, cfg):
        return x * cfg.scale + cfg.inner.shift

    compiled = carve.compile(f, backend=backend)
    cfg = Config(2.0, (1,))
    x = torch.ones(3)
    assert torch.equal(compiled(x, cfg), f(x, cfg))
    assert torch.equal(compiled(x, cfg), f(x, cfg))
    cfg.scale = 5.0
    assert torch.equal(compiled(x, cfg), f(x, cfg))
    cfg.inner.shift = -3.0
    assert torch.equal(compiled(x, cfg), f(x, cfg))


def test_mutated_global_object_attribute_is_seen(backend):
    def f(x):
        return x.reshape(CONFIG.sizes) * CONFIG.scale

    compiled = carve.compile(f, backend=backend)
    x = torch.ones(2)
    try:
        assert torch.equal(compiled(x), f(x))
        CONFIG.scale = 7.0
        assert torch.equal(compiled(x), f(x))
        CONFIG.sizes = (2, 1)
        assert torch.equal(compiled(x), f(x))
    finally:
        CONFIG.scale, CONFIG.sizes = 2.0, (1, 2)


def test_module_plain_attribute_holding_an_object(backend):
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cfg = Config(3.0, ())

        def forward(self, x):
            return x * self.cfg.scale

    net = Net()
    compiled = carve.compile(net, backend=backend)
    x = torch.ones(2)
    assert torch.equal(compiled(x), net(x))
    net.cfg.scale = 0.5
    assert torch.equal(compiled(x), net(x))
