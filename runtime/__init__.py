"""carve's runtime: graph regions captured by `torch._dynamo`, backends, graph-break state
and logging.

The compiler (`carve`, in compiler/) turns a user function into graph regions
and eager statements; this package runs the graph regions:

- `region.GraphRegion`: the callable the generated code calls for each graph region;
- `dynamo_capture.DynamoCapture`: Dynamo's capture of one region (its guards, its graphs);
- `capture_policy`: who runs a region and why; whether a graph break raises;
- `markers`: carve.graph_break, disable, allow_in_graph, nonstrict_trace, ...;
- `state`: thread-local fullgraph / error_on_graph_break / disabled;
- `compat`: the only module that knows torch internals (backends, torch's markers);
- `errors`, `log`, `config`: BreakEvent/GraphBreakError, CARVE_LOGS loggers, CompileOptions.

It never imports libcst (see docs/architecture.md).
"""

from .config import CompileOptions
from .errors import BreakEvent, GraphBreakError
from .markers import (allow_in_graph, disable, disallow_in_graph, error_on_graph_break, graph_break,
                      is_compiling, nonstrict_trace, skip_frame)
from .region import GraphRegion

__all__ = [
    "CompileOptions", "BreakEvent", "GraphBreakError", "GraphRegion", "allow_in_graph", "disable", "disallow_in_graph", "error_on_graph_break", "graph_break",
    "is_compiling", "nonstrict_trace", "skip_frame",
]
