"""Bugs found while testing `carve rewrite` in code it shares with the decorator path.

Each was found as an xfail(strict=True) test and is now a regression test.
`carve rewrite` itself is not affected by these: it writes methods with the
mangled names Python would use (see rewriters/rewrite.py).
"""

from __future__ import annotations

import torch

import carve


class _Base(torch.nn.Module):
    def forward(self, x):
        return x + 1


class _PrivateScale(_Base):
    def __init__(self):
        super().__init__()
        self.__scale = 3.0

    @carve.compile(backend="eager")
    def forward(self, x):
        y = super().forward(x) * self.__scale
        print("scaled")
        return y


def test_decorator_path_mangles_private_names_in_methods(capsys):
    assert torch.equal(_PrivateScale()(torch.ones(2)), torch.full((2,), 6.0))
