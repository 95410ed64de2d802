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


_carve_Scaler_forward = carve.RegionSet("Scaler.forward", backend="eager")


# carve: graph region, lines 23-23, compiled to an FX graph
@_carve_Scaler_forward.graph(23, 23)
def _Scaler_forward_graph_region_0(self, x):
    y = super(Scaler, self).forward(x) * self._Scaler__scale
    return y


# carve: graph region, lines 26-26, compiled to an FX graph
@_carve_Scaler_forward.graph(26, 26)
def _Scaler_forward_graph_region_1(y):
    return y.tanh()


class Scaler(Base):
    def __init__(self):
        super().__init__()
        self.__scale = 3.0
        self.calls = 0

    @_carve_Scaler_forward.entry
    def forward(self, x):
        y = _Scaler_forward_graph_region_0(self, x)
        # carve: eager, CRV019 Python side effect: stores attribute self.calls
        self.calls += 1
        # carve: eager, CRV003 I/O or logging: print() performs I/O
        _carve_Scaler_forward.graph_break(25, "CRV003")
        print("calls", self.calls)
        return _Scaler_forward_graph_region_1(y)


def make_affine(weight):
    _carve_make_affine_affine = carve.RegionSet("make_affine.<locals>.affine", backend="eager")

    # carve: graph region, lines 32-33, compiled to an FX graph
    @_carve_make_affine_affine.graph(32, 33)
    def _make_affine_affine_graph_region_0(x):
        y = x * weight
        _carve_t0 = y.sum()
        return y, _carve_t0

    # carve: graph region, lines 34-34, compiled to an FX graph
    @_carve_make_affine_affine.graph(34, 34)
    def _make_affine_affine_graph_region_1(y):
        return y + weight

    @_carve_make_affine_affine.entry
    def affine(x):
        y, _carve_t0 = _make_affine_affine_graph_region_0(x)
        # carve: eager, CRV003 I/O or logging: print() performs I/O
        _carve_make_affine_affine.graph_break(33, "CRV003")
        print("affine", _carve_t0.item() > 0)
        return _make_affine_affine_graph_region_1(y)

    return affine


_carve_double_then_log = carve.RegionSet("double_then_log", backend="eager")


# carve: graph region, lines 41-41, compiled to an FX graph
@_carve_double_then_log.graph(41, 41)
def _double_then_log_graph_region_0(x):
    y = x * 2
    return y


# carve: graph region, lines 43-43, compiled to an FX graph
@_carve_double_then_log.graph(43, 43)
def _double_then_log_graph_region_1(y):
    return y.log1p()


@_carve_double_then_log.entry
def double_then_log(x):
    y = _double_then_log_graph_region_0(x)
    # carve: eager, CRV003 I/O or logging: print() performs I/O
    _carve_double_then_log.graph_break(42, "CRV003")
    print("doubled")
    return _double_then_log_graph_region_1(y)


def untouched(x):  # not compiled: kept byte for byte
    return x+1
