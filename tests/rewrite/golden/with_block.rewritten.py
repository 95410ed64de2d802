"""Golden input: `with` blocks, one around a print and one around torch.no_grad()."""
import contextlib

import torch
import carve


@contextlib.contextmanager
def section(name, events):
    events.append(f"enter {name}")
    try:
        yield
    finally:
        events.append(f"exit {name}")


_carve_traced_sections = carve.RegionSet("traced_sections", backend="eager")


# carve: graph region, lines 19-19, compiled to an FX graph
@_carve_traced_sections.graph(19, 19)
def _traced_sections_graph_region_0(x):
    y = x.sin()
    return y


# carve: graph region, lines 22-22, compiled to an FX graph
@_carve_traced_sections.graph(22, 22)
def _traced_sections_graph_region_1(y):
    y = y * 3
    return y


# carve: graph region, lines 23-25, compiled to an FX graph
@_carve_traced_sections.graph(23, 25)
def _traced_sections_graph_region_2(y):
    with torch.no_grad():
        z = y.cos()
    return y + z


@_carve_traced_sections.entry
def traced_sections(x, events):
    y = _traced_sections_graph_region_0(x)
    # carve: eager, CRV016 graph break inside a called function: section() has a graph break inside (CRV010 at with_block.py:12: the function is a generator (contains yield))
    _carve_traced_sections.graph_break(20, "CRV016")
    with section("report", events):
        # carve: eager, CRV003 I/O or logging: print() performs I/O
        _carve_traced_sections.graph_break(21, "CRV003")
        print("inside section", y.shape)
        y = _traced_sections_graph_region_1(y)
    return _traced_sections_graph_region_2(y)
