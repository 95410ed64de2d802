"""Which functions of a module do tensor work: the scope of `carve lint --all` and
`carve rewrite --all-functions` (one definition for both).

    import torch

    def step(x):                     # yes: names torch
        return torch.relu(x)

    def f(x):                        # yes: arithmetic on a parameter, and a print
        y = x + 1
        print(y)
        return y * 2

    def report(loss):                # yes: tensor-only vocabulary (`.item()`, `.shape`, ...)
        print(loss.item())

    def g(x):                        # yes: a tensor method of a parameter (`x.sin()`)
        y = x.sin()
        print(y)
        return y.cos()

    def outer(x):                    # yes: passes a parameter to `f`, which breaks
        return f(x) - 1

    def add_one(a):                  # no: tensor work perhaps, but nothing in it can break
        return a + 1

    def log_every(step, every=100):  # no: `step % every` and a numeric default say Python numbers
        if step % every == 0:
            print(step)

    def title(name: str):            # no: annotated as a Python value
        print(name.upper() + "!")

A function that names something imported from torch is in scope. Any other one is in
scope when its module imports torch, it does tensor work, and it has a statement that can
break a graph (or calls a function of the module that is in scope). Tensor work, from the
source alone and leaning towards precision: tensor-only vocabulary on any value (`.item()`,
`.shape`, `x[x > 0]`), a tensor method of a parameter (`x.sin()`), arithmetic (`+ - * / @
**`, unary `-`) on a parameter that nothing marks as a Python value (a non-tensor
annotation; a numeric, string, bool or None default; use in `range()`, `len()`, `str()`,
`%`, `//`, or as an index), or passing a parameter to a function that does tensor work.
Fetching a batch from a DataLoader (`next(self.data_iter)`, `iter(train_loader)`, `for x, y in
train_loader`, by the name) is tensor work and break-prone: its batches are tensors, and torch.compile skips its
iterators. Break-prone: I/O and logging calls, tensor-to-Python conversions, `if`/`while`/conditional
expressions, asserts, boolean-mask indexing, `.backward()`, `yield`, `await`, a call to a function
marked disable. `.all()` and `.any()` of a comparison (`(t[1:] > t[:-1]).all()`) are tensor vocabulary.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import DISABLE_DECORATORS, decorator_name
from carve.rewriters.walk import walk
from carve.rewriters.rules.crv013_disabled_callee import (
    CLOCK_FUNCTIONS, ITERATOR_BUILTINS, PROGRESS_BAR_METHODS, SCHEDULER_METHODS, is_data_loader_name,
)
from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.op_tables import LOGGING_METHODS
from carve.rewriters.tensors import EVIDENCE_ATTRIBUTES, TENSOR_METHODS

# Attributes and methods only tensors (and NumPy arrays) have: evidence on any receiver.
TENSOR_VOCABULARY = frozenset({
    "item", "tolist", "numpy", "backward", "detach", "requires_grad", "requires_grad_", "grad_fn",
    "shape", "dtype", "device", "ndim", "numel", "nonzero", "unique", "masked_fill", "masked_fill_",
    "masked_select", "unsqueeze", "squeeze", "view", "reshape", "permute", "contiguous", "softmax",
    "log_softmax", "matmul", "argmax", "argmin", "amax", "amin", "cpu", "cuda", "clamp", "clamp_",
    "add_", "mul_", "sub_", "div_", "zero_", "fill_", "cumsum", "logsumexp", "isnan", "isfinite",
})
ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power)
ARITHMETIC_ASSIGN = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign,
                     cst.MatrixMultiplyAssign, cst.PowerAssign)
PYTHON_VALUE_ANNOTATIONS = frozenset({"int", "float", "str", "bool", "bytes", "list", "dict", "tuple", "set"})
# Calls that can break a graph: I/O, conversions of a tensor to Python.
BREAK_PRONE_CALLS = frozenset({"print", "input", "open", "breakpoint", "int", "float", "bool", "complex"})
BREAK_PRONE_METHODS = frozenset({"item", "tolist", "numpy", "backward", "nonzero", "unique", "masked_select",
                                 "warn", "write", "save", "graph_break"})
# Calls whose argument is a Python number, string or sized container, not a tensor.
PYTHON_VALUE_CALLS = frozenset({"range", "len", "str", "repr", "enumerate", "isinstance", "hasattr", "getattr"})


class TensorFunctions:
    """The functions of one module (at any depth) in scope.

        scope = TensorFunctions(module, imports)
        if func in scope: ...
    """

    def __init__(self, module: cst.Module, imports: ImportTable) -> None:
        self.found: set[int] = set()
        functions = _Functions()
        walk(module, functions)
        top_level = {s.name.value: id(s) for s in module.body if isinstance(s, cst.FunctionDef)}
        undecided: dict[int, _Evidence] = {}
        for func in functions.found:
            if names_torch(func, imports):
                self.found.add(id(func))
            elif imports_torch(imports):
                evidence = _Evidence(_tensor_candidates(func), imports)
                walk(func.body, evidence)
                undecided[id(func)] = evidence
        # Functions marked disable (torch's own marker): tensor code, and a break where called (CRV013).
        disabled = {id(s) for s in module.body if isinstance(s, cst.FunctionDef) and any(
            decorator_name(d, imports) in DISABLE_DECORATORS for d in s.decorators)}
        # Tensor work through calls: passing a parameter to a function that does it.
        working = {key for key, evidence in undecided.items() if evidence.does_work} | self.found | disabled
        _closure(working, {key: {top_level[n] for n in e.calls_with_parameters if n in top_level}
                           for key, e in undecided.items()})
        # Breaks through calls: calling a function in scope or marked disable.
        breaking = self.found | disabled
        breaking |= {key for key, evidence in undecided.items() if key in working and evidence.break_prone}
        _closure(breaking, {key: {top_level[n] for n in e.called if n in top_level}
                            for key, e in undecided.items() if key in working})
        self.found = breaking - (disabled - self.found)

    def __contains__(self, func: cst.FunctionDef) -> bool:
        return id(func) in self.found


def _closure(found: set[int], edges: dict[int, set[int]]) -> None:
    """Add to `found` every key with an edge into `found`, until nothing changes."""
    changed = True
    while changed:
        changed = False
        for key, targets in edges.items():
            if key not in found and targets & found:
                found.add(key)
                changed = True


class _Functions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.found.append(node)


def imports_torch(imports: ImportTable) -> bool:
    return any(full == "torch" or full.startswith("torch.") for full in imports.aliases.values())


def names_torch(func: cst.FunctionDef, imports: ImportTable) -> bool:
    """`func`'s parameters or body name something imported from torch."""
    torch_names = {alias for alias, full in imports.aliases.items() if full == "torch" or full.startswith("torch.")}
    if not torch_names:
        return False
    finder = _NamesTorch(torch_names)
    walk(func.params, finder)
    if not finder.found:
        walk(func.body, finder)
    return finder.found


class _NamesTorch(cst.CSTVisitor):
    def __init__(self, torch_names: set[str]) -> None:
        self.torch_names = torch_names
        self.found = False

    def visit_Name(self, node: cst.Name) -> bool:
        if node.value in self.torch_names:
            self.found = True
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        # `.attr` of an attribute is never a free name (`self.torch`); only walk the receiver.
        if not self.found:
            walk(node.value, self)
        return False


def _tensor_candidates(func: cst.FunctionDef) -> set[str]:
    """Parameters that may hold tensors: not self/cls, not annotated or defaulted as Python values."""
    params = [*func.params.posonly_params, *func.params.params, *func.params.kwonly_params]
    candidates = set()
    for index, param in enumerate(params):
        name = param.name.value
        if index == 0 and name in ("self", "cls"):
            continue
        annotation = param.annotation.annotation if param.annotation is not None else None
        if isinstance(annotation, cst.Name) and annotation.value in PYTHON_VALUE_ANNOTATIONS:
            continue
        if isinstance(param.default, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString,
                                      cst.FormattedString)):
            continue
        if isinstance(param.default, cst.Name) and param.default.value in ("True", "False", "None"):
            continue
        candidates.add(name)
    return candidates


class _Evidence(cst.CSTVisitor):
    """What one function's body shows: tensor work, Python values, break-prone statements, calls."""

    def __init__(self, candidates: set[str], imports: ImportTable | None = None) -> None:
        self.candidates = candidates
        self.imports = imports
        self.vocabulary = False
        # `model(x)`: a parameter called with another: running a model (or any callable) on inputs.
        self.calls_parameter = False
        # Names assigned a comparison (`keep = x.abs() > 0`): indexing with one is mask indexing.
        self.mask_names: set[str] = set()
        self.arithmetic: set[str] = set()
        self.python_values: set[str] = set()
        self.break_prone = False
        # Names of the functions called, and of those called with a candidate among the
        # arguments (`helper(x)`).
        self.called: set[str] = set()
        self.calls_with_parameters: set[str] = set()

    @property
    def does_work(self) -> bool:
        return self.vocabulary or self.calls_parameter or bool(self.arithmetic - self.python_values)

    def _candidate(self, node: cst.CSTNode) -> str | None:
        return node.value if isinstance(node, cst.Name) and node.value in self.candidates else None

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attribute = node.attr.value
        if attribute in TENSOR_VOCABULARY and not isinstance(node.value, (cst.SimpleString, cst.Integer)):
            self.vocabulary = True
        elif self._candidate(node.value) and (attribute in TENSOR_METHODS or attribute in EVIDENCE_ATTRIBUTES):
            self.vocabulary = True  # `x.sin()`, `x.sum()` on a parameter
        elif attribute in ("all", "any") and isinstance(node.value, cst.Comparison):
            self.vocabulary = True  # `(t[1:] > t[:-1]).all()`: a Python comparison gives a bool, which has no .all

    def visit_Subscript(self, node: cst.Subscript) -> None:
        # `x[x > 0]`: a boolean mask, which Python sequences do not take; its result has a
        # data-dependent shape. `x[keep]` after `keep = x.abs() > 0` too.
        if any(isinstance(element.slice, cst.Index) and (
                isinstance(element.slice.value, cst.Comparison)
                or isinstance(element.slice.value, cst.Name) and element.slice.value.value in self.mask_names)
               for element in node.slice):
            self.vocabulary = self.break_prone = True

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Comparison) and not any(
                isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in value.comparisons):
            self.mask_names.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

    def visit_SubscriptElement(self, node: cst.SubscriptElement) -> None:
        if isinstance(node.slice, cst.Index):
            name = self._candidate(node.slice.value)
            if name:
                self.python_values.add(name)  # `items[i]`: an index

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        found = {name for name in (self._candidate(node.left), self._candidate(node.right)) if name}
        if isinstance(node.operator, ARITHMETIC):
            self.arithmetic |= found
        elif isinstance(node.operator, (cst.Modulo, cst.FloorDivide)):
            self.python_values |= found  # `step % every`: a counter

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        name = self._candidate(node.target)
        if name and isinstance(node.operator, ARITHMETIC_ASSIGN):
            self.arithmetic.add(name)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        name = self._candidate(node.expression)
        if name and isinstance(node.operator, cst.Minus):
            self.arithmetic.add(name)

    def visit_Call(self, node: cst.Call) -> None:
        passed = {name for arg in node.args if (name := self._candidate(arg.value))}
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.candidates and passed - {func.value}:
            self.calls_parameter = True
        if self._skipped_by_torch_compile(node):
            self.break_prone = True
        if self._fetches_batch(node):
            self.vocabulary = self.break_prone = True
        if isinstance(func, cst.Name):
            if func.value in PYTHON_VALUE_CALLS:
                self.python_values |= passed
            elif func.value in BREAK_PRONE_CALLS:
                self.break_prone = True
            else:
                self.called.add(func.value)
                if passed:
                    self.calls_with_parameters.add(func.value)
        elif isinstance(func, cst.Attribute) and (
                func.attr.value in BREAK_PRONE_METHODS
                or func.attr.value in LOGGING_METHODS and isinstance(func.value, (cst.Name, cst.Attribute))):
            self.break_prone = True

    @staticmethod
    def _fetches_batch(node: cst.Call) -> bool:
        """`next(self.data_iter)`, `iter(train_loader)`: a DataLoader's batches are tensors, and torch.compile
        skips its iterators (CRV013)."""
        return (isinstance(node.func, cst.Name) and node.func.value in ITERATOR_BUILTINS and len(node.args) == 1
                and is_data_loader_name(node.args[0].value))

    def _skipped_by_torch_compile(self, node: cst.Call) -> bool:
        """Clock reads, scheduler steps, progress bars: what checks/skipped_calls.py reports."""
        func = node.func
        if self.imports is not None and (self.imports.resolve(func) or "") in CLOCK_FUNCTIONS:
            return True
        if isinstance(func, cst.Attribute):
            receiver = (dotted_name(func.value) or "").rsplit(".", 1)[-1].lower()
            method = func.attr.value
            return (method in SCHEDULER_METHODS and "sched" in receiver) or (
                method in PROGRESS_BAR_METHODS and any(word in receiver for word in ("pbar", "progress", "tqdm")))
        return False

    def visit_For(self, node: cst.For) -> None:
        if is_data_loader_name(node.iter):
            # `for x, y in train_loader:`: its batches are tensors, and torch.compile skips its iterator (CRV013)
            self.vocabulary = self.break_prone = True

    def visit_If(self, node: cst.If) -> None:
        self.break_prone = True

    def visit_Assert(self, node: cst.Assert) -> None:
        self.break_prone = True  # `assert (t > 0).all(), f"..."` (CRV005)

    def visit_While(self, node: cst.While) -> None:
        self.break_prone = True

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.break_prone = True

    def visit_Yield(self, node: cst.Yield) -> None:
        self.break_prone = True

    def visit_Await(self, node: cst.Await) -> None:
        self.break_prone = True

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function is judged on its own

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False
