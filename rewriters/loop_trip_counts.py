"""Whether a Python loop of the rewritten function should stay Python around its graph regions.

A loop carve keeps as Python calls its body's region once per trip. Dynamo, capturing the
whole call, unrolls the loop into one graph, specialised on the trip count. Which is better
depends on where the trip count comes from:

    def generate(idx, max_new_tokens):          # an int argument: a new count each call,
        for _ in range(max_new_tokens):         # unrolled, would be a new graph per count;
            idx = step(idx)                     # kept Python, one graph serves every count

    def f(x, y):                                # fixed by the program or by a shape:
        for i in range(x.size(0) + 2):          # Dynamo unrolls it into one graph, as
            r = r / y                           # torch.compile does, guarded like the shape
        for layer in self.layers: ...           # (module structure, a module constant)

`loop_stays_python` is True for the first kind: `while` loops (data-dependent) and `for`
loops whose iterable reads a local name other than through the shape-like reads below or
`self`'s attributes. Module-level names (constants, `torch._dynamo.testing.three`) are
read through globals Dynamo guards.
"""

from __future__ import annotations

import builtins

import libcst as cst

from carve.rewriters.liveness import local_names, names_read

# Reads of a local that fix a number from the value's structure, not from its contents.
_SHAPE_ATTRIBUTES = frozenset({"shape", "ndim"})
_SHAPE_METHODS = frozenset({"size", "dim", "numel"})
_SHAPE_FUNCTIONS = frozenset({"len"})
# Pieces of a tensor (`for x_t in x.split(1, dim=1)`): as many as the tensor's shape says.
_SHAPE_PIECES = frozenset({"split", "chunk", "unbind", "tensor_split"})


def loops_in(function: cst.FunctionDef) -> list[cst.For | cst.While]:
    """The `for`/`while` loops of `function`'s own body (a nested def's loops run when it is
    called, not here)."""

    class Loops(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.For | cst.While] = []

        def visit_For(self, loop: cst.For) -> None:
            self.found.append(loop)

        def visit_While(self, loop: cst.While) -> None:
            self.found.append(loop)

        def visit_FunctionDef(self, inner: cst.FunctionDef) -> bool:
            return inner is function

    loops = Loops()
    function.visit(loops)
    return loops.found


def python_loop_around_a_region(function: cst.FunctionDef, region_names: set[str]) -> bool:
    """Some loop of `function` that calls one of `region_names` should stay Python."""
    locals_ = local_names(function, set())
    self_name = first_parameter(function)
    return any(region_names.intersection(names_read([loop])) and loop_stays_python(loop, locals_, self_name)
               for loop in loops_in(function))


def loop_stays_python(loop: cst.For | cst.While, locals_: set[str], self_name: str | None = None) -> bool:
    """True unless `loop` is a `for` whose trip count is fixed by the program or by shapes."""
    if not isinstance(loop, cst.For):
        return True
    reads = _VaryingReads(locals_, self_name)
    loop.iter.visit(reads)
    return reads.found


def trip_count_may_vary(loop: cst.For | cst.While, self_name: str | None = None) -> bool:
    """Whether `loop` may run a different number of times on another call of its function,
    whatever the function's arguments are: a `while`, or a `for` whose iterable reads any name
    but through the shape-like reads above or `self`'s attributes.

        for r in model.rewards[::-1]:       # may vary: an episode's length
        for batch in loader:                # may vary
        for i in range(4):                  # fixed
        for block in self.blocks:           # fixed by the module
        for t in range(x.size(1)):          # fixed by a shape (guarded like it)
    """
    if not isinstance(loop, cst.For):
        return True
    return loop_stays_python(loop, names_read([loop.iter]) - _BUILTINS, self_name)


_BUILTINS = frozenset(dir(builtins))  # `range`, `zip`, `len`: read by name, fixed by their arguments


class _VaryingReads(cst.CSTVisitor):
    """Finds a read of a local that may change the trip count from call to call."""

    def __init__(self, locals_: set[str], self_name: str | None) -> None:
        self.locals = locals_
        self.self_name = self_name
        self.found = False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value in _SHAPE_ATTRIBUTES or _root_name(node) == self.self_name:
            return False  # `x.shape[0]`, `self.layers`, `self.config.n_layer`
        return True

    def visit_Call(self, node: cst.Call) -> bool:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in _SHAPE_METHODS | _SHAPE_PIECES:
            for arg in node.args:
                arg.visit(self)
            return False  # `x.size(0)`: the receiver's contents do not count
        if isinstance(func, cst.Name) and func.value in _SHAPE_FUNCTIONS:
            return False  # `len(xs)`
        return True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.locals:
            self.found = True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        self.found = True  # a lambda in a loop header: not worth reasoning about
        return False


def _root_name(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def first_parameter(function: cst.FunctionDef) -> str | None:
    params = [*function.params.posonly_params, *function.params.params]
    return params[0].name.value if params and params[0].name.value == "self" else None
