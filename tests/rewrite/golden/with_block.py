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


@carve.compile(backend="eager")
def traced_sections(x, events):
    y = x.sin()
    with section("report", events):
        print("inside section", y.shape)
        y = y * 3
    with torch.no_grad():
        z = y.cos()
    return y + z
