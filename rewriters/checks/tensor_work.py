"""Whether a statement (or an expression) runs a tensor operation, read from the source.

    y = x * 2                 # work: arithmetic on a tensor (or on a parameter that may hold one)
    h = self.fc(x)            # work: a submodule (or a method) applied to arguments
    out = model(x)            # work: a callable parameter applied to values
    n = x.shape[0]            # no work: a shape read
    t0 = time.time()          # no work
    v = loss.item()           # no work besides the read itself (`x.sum().item()` computes the sum)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)   # no work: an optimizer is a Python object

    tensors = TensorWork(func, imports)          # per function
    tensors.does_work([statement, ...])          # any tensor operation in these nodes

`carve lint` asks it which breaks come before any graph operation (rewriters/lint/leading.py),
`carve rewrite` which regions hold tensor work at all (rewriters/rewrite.py). Leaning towards
"work": a call of an unknown function with a tensor (or a parameter) among its arguments counts.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from carve.rewriters.checks.context import numpy_random_break, numpy_untraced
from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.op_tables import CONVERSION_METHODS, CONVERTING_BUILTINS
from carve.rewriters.scopes import OwnScopeVisitor
from carve.rewriters.tensor_functions import _Evidence, _tensor_candidates
from carve.rewriters.tensors import NON_TENSOR_METHODS, TORCH_NON_TENSOR, TORCH_NON_TENSOR_MODULES, TensorInference
from carve.rewriters.walk import walk

# Calls that are never tensor work themselves (their arguments may be).
_NO_WORK_CALLS = frozenset({
    "print", "len", "range", "enumerate", "zip", "isinstance", "hasattr", "getattr", "setattr", "str", "repr",
    "format", "list", "tuple", "dict", "set", "sorted", "min", "max", "abs", "round", "type", "super", "iter",
    "next", "id", "hash", "callable", "open", "any", "all", "sum", "map", "filter",
}) | CONVERTING_BUILTINS
# torch's classes that build Python objects, not graph operations (an optimizer, a data loader, a
# distribution's constructor).
_NO_WORK_MODULES = ("torch.optim.", "torch.utils.data", "torch.distributions.", "torch.nn.Module")
# Expressions that compute a value (as opposed to naming one).
_COMPUTED = (cst.Call, cst.BinaryOperation, cst.UnaryOperation, cst.Subscript, cst.Comparison)


class TensorWork(TensorInference):
    """`TensorInference`, and the parameters that may hold tensors (`tensor_functions`' candidates:
    not `self`, not annotated or defaulted as Python values, not used as counters or indices):
    in compiled code, arithmetic on those is tensor work (`y = x * 2`, the mask in `x[x > 0]`)."""

    def __init__(self, func: cst.FunctionDef, imports: ImportTable,
                 function_work: Callable[[str], bool | None] | None = None) -> None:
        super().__init__(func, imports)
        # Whether a function the caller can read (`helper` of the same file) does tensor work; None
        # for one it cannot, which counts as work when given a value.
        self.function_work = function_work or (lambda name: None)
        candidates = _tensor_candidates(func)
        evidence = _Evidence(candidates, imports)
        walk(func.body, evidence)
        # Those parameters, and the names computed from them by arithmetic (`y = x * 2`).
        self.parameters = candidates - evidence.python_values
        for _ in range(4):
            derived = {name for name, values in self.assigned.items() if name not in self.parameters and any(
                isinstance(value, (cst.BinaryOperation, cst.UnaryOperation, cst.Call)) and self._computes_on_operand(value)
                for value in values)}
            if not derived:
                break
            self.parameters |= derived

    def _computes_on_operand(self, node: cst.BaseExpression) -> bool:
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
            return self.function_work(node.func.value) is True  # y = helper(x), helper doing tensor work
        if isinstance(node, cst.BinaryOperation):
            return self.operand(node.left) or self.operand(node.right)
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, cst.Not) and self.operand(node.expression)
        return False

    def operand(self, node: cst.BaseExpression) -> bool:
        return self.is_tensor(node) or isinstance(node, cst.Name) and node.value in self.parameters

    def does_work(self, nodes: list[cst.CSTNode]) -> bool:
        """Whether evaluating `nodes` (statements or expressions) runs a tensor operation."""
        return _does_work(nodes, self)


def does_tensor_work(func: cst.FunctionDef, imports: ImportTable,
                     function_work: Callable[[str], bool | None] | None = None) -> bool:
    """Whether any statement of `func` does tensor work."""
    return _does_work(list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else [func.body],
                      TensorWork(func, imports, function_work))


def _does_work(nodes: list[cst.CSTNode], tensors: TensorWork) -> bool:
    """Whether evaluating `nodes` (statements or expressions) runs a tensor operation."""
    finder = _TensorWork(tensors)
    for each in nodes:
        each.visit(finder)
        if finder.found:
            return True
    return False


class _TensorWork(OwnScopeVisitor):
    """Sets `found` at the first tensor operation (not entering nested definitions or lambdas)."""

    def __init__(self, tensors: TensorWork) -> None:
        self.tensors = tensors
        self.found = False
        # names bound by iterating a parameter that may hold tensors (`for a in tensors`)
        self.elements_of_parameters = {name for name, iterated in tensors._iterations
                                       if isinstance(iterated, cst.Name) and iterated.value in tensors.parameters}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.found:
            return False
        return super().on_visit(node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return True

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        name = dotted_name(func)
        qualified = self.tensors.imports.resolve(func) or ""
        if isinstance(func, cst.Attribute) and func.attr.value in CONVERSION_METHODS:
            # The conversion reads data, and is the break; computing what it converts is work
            # (`self.ixes[i].item()`, `x.sum().item()`; `loss.item()` of a value is not).
            if isinstance(func.value, (cst.Subscript, cst.Call, cst.BinaryOperation)):
                self.found = True
            return
        if name in _NO_WORK_CALLS or qualified.startswith(_NO_WORK_MODULES):
            return
        if qualified.startswith("numpy."):
            # traced into tensor operations (trace_numpy), but for a draw that breaks (CRV031) or a function
            # torch._numpy lacks (CRV036): those keep nothing in the graph
            self.found = numpy_random_break(node, self.tensors.imports, self.tensors.none_defaults) is None \
                and not numpy_untraced(node, self.tensors.imports)
            return
        if self.tensors.is_tensor(node):
            self.found = True
            return
        if isinstance(func, cst.Attribute) and func.attr.value not in NON_TENSOR_METHODS and self.tensors.operand(func.value):
            self.found = True  # y.log1p(): a method of a value that holds a tensor
            return
        if not node.args:
            return
        if qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1][:1].islower() and not qualified.startswith(
                TORCH_NON_TENSOR_MODULES) and qualified not in TORCH_NON_TENSOR:
            self.found = True  # torch.nn.utils.clip_grad_norm_(params, 1.0): a torch function on tensors
            return
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
            self.found = True  # self.fc(x): a submodule (or a method) on arguments
        elif isinstance(func, cst.Name) and name not in self.tensors.imports.aliases and any(
                self.tensors.is_tensor(arg.value) or isinstance(arg.value, cst.Name) for arg in node.args):
            # model(x), helper(x): a callable applied to values (unless it is a function known to do none)
            self.found = self.tensors.function_work(func.value) is not False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if self.tensors.operand(node.left) or self.tensors.operand(node.right):
            self.found = True

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if not isinstance(node.operator, cst.Not) and self.tensors.operand(node.expression):
            self.found = True

    def visit_Comparison(self, node: cst.Comparison) -> None:
        operands = [node.left, *(t.comparator for t in node.comparisons)]
        if self.tensors.is_tensor(node) or not any(
                isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in node.comparisons) and not any(
                isinstance(o, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)) for o in operands) and any(
                self.tensors.operand(o) for o in operands):
            self.found = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # A tensor, or a module's attribute (`self.pe[:n]`, `self.transformer.wpe.weight[:n]`):
        # mostly buffers and parameters; or an element of a parameter indexed by a name
        # (`tuple(a[indices] for a in tensors)`: the parameter may hold tensors).
        if self.tensors.is_tensor(node.value) or (
                isinstance(node.value, cst.Attribute) and (dotted_name(node.value) or "").startswith("self.")):
            self.found = True
        elif isinstance(node.value, cst.Name) and node.value.value in self.elements_of_parameters and any(
                isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name)
                for element in node.slice):
            self.found = True

    def visit_Assign(self, node: cst.Assign) -> None:
        # `y = x * 2` where y is used as a tensor (`y.shape`): the value computed is a tensor.
        if isinstance(node.value, _COMPUTED) and any(
                isinstance(t.target, cst.Name) and t.target.value in self.tensors.tensor_names for t in node.targets):
            self.found = True

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.tensors.is_tensor(node.target) or self.tensors.is_tensor(node.value):
            self.found = True
