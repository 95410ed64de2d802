"""Shared helpers for carve.runtime tests: a counting backend and a region factory."""

import pytest
import torch

from carve.runtime import CompileOptions, GraphRegion, log


class CountingBackend:
    """A backend that runs the FX graph as is and counts graphs and graph calls."""

    def __init__(self):
        self.graphs = []
        self.calls = 0

    def __call__(self, gm, example_inputs):
        self.graphs.append(gm)

        def run(*inputs):
            self.calls += 1
            return gm.forward(*inputs)

        return run

    @property
    def ops(self):
        return [sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method")) for gm in self.graphs]


@pytest.fixture
def backend():
    return CountingBackend()


@pytest.fixture
def make_region():
    def make(fn, backend="eager", **options):
        code = fn.__code__
        return GraphRegion(fn, name=fn.__name__, options=CompileOptions(backend=backend, **options),
                           filename=code.co_filename, first_line=code.co_firstlineno,
                           last_line=code.co_firstlineno + 10)
    return make


@pytest.fixture(autouse=True)
def _fresh_logs():
    log.reset()
    yield
    log.reset()


def line_of(fn, text):
    """The line number of the first line of fn's source containing `text`."""
    import inspect
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")
