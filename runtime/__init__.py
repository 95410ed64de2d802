"""carve's runtime: tracing graph regions to torch.fx, guards, the compiled-graph cache,
backends, graph-break state and logging.

The compiler (`carve`, in compiler/) turns a user function into graph regions
and eager helpers; this package runs the graph regions:

- `region.GraphRegion`: the callable the generated code calls for each graph region;
- `tracer.trace_region`: runs a region once on real inputs, recording an FX graph;
- `guards.GuardSet`: the facts a graph depends on, checked by one generated function;
- `markers`: carve.graph_break, disable, allow_in_graph, nonstrict_trace, ...;
- `state`: thread-local is_compiling / fullgraph / error_on_graph_break / disabled;
- `compat`: the only module that knows torch internals (backends, torch's markers);
- `errors`, `log`, `config`: BreakEvent/GraphBreakError, CARVE_LOGS loggers, CompileOptions.

It never imports libcst (see DESIGN.md).
"""

from .config import CompileOptions
from .errors import BreakEvent, GraphBreakError
from .markers import (allow_in_graph, disable, disallow_in_graph, error_on_graph_break, graph_break,
                      is_compiling, nonstrict_trace, skip_frame)
from .region import GraphRegion
from .tracer import TraceResult, trace_region
from .guards import GuardSet

__all__ = [
    "CompileOptions", "BreakEvent", "GraphBreakError", "GraphRegion", "TraceResult", "trace_region",
    "GuardSet", "allow_in_graph", "disable", "disallow_in_graph", "error_on_graph_break", "graph_break",
    "is_compiling", "nonstrict_trace", "skip_frame",
]
