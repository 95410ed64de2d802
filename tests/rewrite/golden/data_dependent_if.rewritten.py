"""Golden input: an if/else whose test depends on tensor values."""
import torch
import carve


_carve_clamp_or_shift = carve.RegionSet("clamp_or_shift", backend="eager")


# carve: graph region, lines 8-9, compiled to an FX graph
@_carve_clamp_or_shift.graph(8, 9)
def _clamp_or_shift_graph_region_0(x):
    y = x * 2
    _carve_t0 = y.sum() > 0
    return y, _carve_t0


# carve: graph region, lines 10-10, compiled to an FX graph
@_carve_clamp_or_shift.graph(10, 10)
def _clamp_or_shift_graph_region_1(y):
    z = y.clamp(max=1.0)
    return z


# carve: graph region, lines 12-12, compiled to an FX graph
@_carve_clamp_or_shift.graph(12, 12)
def _clamp_or_shift_graph_region_2(y):
    z = y + 10
    return z


# carve: graph region, lines 13-13, compiled to an FX graph
@_carve_clamp_or_shift.graph(13, 13)
def _clamp_or_shift_graph_region_3(z, x):
    return z - x


@_carve_clamp_or_shift.entry
def clamp_or_shift(x):
    y, _carve_t0 = _clamp_or_shift_graph_region_0(x)
    # carve: eager, CRV005 control flow on a tensor's value: `if` condition depends on a tensor's value
    _carve_clamp_or_shift.graph_break(9, "CRV005")
    if _carve_t0:
        z = _clamp_or_shift_graph_region_1(y)
    else:
        z = _clamp_or_shift_graph_region_2(y)
    return _clamp_or_shift_graph_region_3(z, x)
