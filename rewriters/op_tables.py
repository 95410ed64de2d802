"""The operations carve treats specially, as plain data: read by the static checks
(rewriters/checks/, before the program runs) and by carve's own tracer (runtime/tracer.py,
while a region runs), so the two agree on what a conversion or a data-dependent op is.

    y = x.item()            # CONVERSION_METHODS: a Python number from a tensor (CRV004)
    if x:                   # CONVERSION_PROTOCOL: the same, through `__bool__` (seen only
                            # at run time: the tracer records the dunder Python calls)
    idx = x.nonzero()       # UNBACKED_SIZE_METHODS: an output size that depends on data
    u = x.unique()          # DATA_DEPENDENT_SHAPE_METHODS (CRV009)
    loss.backward()         # AUTOGRAD_METHODS (CRV012)
    log.info("step %d", i)  # LOGGING_METHODS, IO_FUNCTIONS: Python I/O (CRV002)

No torch, no libcst: importing this module is free for either side. tests/rewriters/
test_op_tables.py checks that the tracer's tables contain these.
"""

from __future__ import annotations

# Tensor -> Python value, as the user writes it.
CONVERSION_METHODS = frozenset({"item", "tolist", "numpy"})
# Builtins that convert a tensor argument to a Python number (`int(x)`).
CONVERTING_BUILTINS = frozenset({"int", "float", "bool", "complex"})
# What Python and torch call underneath a conversion, seen only by a tracer at run time.
CONVERSION_PROTOCOL = frozenset({
    "__bool__", "__int__", "__float__", "__index__", "__complex__", "_local_scalar_dense", "__format__",
    "__repr__", "__str__", "__array__", "equal", "is_nonzero", "allclose", "__contains__", "__reduce_ex__",
    "__hash__", "data_ptr", "untyped_storage",
})

# Output shape depends on the tensor's values.
DATA_DEPENDENT_SHAPE_METHODS = frozenset({"unique", "unique_consecutive", "masked_select", "bincount"})
DATA_DEPENDENT_SHAPE_FUNCTIONS = frozenset(
    {f"torch.{name}" for name in DATA_DEPENDENT_SHAPE_METHODS} | {"torch.repeat_interleave"})
# torch.compile 2.13 gives these an unbacked output size instead of breaking the graph.
UNBACKED_SIZE_METHODS = frozenset({"nonzero", "argwhere"})
UNBACKED_SIZE_FUNCTIONS = frozenset({f"torch.{name}" for name in UNBACKED_SIZE_METHODS})

# Calls that run the autograd engine.
AUTOGRAD_METHODS = frozenset({"backward"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})

# Python I/O.
IO_FUNCTIONS = frozenset({
    "print", "input", "open", "breakpoint", "pdb.set_trace", "torch.save", "torch.load",
    "time.sleep", "sys.stdout.write", "sys.stderr.write", "sys.stdout.flush",
    "os.system", "subprocess.run", "subprocess.call", "json.dump", "pickle.dump", "numpy.save",
    "tqdm.write", "pprint.pprint", "traceback.print_exc",
})
LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})
