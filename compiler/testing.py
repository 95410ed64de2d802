"""Counting graphs: how many graphs a compiler made, how often they ran, how many ops they held.

`CountingBackend` is a backend for `carve.compile` and for `torch.compile` alike, so the
two compilers can be compared on the same function:

    import torch
    import carve
    from carve.testing import CountingBackend

    def step(x):
        y = x.sin()
        print("norm", y.norm())     # a graph break
        return y.cos()

    carve_counts, torch_counts = CountingBackend(), CountingBackend()
    carve_step = carve.compile(step, backend=carve_counts)
    torch_step = torch.compile(step, backend=torch_counts)
    for _ in range(2):
        x = torch.randn(8)
        carve_step(x)
        torch_step(x)
    print(carve_counts)   # CountingBackend(graphs=2, calls=4, ops_run=6)
    print(torch_counts)   # CountingBackend(graphs=2, calls=4, ops_run=6)

By default a graph runs as its FX code (`gm.forward`), so results equal eager's exactly;
`CountingBackend("inductor")` (any backend name or callable) counts in front of a real backend.

Only imported explicitly (`import carve` does not load it), so importing torch here is fine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from carve.runtime.compat import lookup_backend
from carve.runtime.dynamo_capture import count_graph_ops  # what carve.explain counts as a graph's ops

Backend = Callable[[torch.fx.GraphModule, list], Callable[..., Any]]


class CountingBackend:
    """A compiler backend that counts the graphs it is given, their runs and the ops they run.

    `inner` compiles each graph: None runs it as `gm.forward`; a backend name ("eager",
    "aot_eager", "inductor") or a backend callable is used as torch.compile would use it.
    `count_ops` says how many ops one run of a graph counts for (bench/capture.py leaves out
    bookkeeping nodes such as `operator.getitem`).

    Counted over the backend's life: `graphs` (graphs compiled), `graph_modules` (those graphs)
    and `ops_per_graph`. Counted per run, until `reset_counts()`: `calls` (graph executions)
    and `ops_run` (the ops those executions ran).
    """

    def __init__(self, inner: str | Backend | None = None, *,
                 count_ops: Callable[[torch.fx.GraphModule], int] = count_graph_ops) -> None:
        self.inner = inner
        self._compile = None if inner is None else lookup_backend(inner)
        self._count_ops = count_ops
        # torch.compile and carve name a callable backend by its __name__ in logs and errors.
        self.__name__ = "counting_backend"
        # Graphs run as aten ops draw torch's random numbers as eager does (carve's cost check
        # may then weigh a region that draws them: runtime/cost_check.py).
        self.random_stream = "eager" if inner in (None, "eager", "aot_eager") else None
        # Which compiler it stands for, as torch's own backend wrappers say (`compiler_name`): carve
        # prices a compile by it (runtime/cost_check.py). Running `gm.forward` is Dynamo's eager.
        self.compiler_name = inner if isinstance(inner, str) else (
            "eager" if inner is None else getattr(inner, "compiler_name", None))
        self.graphs = 0
        self.graph_modules: list[torch.fx.GraphModule] = []
        self.ops_per_graph: list[int] = []
        self.calls = 0
        self.ops_run = 0

    def reset_counts(self) -> None:
        """Start counting runs afresh (a steady-state call after warm-up calls, say)."""
        self.calls = 0
        self.ops_run = 0

    def __call__(self, gm: torch.fx.GraphModule, example_inputs: list) -> Callable[..., Any]:
        # Counted before the inner backend compiles: a backend may rewrite the graph it is given.
        ops = self._count_ops(gm)
        self.graphs += 1
        self.graph_modules.append(gm)
        self.ops_per_graph.append(ops)
        compiled = gm.forward if self._compile is None else self._compile(gm, example_inputs)

        def counted(*args: Any) -> Any:
            self.calls += 1
            self.ops_run += ops
            return compiled(*args)

        return counted

    def __repr__(self) -> str:
        inner = "" if self.inner is None else f"{self.inner!r}, "
        return f"CountingBackend({inner}graphs={self.graphs}, calls={self.calls}, ops_run={self.ops_run})"


def graphs_run_by(region) -> list:
    """The graphs a region of a compiled function runs: its own, or, for a region that runs its
    models compiled (as torch.compile(model) places them), its models' graphs."""
    graphs = list(region.graphs)
    for model in region.compiled_models:
        forward = getattr(type(model).forward, "__carve_version__", None)  # a CompiledFunction or a WholeCall
        for model_region in (forward.regions if forward is not None else []):
            graphs += graphs_run_by(model_region)
    return graphs


def runs_as_written(compiled) -> bool:
    """Whether the calls of what carve.compile returned run the function's own code now, every
    region having settled as Python (compiler/as_written.py)."""
    from carve.api import compiled_function_of

    function = compiled_function_of(compiled)
    return function is not None and function._as_written is not None and function._impl is function._as_written


__all__ = ["CountingBackend", "count_graph_ops", "graphs_run_by", "runs_as_written"]
