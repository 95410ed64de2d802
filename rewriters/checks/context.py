"""What every check may look at (imports, tensor inference), and call shapes several rules' checks share.

    x.sum().item()              method_name: "item"; method_receiver: `x.sum()`
    np.zeros(3).tolist()        receiver_is_numpy: True (a NumPy array, not a tensor)
    torch.nonzero(x)            has_unbacked_output_size: True (traced under fullgraph=True, a break without)

The checks themselves are in `carve.rewriters.rules`, one rule per module.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import libcst as cst

from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.op_tables import UNBACKED_SIZE_FUNCTIONS, UNBACKED_SIZE_METHODS
from carve.rewriters.tensors import TensorInference

# What torch.compile 2.13 traces without a graph break but carve runs eagerly (CRV021, not the
# rule such a call would otherwise fall under). `.tolist()` is not one: Dynamo 2.13 breaks on it
# for a float tensor and reads each element with .item() (a break without capture_scalar_outputs)
# for an integer one. (`explain` counts no break when it happens before any graph op, as in
# `values = x.tolist()` first thing; Dynamo's graph-break log does.)
TRACED_CONVERSION_METHODS = frozenset({"numpy"})  # through trace_numpy
TRACED_WARNING_FUNCTIONS = frozenset({"warnings.warn"})


@dataclass
class CheckContext:
    imports: ImportTable
    tensors: TensorInference
    # Whether the code is traced as under `fullgraph=True`, where torch.compile 2.13 gives `nonzero` and
    # `argwhere` an unbacked output size (CRV021: carve's compiler asks this way, its graphs never hold
    # them); without fullgraph Dynamo ends the graph there ("Dynamic shape operator", CRV009), which is
    # what `carve lint` asks of a function compiled without it.
    dynamic_output_sizes_traced: bool = True

    def qualified(self, node: cst.BaseExpression) -> str | None:
        """`torch._dynamo.graph_break` for `dynamo.graph_break` after `import torch._dynamo as dynamo`."""
        return self.imports.resolve(node)

    @staticmethod
    def dotted(node: cst.BaseExpression) -> str | None:
        return dotted_name(node)


def method_name(call: cst.Call) -> str | None:
    """`item` for `x.sum().item()`; None for plain function calls."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def method_receiver(call: cst.Call) -> cst.BaseExpression:
    """`x.sum()` for `x.sum().item()`: the object of a method call (`method_name(call)` is not None)."""
    return cast(cst.Attribute, call.func).value


def receiver_is_numpy(call: cst.Call, ctx: CheckContext) -> bool:
    """`np.random.rand(3).tolist()`: a method of something NumPy made, not of a tensor."""
    return (ctx.qualified(method_receiver(call)) or "").startswith("numpy")


def has_unbacked_output_size(call: cst.Call, ctx: CheckContext) -> bool:
    """`torch.nonzero(x)`, `x.argwhere()`: a data-dependent size torch.compile 2.13 traces as unbacked under
    fullgraph=True (and breaks on without it)."""
    return ctx.qualified(call.func) in UNBACKED_SIZE_FUNCTIONS or (
        method_name(call) in UNBACKED_SIZE_METHODS and not receiver_is_numpy(call, ctx))
