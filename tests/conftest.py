"""Shared test fixtures: a counting backend that proves tensor work runs in compiled graphs."""

from __future__ import annotations

import pytest


class CountingBackend:
    """A torch.compile-style backend that runs graphs as FX code and counts them.

    `graphs` counts compiled graphs, `calls` counts graph executions and
    `ops_run` the call_function nodes executed (the capture numerator).
    """

    def __init__(self) -> None:
        self.graphs = 0
        self.calls = 0
        self.ops_run = 0
        self.graph_modules = []

    def __call__(self, gm, example_inputs):
        self.graphs += 1
        self.graph_modules.append(gm)
        ops = sum(1 for node in gm.graph.nodes if node.op in ("call_function", "call_method", "call_module"))

        def run(*args):
            self.calls += 1
            self.ops_run += ops
            return gm.forward(*args)

        return run


@pytest.fixture
def backend():
    return CountingBackend()
