"""Golden input: tensor-to-Python conversions with .item(), float() and int()."""
import torch
import carve


_carve_stats = carve.RegionSet("stats", backend="eager")


# carve: graph region, lines 8-8, compiled to an FX graph
@_carve_stats.graph(8, 8)
def _stats_graph_region_0(x):
    mean = x.mean()
    return mean


# carve: graph region, lines 10-11, compiled to an FX graph
@_carve_stats.graph(10, 11)
def _stats_graph_region_1(x, mean):
    count = int(x.numel())
    _carve_t0 = (x - mean).abs().max()
    return count, _carve_t0


# carve: graph region, lines 12-12, compiled to an FX graph
@_carve_stats.graph(12, 12)
def _stats_graph_region_2(x, spread, mean_value, count):
    return x / (spread + 1.0), mean_value * count


@_carve_stats.entry
def stats(x):
    mean = _stats_graph_region_0(x)
    # carve: eager, CRV004 tensor converted to a Python value: .item() converts a tensor to Python data
    _carve_stats.graph_break(9, "CRV004")
    mean_value = mean.item()
    count, _carve_t0 = _stats_graph_region_1(x, mean)
    # carve: eager, CRV004 tensor converted to a Python value: float() of a tensor converts it to a Python value
    _carve_stats.graph_break(11, "CRV004")
    spread = float(_carve_t0)
    return _stats_graph_region_2(x, spread, mean_value, count)
