"""Golden input: early returns, one inside a loop, and an exception for bad input."""
import torch
import carve


_carve_first_large_row = carve.RegionSet("first_large_row", backend="eager")


# carve: graph region, lines 10-10, compiled to an FX graph
@_carve_first_large_row.graph(10, 10)
def _first_large_row_graph_region_0(x):
    scores = x.abs().sum(dim=1)
    return scores


# carve: graph region, lines 13-13, compiled to an FX graph
@_carve_first_large_row.graph(13, 13)
def _first_large_row_graph_region_1(x, index):
    return x[index] * 2, index


# carve: region, lines 14-14, no tensor operation (no graph to compile)
@_carve_first_large_row.graph(14, 14)
def _first_large_row_graph_region_2(scores):
    return scores, -1


@_carve_first_large_row.entry
def first_large_row(x, threshold):
    if x.dim() != 2:
        raise ValueError(f"expected a matrix, got {x.dim()} dimensions")
    scores = _first_large_row_graph_region_0(x)
    for index in range(x.shape[0]):
        # carve: eager, CRV004 tensor converted to a Python value: .item() converts a tensor to Python data
        _carve_first_large_row.graph_break(12, "CRV004")
        if scores[index].item() > threshold:
            return _first_large_row_graph_region_1(x, index)
    return _first_large_row_graph_region_2(scores)
