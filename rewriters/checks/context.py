"""What every check may look at: imports, tensor inference, the callee resolver."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import libcst as cst

from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.tensors import TensorInference


@dataclass
class CheckContext:
    imports: ImportTable
    tensors: TensorInference

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
