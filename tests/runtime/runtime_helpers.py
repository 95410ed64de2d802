"""Helpers shared by the carve.runtime tests (a uniquely named module, unlike conftest)."""

import inspect


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


def line_of(fn, text):
    """The line number of the first line of fn's source containing `text`."""
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return start + i
    raise AssertionError(f"{text!r} not in {fn.__name__}")
