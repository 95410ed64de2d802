"""Which expressions of a function are (probably) tensors, from source alone.

    def f(x: torch.Tensor, n):       x        tensor (annotated)
        y = torch.relu(x)            y        tensor (torch op result)
        s = y.sum() * 2              s        tensor (method of a tensor, arithmetic)
        k = y.shape[0] + n           k        not a tensor (shape access)

The inference is flow-insensitive and deliberately simple. It only steers
*static* findings (is `int(v)` a tensor conversion? is `if v > 0` data
dependent?). The compiler never relies on it for correctness: a conversion it
misses is caught while tracing, and `if`/`while` conditions always run as
Python.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.walk import walk
from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.scopes import OwnScopeVisitor

# Methods and attributes of a tensor that give Python values, not tensors.
NON_TENSOR_METHODS = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "element_size", "stride", "data_ptr",
    "item", "tolist", "numpy", "is_contiguous", "is_floating_point", "is_complex", "storage_offset",
    "get_device", "type", "untyped_storage", "equal", "is_set_to", "has_names", "backward",
    "register_hook", "dim_order", "__len__",
})
NON_TENSOR_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "layout", "is_cuda", "names",
    "is_sparse", "is_quantized", "is_meta", "training", "grad_fn", "itemsize", "nbytes",
})
# (`values` and `indices`: the fields of what `max(dim)`, `topk`, `sort`, ... return, a named tuple of tensors.)
TENSOR_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "grad", "data", "real", "imag", "values", "indices"})
# torch.* functions that do not return tensors.
TORCH_NON_TENSOR = frozenset({
    "torch.is_tensor", "torch.is_grad_enabled", "torch.numel", "torch.get_default_dtype",
    "torch.is_floating_point", "torch.is_complex", "torch.device", "torch.dtype", "torch.Size",
    "torch.manual_seed", "torch.set_grad_enabled", "torch.no_grad", "torch.enable_grad",
    "torch.inference_mode", "torch.is_inference_mode_enabled", "torch.compile",
    "torch.compiler.is_compiling", "torch._dynamo.is_compiling", "torch.jit.is_scripting",
    "torch.finfo", "torch.iinfo", "torch.get_rng_state", "torch.set_rng_state", "torch.equal",
    "torch.allclose", "torch.is_nonzero", "torch.typename", "torch.save", "torch.load",
    "torch.promote_types", "torch.result_type", "torch.can_cast", "torch.get_default_device",
    "torch.is_storage", "torch.is_autocast_enabled", "torch.get_autocast_dtype",
})
# Methods only tensors have: `dy = _dot_product(c, fs).type_as(y0)` is a tensor whatever
# `_dot_product` returns, and its receiver is a tensor too.
TENSOR_ONLY_METHODS = frozenset({
    "type_as", "view_as", "expand_as", "reshape_as", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor",
})
# Method names that almost always mean a tensor reduction/computation, whatever the receiver.
TENSOR_METHODS = frozenset({
    "sum", "mean", "max", "min", "amax", "amin", "any", "all", "norm", "abs", "std", "var", "prod",
    "argmax", "argmin", "softmax", "log_softmax", "relu", "sigmoid", "tanh", "exp", "log", "sqrt",
    "matmul", "mm", "bmm", "float", "double", "half", "long", "int", "bool", "to", "clone",
    "detach", "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze", "permute",
    "transpose", "expand", "repeat", "cumsum", "sin", "cos", "pow", "clamp", "masked_fill",
    "gather", "scatter", "index_select", "eq", "ne", "gt", "lt", "ge", "le", "logical_and",
    "logical_or", "logical_not", "isnan", "isinf", "isfinite", "count_nonzero", "trace", "diag",
    "square", "neg", "sign", "round", "floor", "ceil", "topk", "sort", "median", "mode",
    "allclose", "dot", "outer", "nansum", "logsumexp",
} | TENSOR_ONLY_METHODS)
# torch modules whose functions return Python values, devices, handles, state or objects (optimizers,
# data loaders, grad scalers), not tensors.
TORCH_NON_TENSOR_MODULES = (
    "torch._dynamo.", "torch.compiler.", "carve.", "torch.backends.", "torch.cuda.", "torch.accelerator.",
    "torch.overrides.", "torch.distributed.", "torch._C.", "torch.jit.", "torch.fx.", "torch._jit_internal.",
    "torch._utils.", "torch.optim.", "torch.utils.data.", "torch.amp.",
)
TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor"})
# Reading these from a plain name is evidence that the name holds a tensor
# (`x.shape[0]`, `x.sum()`): unannotated parameters of compiled code usually do.
EVIDENCE_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "ndim", "requires_grad", "is_leaf", "grad_fn", "is_cuda",
    "dim", "numel", "size", "item", "tolist", "numpy", "nonzero", "unique", "masked_fill", "masked_select",
    "matmul", "mm", "bmm", "softmax", "relu", "sigmoid", "tanh", "view", "reshape", "permute", "unsqueeze",
    "squeeze", "transpose", "contiguous", "detach", "clone", "float", "half", "double", "long", "sum",
    "mean", "amax", "amin", "argmax", "argmin", "norm", "abs", "exp", "cumsum", "flatten", "expand",
    "any", "all", "std", "var", "masked_fill_", "add_", "mul_", "sub_", "div_", "zero_", "fill_",
    "clamp", "clamp_", "sqrt", "pow", "backward", "T", "mT", "max", "min",
} | TENSOR_ONLY_METHODS)


class TensorInference:
    """Names of one function that hold tensors, and a predicate for expressions.

    `returns_tensor(dotted)`, when given, says whether a call to the function named `dotted`
    (a user function the resolvers can read) returns a tensor: `acc = accuracy(logits, y)`
    then makes `acc` a tensor. `tensor_attributes`: the attributes of `self` that hold tensors
    (what the class assigns them: `self.continuous_idx = torch.ones(n, dtype=torch.bool)`).
    """

    def __init__(self, func: cst.FunctionDef, imports: ImportTable, returns_tensor=None,
                 tensor_attributes: frozenset[str] = frozenset()) -> None:
        self.imports = imports
        self.returns_tensor = returns_tensor
        self.tensor_attributes = tensor_attributes
        self.tensor_names: set[str] = set()
        # The function's parameters but `self` and `cls`.
        self.parameter_names = {param.name.value for param in _all_params(func.params)} - {"self", "cls"}
        # Parameters whose default is None (`def rand_bbox(shape, lam, count=None)`).
        self.none_defaults = {param.name.value for param in _all_params(func.params)
                              if isinstance(param.default, cst.Name) and param.default.value == "None"}
        for param in _all_params(func.params):
            annotation = param.annotation
            if annotation is not None and self._is_tensor_annotation(annotation.annotation):
                self.tensor_names.add(param.name.value)
        assignments = _AssignmentCollector()
        walk(func.body, assignments)
        # name -> the values assigned to it (`keep = x.abs() > 0`), for checks that need more than
        # "is it a tensor" (is it a boolean mask?).
        self.assigned: dict[str, list[cst.BaseExpression]] = {}
        for name, value in assignments.pairs:
            self.assigned.setdefault(name, []).append(value)
        self.tensor_names |= assignments.used_as_tensor - assignments.assigned_non_tensor(self)
        # `attention_mask = np.array(attention_mask)`: `.sum()` of it is no evidence of a tensor
        self.tensor_names -= {name for name in self.tensor_names if self._holds_numpy(cst.Name(name))}
        # Names bound by iterating something (`for i in ix`, `[... for i in ix]`), with what they
        # iterate: those iterating a tensor hold its elements (`element_names`, after the fixed point).
        self._iterations = assignments.iterations
        # Iterate to a fixed point: `b = a * 2` after `a = torch.ones(3)`.
        for _ in range(4):
            changed = False
            for name, value in assignments.pairs:
                if name not in self.tensor_names and self.is_tensor(value):
                    self.tensor_names.add(name)
                    changed = True
            if not changed:
                break
        # `i` in `[data[i:i + n] for i in ix]` with ix a tensor: 0-dim tensors, which Python
        # indexing and slicing read with .item().
        self.element_names = {name for name, iterated in self._iterations if self.is_tensor(iterated)}
        # name -> its number of dimensions, where the function says it: `seq_length, batch = tags.shape`,
        # `assert tags.dim() == 2`, `if x.ndim == 4:` (`tags[0]` of a 2-D `tags` is a row, not an element).
        ranks = _Ranks()
        walk(func.body, ranks)
        self.ranks = ranks.found

    def _is_tensor_annotation(self, node: cst.BaseExpression) -> bool:
        return (self.imports.resolve(node) or "") in TENSOR_ANNOTATIONS or dotted_name(node) in TENSOR_ANNOTATIONS

    def is_tensor(self, node: cst.BaseExpression) -> bool:
        """True when `node` evaluates to a tensor as far as the source shows."""
        if isinstance(node, cst.Name):
            return node.value in self.tensor_names
        if isinstance(node, cst.Attribute):
            if node.attr.value in TENSOR_ATTRIBUTES:
                return self.is_tensor(node.value)
            return isinstance(node.value, cst.Name) and node.value.value == "self" and node.attr.value in self.tensor_attributes
        if isinstance(node, cst.Subscript):
            return self.is_tensor(node.value)
        if isinstance(node, cst.BinaryOperation):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, cst.UnaryOperation):
            return not isinstance(node.operator, cst.Not) and self.is_tensor(node.expression)
        if isinstance(node, cst.Comparison):
            if any(isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in node.comparisons):
                return False
            return self.is_tensor(node.left) or any(self.is_tensor(t.comparator) for t in node.comparisons)
        if isinstance(node, cst.BooleanOperation):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, cst.Call):
            return self._call_is_tensor(node)
        return False

    def reads_value(self, node: cst.BaseExpression) -> bool:
        """Using `node` as a condition reads a tensor's value: a tensor, or `not`/`and`/`or` of one."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            return self.reads_value(node.expression)
        if isinstance(node, cst.BooleanOperation):
            return self.reads_value(node.left) or self.reads_value(node.right)
        return self.is_tensor(node)

    def _call_is_tensor(self, node: cst.Call) -> bool:
        func = node.func
        qualified = self.imports.resolve(func) or ""
        if qualified.startswith(("torch.", "carve.")) and not qualified.startswith("torch.nn.Module"):
            if qualified in TORCH_NON_TENSOR or qualified.startswith(TORCH_NON_TENSOR_MODULES):
                return False
            if qualified.rsplit(".", 1)[-1].startswith(("is_", "has_", "_is_", "_has_")):
                return False  # predicates: torch.is_autocast_enabled(), torch.cuda.is_available()
            if qualified.startswith("torch.nn.") and not qualified.startswith("torch.nn.functional."):
                return False  # constructing a layer, not calling it
            return True
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            if method in NON_TENSOR_METHODS:
                return False
            if isinstance(func.value, cst.Name) and func.value.value in self.imports.aliases:
                return False  # `math.isfinite(v)`, `np.exp(a)`: a function of another module, not a tensor method
            if self.is_tensor(func.value):
                return True
            if self._holds_numpy(func.value):
                return False  # `mask = np.array(m); mask.sum(-1)`: an array's reduction, not a tensor's
            if method in TENSOR_METHODS and not isinstance(func.value, (cst.SimpleString, cst.List, cst.Dict)):
                return True
            # self.layer(x): calling a submodule gives a tensor.
            if (dotted := dotted_name(func)) and dotted.startswith("self.") and any(
                self.is_tensor(arg.value) for arg in node.args
            ):
                return True
        if self.returns_tensor is not None:
            dotted = dotted_name(func)
            if dotted and not dotted.startswith("self.") and dotted not in _BUILTIN_CALLS:
                return bool(self.returns_tensor(dotted))
        return False


    def _holds_numpy(self, node: cst.BaseExpression) -> bool:
        """`np.array(m)`, or a name every assignment of which is a NumPy call: an array, whose methods share
        their names with a tensor's (`sum`, `mean`, ...)."""
        if isinstance(node, cst.Call):
            return (self.imports.resolve(node.func) or "").startswith("numpy.")
        values = self.assigned.get(node.value, ()) if isinstance(node, cst.Name) else ()
        return bool(values) and all(isinstance(value, cst.Call) and self._holds_numpy(value) for value in values)


def returns_tensor(func: cst.FunctionDef, imports: ImportTable, oracle=None) -> bool:
    """`func` returns a tensor on some path (`return (logits.argmax(-1) == y).float().mean()`)."""
    collector = _Returns()
    walk(func.body, collector)
    if collector.yields or not collector.values:
        return False
    inference = TensorInference(func, imports, oracle)
    return any(inference.is_tensor(value) for value in collector.values)


# Builtins never resolved to user functions (a call to `len` is not a call to a function named len).
_BUILTIN_CALLS = frozenset({
    "print", "len", "range", "enumerate", "zip", "isinstance", "hasattr", "getattr", "setattr", "int", "float",
    "bool", "str", "list", "tuple", "dict", "set", "min", "max", "sum", "abs", "round", "sorted", "type", "super",
    "repr", "format", "iter", "next", "map", "filter", "any", "all", "id", "hash", "callable", "open",
})


class _Returns(OwnScopeVisitor):
    def __init__(self) -> None:
        self.values: list[cst.BaseExpression] = []
        self.yields = False

    def visit_Return(self, node: cst.Return) -> None:
        if node.value is not None:
            self.values.append(node.value)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    result = list(params.posonly_params) + list(params.params) + list(params.kwonly_params)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


class _AssignmentCollector(OwnScopeVisitor):
    """(name, value) pairs of simple assignments, skipping nested functions and classes."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, cst.BaseExpression]] = []
        self.used_as_tensor: set[str] = set()
        self.iterations: list[tuple[str, cst.BaseExpression]] = []

    def assigned_non_tensor(self, inference: "TensorInference") -> set[str]:
        """Names assigned something that is clearly not a tensor (a number, a string, a shape)."""
        return {
            name for name, value in self.pairs
            if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString, cst.List, cst.Tuple, cst.Dict))
            or (isinstance(value, cst.Subscript) and isinstance(value.value, cst.Attribute) and value.value.attr.value == "shape")
        }

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.attr.value in EVIDENCE_ATTRIBUTES and node.value.value != "self":
            self.used_as_tensor.add(node.value.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.pairs.append((target.target.value, node.value))
            elif isinstance(target.target, (cst.Tuple, cst.List)) and isinstance(node.value, cst.Call):
                # `v, idx = torch.topk(x, k)`, `values, _ = x.max(dim=1)`: each part of what a
                # tensor-returning torch call unpacks to is a tensor (decided with the call).
                for element in target.target.elements:
                    if isinstance(element.value, cst.Name):
                        self.pairs.append((element.value.value, node.value))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name) and node.value is not None:
            self.pairs.append((node.target.value, node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.pairs.append((node.target.value, cst.BinaryOperation(node.target, cst.Add(), node.value)))

    def visit_For(self, node: cst.For) -> None:
        # `for row in t` iterates a tensor's rows; `for i in range(n)` gives ints.
        self._iteration(node.target, node.iter)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # `[data[i:i + n] for i in ix]`: the same, in a comprehension.
        self._iteration(node.target, node.iter)

    def _iteration(self, target: cst.BaseExpression, iterator: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            if not (isinstance(iterator, cst.Call) and dotted_name(iterator.func) in ("range", "enumerate", "zip")):
                self._element(target.value, iterator)
            return
        # `for i, flag in enumerate(flags)`, `for t0, t1 in zip(grid[:-1], grid[1:])`: the names bound to
        # what is iterated take its elements
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(iterator, cst.Call)):
            return
        names = [element.value for element in target.elements]
        iterated = [arg.value for arg in iterator.args if arg.keyword is None and not arg.star]
        function = dotted_name(iterator.func)
        if function == "enumerate" and len(names) == 2 and iterated:
            pairs = [(names[1], iterated[0])]
        elif function == "zip" and len(names) == len(iterated):
            pairs = list(zip(names, iterated))
        else:
            return
        for name, source in pairs:
            if isinstance(name, cst.Name):
                self._element(name.value, source)

    def _element(self, name: str, iterated: cst.BaseExpression) -> None:
        self.pairs.append((name, cst.Subscript(iterated, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])))
        self.iterations.append((name, iterated))


class _Ranks(OwnScopeVisitor):
    """`a, b = x.shape` / `x.size()`: x has 2 dimensions; `x.dim() == 3`, `x.ndim == 3`: 3 (asserted or tested)."""

    def __init__(self) -> None:
        self.found: dict[str, int] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        shape_of = None
        if isinstance(value, cst.Attribute) and value.attr.value == "shape":
            shape_of = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "size" \
                and not value.args:
            shape_of = value.func.value
        if not isinstance(shape_of, cst.Name):
            return
        for target in node.targets:
            if isinstance(target.target, (cst.Tuple, cst.List)) and not any(
                    isinstance(element, cst.StarredElement) for element in target.target.elements):
                self.found.setdefault(shape_of.value, len(target.target.elements))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, cst.Equal):
            return
        left, right = node.left, node.comparisons[0].comparator
        for dims, number in ((left, right), (right, left)):
            name = _dims_of(dims)
            if name is not None and isinstance(number, cst.Integer):
                self.found.setdefault(name, int(number.value))


def _dims_of(node: cst.BaseExpression) -> str | None:
    """`x` for `x.dim()`, `x.ndimension()` and `x.ndim`."""
    if isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in ("dim", "ndimension") and isinstance(node.func.value, cst.Name):
        return node.func.value.value
    if isinstance(node, cst.Attribute) and node.attr.value == "ndim" and isinstance(node.value, cst.Name):
        return node.value.value
    return None
