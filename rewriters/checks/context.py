"""What every check may look at (imports, tensor inference), and call shapes several rules' checks share.

    x.sum().item()              method_name: "item"; method_receiver: `x.sum()`
    np.zeros(3).tolist()        receiver_is_numpy: True (a NumPy array, not a tensor)
    torch.nonzero(x)            has_unbacked_output_size: True (traced under fullgraph=True, a break without)
    np.random.beta(1.0, 1.0)    numpy_random_break: "unsupported" (torch._numpy has no beta)
    np.random.rand()            numpy_random_break: "one number" (a draw read back into Python)

The checks themselves are in `carve.rewriters.rules`, one rule per module.
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from carve.rewriters.names import ImportTable, dotted_name
from carve.rewriters.op_tables import IO_FUNCTIONS, UNBACKED_SIZE_FUNCTIONS, UNBACKED_SIZE_METHODS
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
    # The analysis runs for `carve lint` (where does torch.compile break?) rather than for carve's compiler,
    # which decides by itself what runs eagerly (a rule reported by the lint only reads it: CRV034).
    for_lint: bool = False
    # Names an augmented assignment updated in place so far, in source order (CRV032's statement check
    # keeps it: the analysis runs statement checks in that order).
    updated_in_place: set[str] = field(default_factory=set)
    # Names holding a tensor the function was given (its parameters at first; CRV033's statement check
    # keeps it, in source order).
    input_names: set[str] = field(default_factory=set)

    # The names as they were before the statement being checked (its calls see those).
    input_names_before: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.input_names |= self.tensors.parameter_names
        self.input_names_before = self.input_names

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


# NumPy's public functions and (non-scalar) classes torch._numpy (torch 2.13) does not implement, and that are
# not another name of one it does: Dynamo breaks on a call of any of them ("attempted to trace numpy function
# unsupported by PyTorch"). tests/lint/test_lint_torch_knowledge.py recomputes it from the installed torch.
UNTRACED_NUMPY = frozenset({
    "apply_along_axis", "apply_over_axes", "argpartition", "array2string", "array_repr", "array_str",
    "asanyarray", "asarray_chkfinite", "asfortranarray", "asmatrix", "astype", "base_repr", "binary_repr",
    "bitwise_count", "block", "bmat", "broadcast", "busday_count", "busday_offset", "busdaycalendar",
    "compress", "cumulative_prod", "cumulative_sum", "datetime_as_string", "datetime_data", "delete",
    "digitize", "ediff1d", "einsum_path", "errstate", "extract", "flatiter", "format_float_positional",
    "format_float_scientific", "frexp", "frombuffer", "fromfile", "fromfunction", "fromiter", "frompyfunc",
    "fromregex", "fromstring", "genfromtxt", "get_include", "get_printoptions", "getbufsize", "geterr",
    "geterrcall", "histogram_bin_edges", "info", "insert", "interp", "intersect1d", "is_busday", "isdtype",
    "isfortran", "isin", "isnat", "iterable", "ix_", "lexsort", "load", "loadtxt", "mask_indices", "matrix",
    "matrix_transpose", "matvec", "may_share_memory", "memmap", "mintypecode", "nanargmax", "nanargmin",
    "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod",
    "nanquantile", "nanstd", "nansum", "nanvar", "ndenumerate", "ndindex", "nditer", "nested_iters", "packbits",
    "partition", "piecewise", "place", "poly", "poly1d", "polyadd", "polyder", "polydiv", "polyfit", "polyint",
    "polymul", "polysub", "polyval", "printoptions", "promote_types", "putmask", "ravel_multi_index",
    "recarray", "require", "roots", "save", "savetxt", "savez", "savez_compressed", "select",
    "set_printoptions", "setbufsize", "setdiff1d", "seterr", "seterrcall", "setxor1d", "shares_memory",
    "show_config", "show_runtime", "sort_complex", "spacing", "test", "trapezoid", "trim_zeros", "typename",
    "ufunc", "union1d", "unique_all", "unique_counts", "unique_inverse", "unique_values", "unpackbits",
    "unravel_index", "unstack", "unwrap", "vecdot", "vecmat", "vectorize"
})


def numpy_untraced(call: cst.Call, imports: ImportTable) -> bool:
    """`np.isin(...)`, `np.nanmean(...)`: a NumPy function torch.compile cannot translate (CRV036). `np.save` is
    I/O (CRV003), reported as such."""
    name = imports.resolve(call.func) or ""
    return name.startswith("numpy.") and name.count(".") == 1 and name[len("numpy."):] in UNTRACED_NUMPY \
        and name not in IO_FUNCTIONS


# The numpy.random functions torch._numpy implements (torch 2.13; Dynamo traces NumPy through it), and
# where each takes the size that makes it draw an array instead of one number: (position, keyword);
# None for the functions that never draw one number. Dynamo reads a single draw back into Python
# ("Data dependent operator"), and breaks on every other numpy.random function ("attempted to trace
# numpy function unsupported by PyTorch"). `choice` breaks either way.
TRACED_NUMPY_RANDOM = {
    "rand": (0, None), "randn": (0, None), "random": (0, "size"), "random_sample": (0, "size"),
    "sample": (0, "size"), "randint": (2, "size"), "uniform": (2, "size"), "normal": (2, "size"),
    "seed": None, "shuffle": None,
}


def numpy_random_break(call: cst.Call, imports: ImportTable, none_defaults: AbstractSet[str] = frozenset()) -> str | None:
    """Why torch.compile 2.13 breaks on this numpy.random call: "unsupported" (`np.random.beta(a, b)`,
    `np.random.permutation(n)`, `np.random.choice(...)`), "one number" (`np.random.rand()`,
    `np.random.randint(0, 8)`: no size, or a size given by a parameter that defaults to None); None for
    an array draw it traces (`np.random.rand(4)`, `np.random.randint(0, 8, size=4)`). `none_defaults`: the
    function's parameters that default to None."""
    name = imports.resolve(call.func) or ""
    if not name.startswith("numpy.random.") or name.count(".") != 2:
        return None
    function = name.rsplit(".", 1)[1]
    if function not in TRACED_NUMPY_RANDOM or function == "choice":
        return "unsupported"
    where = TRACED_NUMPY_RANDOM[function]
    if where is None:
        return None
    position, keyword = where
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if any(arg.star for arg in call.args):
        return None  # `np.random.rand(*shape)`: a shape
    size = positional[position] if len(positional) > position else next(
        (arg.value for arg in call.args if keyword is not None and arg.keyword is not None and arg.keyword.value == keyword),
        None)
    if size is None or isinstance(size, cst.Name) and (size.value == "None" or size.value in none_defaults):
        return "one number"
    return None
