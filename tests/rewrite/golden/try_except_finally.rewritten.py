"""Golden input: try/except/finally around a graph break."""
import torch
import carve


_carve_safe_divide = carve.RegionSet("safe_divide", backend="eager")


# carve: graph region, lines 8-8, compiled to an FX graph
@_carve_safe_divide.graph(8, 8)
def _safe_divide_graph_region_0(x):
    z = x * 2
    return z


# carve: graph region, lines 12-12, compiled to an FX graph
@_carve_safe_divide.graph(12, 12)
def _safe_divide_graph_region_1(z, y):
    z = z / y
    return z


# carve: graph region, lines 15-15, compiled to an FX graph
@_carve_safe_divide.graph(15, 15)
def _safe_divide_graph_region_2(z):
    z = torch.zeros_like(z)
    return z


# carve: graph region, lines 18-18, compiled to an FX graph
@_carve_safe_divide.graph(18, 18)
def _safe_divide_graph_region_3(z):
    return z + 1


@_carve_safe_divide.entry
def safe_divide(x, y, log):
    z = _safe_divide_graph_region_0(x)
    try:
        # carve: eager, CRV004 tensor converted to a Python value: bool() of a tensor converts it to a Python value
        _carve_safe_divide.graph_break(10, "CRV004")
        if bool((y == 0).any()):
            raise ZeroDivisionError("y has a zero entry")
        z = _safe_divide_graph_region_1(z, y)
    except ZeroDivisionError as error:
        # carve: eager, CRV019 Python side effect: log.append() mutates a Python object
        log.append(f"caught: {error}")
        z = _safe_divide_graph_region_2(z)
    finally:
        # carve: eager, CRV019 Python side effect: log.append() mutates a Python object
        log.append("finally")
    return _safe_divide_graph_region_3(z)
