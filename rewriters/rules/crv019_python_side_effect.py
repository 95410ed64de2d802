"""CRV019: Python side effects, which must run on every call.

A cached graph replays tensor operations only, so these statements stay
eager (they are not graph breaks for torch.compile, which replays them):

    self.calls += 1                 # attribute store
    cache[key] = y                  # item store
    outputs.append(y)               # container mutation
    total = total + y  # with `global total`
    x.add_(1)                       # not flagged: an in-place tensor op, recorded by the graph
    logits[logits < v] = -inf       # not flagged: an item store into a tensor
    with torch.autocast("cpu") as ac:   # `as` binds an object a traced `with` binds to None
    y = helper(xs)                  # helper appends to a list it was given

Tensor in-place methods (`x.add_(1)`) and `x[idx] = v` on a tensor are
ordinary graph operations... but `x[idx] = v` cannot be told from a dict
store without types, so item stores are always eager unless the target or
the index is known to be a tensor.

`check_statement` checks one statement, `check_with_item` one item of a `with` header, and
`check_callee` a call to a user function whose own analysis found it changes Python state (the
analysis, rewriters/analysis.py, hands it what the callee resolver found). The compiler's
resolver (compiler/resolver.py) gives such a callee the state a tracer would freeze (an
lru_cache, a random.Random draw).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.checks.context import CheckContext
from carve.rewriters.names import dotted_name
from carve.rewriters.rules._rule import Rule, Strategy, Violation
from carve.rewriters.walk import walk

RULE = Rule(
    "CRV019", "python-side-effect", "Python side effect",
    "Attribute and item stores, container mutation and global/nonlocal writes must happen on every call; "
    "a cached graph replays only tensor operations, so carve runs these statements eagerly. "
    "This is not a graph break for torch.compile, which replays such effects itself.",
    "Nothing to do for torch.compile; for carve, move such statements next to each other to keep graphs large "
    "(under fullgraph=True, out of the compiled function).",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
    hoistable=True, resumable_in_branch=True,
    what="Flags attribute and item stores, calls that mutate a Python container or object (`append`, `update`, "
         "`step`, `next`, `setattr`, ...), global/nonlocal writes and draws from Python's or NumPy's random "
         "generators.",
    why="carve's graphs replay recorded tensor operations: a Python effect would happen once, when the graph "
        "is traced, and never again, so carve runs the statement as Python between two graphs.",
    bad_example="self.calls += 1\noutputs.append(y.sum())",
    good_example="count = count + 1  # a local, returned\nsums = y.sum()  # appended by the caller",
    known_problems="Item stores are flagged unless the target or the index is known to be a tensor, so a store "
                   "into a tensor the analysis cannot type is a false positive; mutating methods are matched by "
                   "name, so a user object with a pure `update()` or `add()` is flagged too.",
    fix_safety="No automatic fix in `carve lint` (off by default: torch.compile is not affected). The compiler "
               "moves the tensor work inside the statement (`outputs.append(y.sum())`: the sum) into the graph "
               "before it and runs only the Python effect eagerly.",
)

MUTATING_METHODS = frozenset({
    "append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "popitem",
    "discard", "appendleft", "popleft", "extendleft", "put", "put_nowait", "send", "register_buffer",
    "register_parameter", "add_module", "register_forward_hook", "register_module",
    # Optimizers and schedulers: they rewrite `.grad` and parameters and keep Python state.
    "zero_grad", "step",
})
MUTATING_BUILTINS = frozenset({"next", "setattr", "delattr", "exec"})
# Mutate a Python container, unless the receiver is a tensor (`x.add(y)`, `x.sort()` are tensor ops).
MAYBE_MUTATING_METHODS = frozenset({"add", "sort", "reverse"})
# torch's context managers whose `__enter__` returns an object (autocast returns itself,
# sdpa_kernel a dict), which `with ... as name` binds eagerly and a trace binds to None.
OBJECT_ENTERING_MANAGERS = frozenset({
    "torch.autocast", "torch.amp.autocast", "torch.cpu.amp.autocast", "torch.cuda.amp.autocast",
    "torch.nn.attention.sdpa_kernel",
})


def check_statement(stmt: cst.BaseSmallStatement, ctx: CheckContext, declared_nonlocal: set[str]):
    """Side effects of one small statement; `declared_nonlocal` holds its function's global/nonlocal names."""
    if isinstance(stmt, (cst.Global, cst.Nonlocal)):
        return
    targets: list[cst.BaseExpression] = []
    if isinstance(stmt, cst.Assign):
        targets = [t.target for t in stmt.targets]
    elif isinstance(stmt, (cst.AugAssign, cst.AnnAssign)):
        targets = [stmt.target]
    elif isinstance(stmt, cst.Del):
        targets = [stmt.target]
    for target in targets:
        yield from _check_target(target, declared_nonlocal, ctx, deleting=isinstance(stmt, cst.Del))
    if isinstance(stmt, cst.AugAssign) and isinstance(stmt.value, (cst.List, cst.ListComp, cst.Tuple, cst.Set, cst.Dict)):
        # `xs += [y]` extends the list object in place (for a list xs), as xs.extend would.
        yield Violation(RULE.code, f"{dotted_name(stmt.target) or 'a name'} += a container literal extends it in place")
    collector = _MutatingCalls(ctx)
    walk(stmt, collector)
    yield from collector.found


def check_with_item(item: cst.WithItem, ctx: CheckContext):
    """`with torch.autocast("cpu") as ac:`: eager binds the autocast object, a traced `with`
    binds None (Dynamo's wrong value, so torch.compile's too). The analysis records the finding
    on the `with` statement, whose header then stays Python, and the function is not handed
    whole to Dynamo; the block's body is still compiled."""
    if item.asname is None:
        return
    expression = item.item.func if isinstance(item.item, cst.Call) else item.item
    manager = ctx.qualified(expression)
    if manager in OBJECT_ENTERING_MANAGERS:
        yield Violation(RULE.code, f"`as` binds the {manager} object, which a traced `with` binds to None",
                        frozen_by_tracing=True)


def check_callee(callee: CalleeInfo):
    """A call of a user function that changes Python state, traced into a graph, would change it
    once, at trace time: its first effect, frozen when any of them is one a tracer would freeze."""
    if callee.kind is not CalleeKind.USER_FUNCTION or not callee.side_effects:
        return
    if callee.breaks:
        return  # a callee with a graph break is reported once, as that (CRV016)
    effect = callee.side_effects[0]
    yield Violation(
        RULE.code, f"{callee.name}() changes Python state ({callee.location(effect)}: {effect.message})",
        frozen_by_tracing=any(side_effect.frozen_by_tracing for side_effect in callee.side_effects),
    )


def _check_target(target: cst.BaseExpression, declared_nonlocal: set[str], ctx: CheckContext, deleting: bool):
    if isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _check_target(element.value, declared_nonlocal, ctx, deleting)
    elif isinstance(target, cst.StarredElement):
        yield from _check_target(target.value, declared_nonlocal, ctx, deleting)
    elif isinstance(target, cst.Attribute):
        yield Violation(RULE.code, f"stores attribute {dotted_name(target) or target.attr.value}")
    elif isinstance(target, cst.Subscript):
        if not deleting and (ctx.tensors.is_tensor(target.value) or _tensor_index(target, ctx)):
            return  # `logits[logits < v] = -inf`: an in-place tensor op the graph records
        yield Violation(RULE.code, f"stores an item of {dotted_name(target.value) or 'a container'}",
                        subject=_plain_name(target.value))
    elif isinstance(target, cst.Name) and target.value in declared_nonlocal:
        yield Violation(RULE.code, f"writes the global/nonlocal name {target.value}")


class _MutatingCalls(cst.CSTVisitor):
    def __init__(self, ctx: CheckContext) -> None:
        self.ctx = ctx
        self.found: list[Violation] = []

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.ctx.qualified(node.func) or ""
        if qualified.startswith(("numpy.random.", "random.")):
            # Fresh random numbers on every call: a graph would freeze the first ones (NumPy's
            # are invisible to the tracer's profiler, so they are caught here).
            self.found.append(Violation(RULE.code, f"{dotted_name(node.func)}() draws new random numbers on every call"))
            return
        if isinstance(node.func, cst.Name):
            # `next(it)` advances an iterator and `setattr`/`delattr` change an object: effects a
            # cached graph would not repeat (and what `next` yields is not a graph input).
            if node.func.value in MUTATING_BUILTINS:
                self.found.append(Violation(RULE.code, f"{node.func.value}() changes a Python object"))
            return
        if not isinstance(node.func, cst.Attribute):
            return
        method = node.func.attr.value
        receiver = node.func.value
        if method in MUTATING_METHODS or (
            method in MAYBE_MUTATING_METHODS and not self.ctx.tensors.is_tensor(receiver)
            and not (method == "add" and node.args and self.ctx.tensors.is_tensor(node.args[0].value))
        ):
            self.found.append(Violation(RULE.code, f"{dotted_name(node.func) or '.' + method}() mutates a Python object",
                                        subject=_plain_name(receiver)))


def _plain_name(node: cst.BaseExpression) -> str | None:
    return node.value if isinstance(node, cst.Name) else None


def _tensor_index(target: cst.Subscript, ctx: CheckContext) -> bool:
    """Indexed by a tensor (`x[mask]`, `x[idx]`): only a tensor is stored into that way."""
    return any(isinstance(element.slice, cst.Index) and ctx.tensors.is_tensor(element.slice.value)
               for element in target.slice)
