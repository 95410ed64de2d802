"""Golden input: a loop that breaks on a data-dependent condition."""
import torch
import carve


_carve_accumulate_until = carve.RegionSet("accumulate_until", backend="eager")


# carve: graph region, lines 8-9, compiled to an FX graph
@_carve_accumulate_until.graph(8, 9)
def _accumulate_until_graph_region_0(x):
    total = torch.zeros_like(x)
    steps = 0
    return total, steps


# carve: graph region, lines 11-13, compiled to an FX graph
@_carve_accumulate_until.graph(11, 13)
def _accumulate_until_graph_region_1(total, x, step, limit):
    total = total + x * step
    steps = step
    _carve_t0 = total.sum() > limit
    return total, steps, _carve_t0


# carve: graph region, lines 15-15, compiled to an FX graph
@_carve_accumulate_until.graph(15, 15)
def _accumulate_until_graph_region_2(total, steps):
    return total * 2, steps


@_carve_accumulate_until.entry
def accumulate_until(x, limit):
    total, steps = _accumulate_until_graph_region_0(x)
    for step in range(1, 10):
        total, steps, _carve_t0 = _accumulate_until_graph_region_1(total, x, step, limit)
        # carve: eager, CRV005 control flow on a tensor's value: `if` condition depends on a tensor's value
        _carve_accumulate_until.graph_break(13, "CRV005")
        if _carve_t0:  # data-dependent: decided by tensor values
            break
    return _accumulate_until_graph_region_2(total, steps)
