"""CRV004: a tensor converted to a Python value.

    scale = x.max().item()          # CRV004: reads tensor data into Python
    n = int(x.sum())                # CRV004
    values = x.tolist()             # CRV004: an .item() per element (non-integer tensors: unsupported)
    ok = math.isfinite(loss)        # CRV004: math functions take Python numbers
    for _ in range(n_steps): ...    # CRV004 when n_steps is a tensor: range() reads it with __index__
    c = torch.cov(x)                # CRV004: torch.cov (corrcoef, allclose, equal) reads x's values inside
    s = str(loss)                   # CRV004: str() and repr() of a tensor
    ix = torch.randint(n, (4,))
    xs = [data[i:i + 8] for i in ix]   # CRV004: slicing with an element of a tensor reads it (.item())
    h = self.encoder(x, mask)       # CRV004: nn.TransformerEncoder reads the mask to see if it is causal
    arr = x.numpy()                 # not CRV004: torch.compile traces it (CRV021)
    msg = f"{loss:.3f}"             # not CRV004: torch.compile formats a tensor itself
    a = np.zeros(3).tolist()        # not flagged: a NumPy array, not a tensor
    return x / scale

becomes, after the fix the hint suggests:

    scale = x.max()
    return x / scale
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo
from carve.rewriters.checks.context import TRACED_CONVERSION_METHODS, CheckContext, method_name, receiver_is_numpy
from carve.rewriters.op_tables import CONVERSION_METHODS, CONVERTING_BUILTINS, VALUE_READING_FUNCTIONS, VALUE_READING_METHODS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV004", "tensor-to-python", "tensor converted to a Python value",
    "`.item()`, `.tolist()`, `.numpy()` and `int()/float()/bool()` of a tensor read the tensor's data into Python; "
    "a graph cannot return a Python value in the middle of its computation.",
    "Keep the value a tensor (use torch ops on it) or move the conversion after the tensor work.",
    Strategy.REWRITE,
    hoistable=True, resumable_in_branch=True,
    what="Flags `.item()` and `.tolist()` calls, `int()`, `float()`, `bool()`, `complex()`, `str()` and `repr()` "
         "of a tensor, `math` functions given a tensor, `range()` of a tensor, the torch functions that read their "
         "input's values inside (`torch.cov`, `torch.corrcoef`, `torch.allclose`, `torch.equal` and the same-named "
         "tensor methods: \"Data dependent operator\"), and slicing or indexing with an element of a tensor "
         "(`[data[i:i + n] for i in ix]` with `ix = torch.randint(...)`; `transitions[tags[i + 1], tags[i]]`, "
         "an element taken by a Python position), which reads it with `.item()`; and a "
         "call of an `nn.Transformer`, `nn.TransformerEncoder` or `nn.TransformerDecoder` given an attention mask "
         "without `is_causal`, which reads the mask with `.item()` to find out whether it is causal.",
    why="The Python value exists only once the tensor work before it has run (on a GPU: a device "
        "synchronisation), so the graph must end there; what follows depends on a number the graph could "
        "not see, and is a second graph, specialised on that number unless it is marked dynamic.",
    bad_example="scale = x.max().item()\nreturn x / scale",
    good_example="scale = x.max()\nreturn x / scale",
    known_problems="`.item()` and `.tolist()` are flagged on any receiver that is not visibly a NumPy call, so "
                   "a NumPy array held in a local name (`a = np.zeros(3); a.tolist()`) is a false positive. "
                   "`int(v)` and the math functions are flagged only when the analysis can tell `v` is a "
                   "tensor: a tensor returned by a function it cannot read is missed. `idx[i]` used as an index is "
                   "taken for a 0-dim element: for a 2-D `idx` it is a row, a traced tensor index (a false "
                   "positive), unless the function shows its dimensions (`seq_length, batch = idx.shape`, "
                   "`assert idx.dim() == 2`).",
    fix_safety="No automatic fix in `carve lint`. The compiler computes the tensor work inside the statement "
               "in the graph before it and runs only the conversion eagerly.",
)


def check_subscript(node: cst.Subscript, ctx: CheckContext):
    """`data[i:i + n]` with `i` a tensor (an element of one): Python slicing takes ints, so the tensor is
    read with .item(); so is `items[i]` with `i` an element of a tensor (indexing a tensor with one is a
    data-dependent operation: a break too)."""
    for element in node.slice:
        bounds = [element.slice.lower, element.slice.upper, element.slice.step] if isinstance(element.slice, cst.Slice) else []
        if any(bound is not None and ctx.tensors.is_tensor(bound) for bound in bounds):
            yield Violation(RULE.code, "slicing with a tensor value converts it to a Python int (.item())")
            return
        if isinstance(element.slice, cst.Index) and _reads_element(element.slice.value, ctx):
            yield Violation(RULE.code, "indexing with an element of a tensor converts it to a Python int (.item())")
            return


def _reads_element(index: cst.BaseExpression, ctx: CheckContext) -> bool:
    """`i` or `i + 1`, with `i` bound by iterating a tensor; or `tags[i]`, an element of a tensor taken by
    a Python position (`self.transitions[tags[i + 1], tags[i]]`)."""
    if isinstance(index, cst.Name):
        return index.value in ctx.tensors.element_names
    if isinstance(index, cst.BinaryOperation):
        return _reads_element(index.left, ctx) or _reads_element(index.right, ctx)
    if isinstance(index, cst.Subscript):
        return _is_element_of_tensor(index, ctx)
    return False


def _is_element_of_tensor(node: cst.Subscript, ctx: CheckContext) -> bool:
    """`tags[i]`, `tags[i + 1]`, `tags[0]`: a tensor indexed by one Python position (a 0-dim tensor when
    the tensor is 1-D), not a slice, a tuple of indices or a tensor index."""
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return False
    if isinstance(node.value, cst.Name) and ctx.tensors.ranks.get(node.value.value, 1) > 1:
        return False  # `tags[0]` of a 2-D `tags` (`seq_length, batch = tags.shape`): a row, a traced tensor index
    position = node.slice[0].slice.value
    return _is_position(position, ctx) and ctx.tensors.is_tensor(node.value)


def _is_position(node: cst.BaseExpression, ctx: CheckContext) -> bool:
    if isinstance(node, cst.Integer):
        return True
    if isinstance(node, cst.Name):
        return not ctx.tensors.is_tensor(node) and node.value not in ctx.tensors.element_names and node.value != "None"
    if isinstance(node, cst.UnaryOperation):
        return _is_position(node.expression, ctx)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract)):
        return _is_position(node.left, ctx) and _is_position(node.right, ctx)
    return False


def check_call(call: cst.Call, ctx: CheckContext):
    method = method_name(call)
    if method in CONVERSION_METHODS and not call.args:
        if method not in TRACED_CONVERSION_METHODS and not receiver_is_numpy(call, ctx):
            yield Violation(RULE.code, f".{method}() converts a tensor to Python data")
        return
    name = ctx.dotted(call.func)
    if name in CONVERTING_BUILTINS and len(call.args) == 1 and ctx.tensors.is_tensor(call.args[0].value):
        yield Violation(RULE.code, f"{name}() of a tensor converts it to a Python value")
    elif name == "range" and any(ctx.tensors.is_tensor(arg.value) for arg in call.args):
        yield Violation(RULE.code, "range() of a tensor converts it to a Python int")
    elif ctx.qualified(call.func) in VALUE_READING_FUNCTIONS or (
            method in VALUE_READING_METHODS and isinstance(call.func, cst.Attribute) and ctx.tensors.is_tensor(call.func.value)):
        yield Violation(RULE.code, f"{name or f'.{method}'}() reads the tensor's values into Python inside")
    elif (ctx.qualified(call.func) or "").startswith("math.") and any(ctx.tensors.is_tensor(a.value) for a in call.args):
        yield Violation(RULE.code, f"{name}() of a tensor converts it to a Python number")


# torch's transformer containers, and the arguments (position, keyword) of their forward that hold an
# attention mask they test for causality with .item() (`_detect_is_causal_mask`) unless told `is_causal`.
MASK_READING_MODULES = {
    "torch.nn.TransformerEncoder": ((1, "mask"),),
    "torch.nn.TransformerDecoder": ((2, "tgt_mask"),),
    "torch.nn.Transformer": ((2, "src_mask"), (3, "tgt_mask")),
}


def reads_attention_mask(module_class: str, call: cst.Call) -> bool:
    """`self.encoder(x, mask)` with `self.encoder` an nn.TransformerEncoder (the resolver's question)."""
    masks = MASK_READING_MODULES.get(module_class.replace(".modules.transformer.", "."))
    if masks is None:
        return False
    if any(arg.keyword is not None and arg.keyword.value.endswith("is_causal") for arg in call.args):
        return False
    positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
    keywords = {arg.keyword.value: arg.value for arg in call.args if arg.keyword is not None}
    for position, keyword in masks:
        value = positional[position] if position < len(positional) else keywords.get(keyword)
        if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
            return True
    return False


def check_callee(callee: CalleeInfo):
    """A call the resolver found to pass an attention mask to one of MASK_READING_MODULES."""
    if callee.extra.get("reads_attention_mask"):
        yield Violation(RULE.code, f"{callee.name}() reads its attention mask with .item() to tell whether it is causal "
                                   f"(pass is_causal=)")
