"""The two spellings of the programming model: carve's names and torch's own markers."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

import carve

CARVE = SimpleNamespace(
    name="carve", graph_break=carve.graph_break, skip_frame=carve.skip_frame,
    nonstrict_trace=carve.nonstrict_trace, error_on_graph_break=carve.error_on_graph_break,
    disable=carve.disable, allow_in_graph=carve.allow_in_graph, disallow_in_graph=carve.disallow_in_graph,
    is_compiling=carve.is_compiling,
)
TORCH = SimpleNamespace(
    name="torch", graph_break=torch._dynamo.graph_break, skip_frame=torch._dynamo.skip_frame,
    nonstrict_trace=torch._dynamo.nonstrict_trace, error_on_graph_break=torch._dynamo.error_on_graph_break,
    disable=torch.compiler.disable, allow_in_graph=torch.compiler.allow_in_graph,
    disallow_in_graph=torch._dynamo.disallow_in_graph, is_compiling=torch.compiler.is_compiling,
)


@pytest.fixture(params=[CARVE, TORCH], ids=lambda m: m.name)
def m(request):
    """The markers, once with carve's names and once with torch's."""
    return request.param
