"""Golden input: print() between tensor computations."""
import torch
import carve

# A module-level constant read by the compiled code.
SCALE = 0.5


_carve_normalize = carve.RegionSet("normalize", backend="eager")


# carve: graph region, lines 11-12, compiled to an FX graph
@_carve_normalize.graph(11, 12)
def _normalize_graph_region_0(x):
    centered = x - x.mean()
    _carve_t0 = centered.norm()
    return centered, _carve_t0


# carve: graph region, lines 13-13, compiled to an FX graph
@_carve_normalize.graph(13, 13)
def _normalize_graph_region_1(centered):
    scaled = centered * SCALE  # trailing comment survives
    return scaled


# carve: graph region, lines 15-15, compiled to an FX graph
@_carve_normalize.graph(15, 15)
def _normalize_graph_region_2(scaled):
    return scaled.relu()


@_carve_normalize.entry
def normalize(x):
    centered, _carve_t0 = _normalize_graph_region_0(x)
    # carve: eager, CRV003 I/O or logging: print() performs I/O
    _carve_normalize.graph_break(12, "CRV003")
    print("centered norm:", round(_carve_t0.item(), 4))
    scaled = _normalize_graph_region_1(centered)
    # carve: eager, CRV003 I/O or logging: print() performs I/O
    _carve_normalize.graph_break(14, "CRV003")
    print(f"shape={tuple(scaled.shape)}", sep="")
    return _normalize_graph_region_2(scaled)
