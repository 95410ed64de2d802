"""carve: a source-to-source compiler for PyTorch.

    import carve

    @carve.compile
    def step(x):
        y = x.sin()
        print("norm", y.norm())     # runs eagerly; the tensor work around it is compiled
        return y.cos()

The programming model is torch.compile's (fullgraph, error_on_graph_break,
nonstrict_trace, disable, allow_in_graph, disallow_in_graph, graph_break,
skip_frame, is_compiling), and torch's own markers in user code mean the
same to carve.

The public names load lazily: `import carve` does not import torch, so the
`carve lint` and `carve rewrite` command lines stay fast and torch-free.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

_EXPORTS = {
    "compile": "carve.api",
    "CompiledFunction": "carve.api",
    "CompiledModule": "carve.api",
    "RegionSet": "carve.regionset",
    "explain": "carve.explanation",
    "ExplainOutput": "carve.explanation",
    "GraphBreakError": "carve.runtime.errors",
    "allow_in_graph": "carve.runtime.markers",
    "disable": "carve.runtime.markers",
    "disallow_in_graph": "carve.runtime.markers",
    "error_on_graph_break": "carve.runtime.markers",
    "graph_break": "carve.runtime.markers",
    "is_compiling": "carve.runtime.markers",
    "mark_dynamic": "carve.runtime.markers",
    "mark_static": "carve.runtime.markers",
    "nonstrict_trace": "carve.runtime.markers",
    "skip_frame": "carve.runtime.markers",
    "wait_for_kernels": "carve.runtime.kernel_builds",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'carve' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)
