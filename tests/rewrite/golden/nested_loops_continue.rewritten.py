"""Golden input: nested loops, the inner one skipping with `continue`."""
import torch
import carve


_carve_masked_pair_sums = carve.RegionSet("masked_pair_sums", backend="eager")


# carve: graph region, lines 8-8, compiled to an FX graph
@_carve_masked_pair_sums.graph(8, 8)
def _masked_pair_sums_graph_region_0():
    total = torch.zeros(())
    return total


# carve: graph region, lines 10-10, compiled to an FX graph
@_carve_masked_pair_sums.graph(10, 10)
def _masked_pair_sums_graph_region_1(x, i):
    row = x[i] * 2
    return row


# carve: graph region, lines 15-15, compiled to an FX graph
@_carve_masked_pair_sums.graph(15, 15)
def _masked_pair_sums_graph_region_2(total, row, y, j):
    total = total + (row * y[j]).sum()
    return total


@_carve_masked_pair_sums.entry
def masked_pair_sums(x, y, skipped):
    total = _masked_pair_sums_graph_region_0()
    for i in range(x.shape[0]):
        row = _masked_pair_sums_graph_region_1(x, i)
        for j in range(y.shape[0]):
            # carve: eager, CRV004 tensor converted to a Python value: .item() converts a tensor to Python data
            _carve_masked_pair_sums.graph_break(12, "CRV004")
            if (row * y[j]).sum().item() < 0:
                # carve: eager, CRV019 Python side effect: skipped.append() mutates a Python object
                skipped.append((i, j))
                continue
            total = _masked_pair_sums_graph_region_2(total, row, y, j)
    return total
