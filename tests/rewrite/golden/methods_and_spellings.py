"""Golden input: a module method using super() and a private name, a nested
compiled function, and other spellings of the compile decorator."""
import torch
import torch.nn as nn
import carve
from carve import compile as carve_compile
from torch import compile as torch_compile


class Base(nn.Module):
    def forward(self, x):
        return x + 1


class Scaler(Base):
    def __init__(self):
        super().__init__()
        self.__scale = 3.0
        self.calls = 0

    @carve.compile(backend="eager")
    def forward(self, x):
        y = super().forward(x) * self.__scale
        self.calls += 1
        print("calls", self.calls)
        return y.tanh()


def make_affine(weight):
    @carve_compile(backend="eager")
    def affine(x):
        y = x * weight
        print("affine", y.sum().item() > 0)
        return y + weight

    return affine


@torch_compile(backend="eager")
def double_then_log(x):
    y = x * 2
    print("doubled")
    return y.log1p()


def untouched(x):  # not compiled: kept byte for byte
    return x+1
