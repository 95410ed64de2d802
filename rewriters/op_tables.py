"""The operations carve treats specially, as plain data: read by the static checks
(rewriters/checks/, before the program runs) and by the runtime's cost check (which ops draw
random numbers), so every part of carve agrees on what a conversion or a data-dependent op is.

    y = x.item()            # CONVERSION_METHODS: a Python number from a tensor (CRV004)
    idx = x.nonzero()       # UNBACKED_SIZE_METHODS: an output size that depends on data
    u = x.unique()          # DATA_DEPENDENT_SHAPE_METHODS (CRV009)
    loss.backward()         # AUTOGRAD_METHODS (CRV012)
    log.info("step %d", i)  # LOGGING_METHODS, IO_FUNCTIONS: Python I/O (CRV002)

    torch.rand(3)           # RANDOM_OPS: draws from a random generator (never timed by
                            # the cost check: which way it ran would change a seeded draw)

No torch, no libcst: importing this module is free for either side.
"""

from __future__ import annotations

# Tensor -> Python value, as the user writes it.
CONVERSION_METHODS = frozenset({"item", "tolist", "numpy"})
# Builtins that convert a tensor argument to a Python number (`int(x)`) or string (`str(x)`).
CONVERTING_BUILTINS = frozenset({"int", "float", "bool", "complex", "str", "repr"})

# torch functions (and the same-named tensor methods) that read their input's values into Python
# inside: torch.compile 2.13 ends its graph there ("Data dependent operator").
VALUE_READING_METHODS = frozenset({"cov", "corrcoef", "allclose", "equal"})
VALUE_READING_FUNCTIONS = frozenset({f"torch.{name}" for name in VALUE_READING_METHODS})

# Output shape depends on the tensor's values.
DATA_DEPENDENT_SHAPE_METHODS = frozenset({"unique", "unique_consecutive", "masked_select", "bincount"})
DATA_DEPENDENT_SHAPE_FUNCTIONS = frozenset(
    {f"torch.{name}" for name in DATA_DEPENDENT_SHAPE_METHODS}
    | {"torch.repeat_interleave", "torch.combinations", "torch.linalg.lstsq"})
# torch.compile 2.13 gives these an unbacked output size under fullgraph=True, and breaks the graph on
# them without it ("Dynamic shape operator").
UNBACKED_SIZE_METHODS = frozenset({"nonzero", "argwhere"})
UNBACKED_SIZE_FUNCTIONS = frozenset({f"torch.{name}" for name in UNBACKED_SIZE_METHODS})

# Calls that run the autograd engine.
AUTOGRAD_METHODS = frozenset({"backward"})
# Tensor methods that change autograd's bookkeeping of a tensor, which Dynamo 2.13 cannot trace
# under AOT autograd (it breaks the graph; a region holding one makes no graph at all).
AUTOGRAD_STATE_METHODS = frozenset({"retain_grad"})
AUTOGRAD_FUNCTIONS = frozenset({"torch.autograd.grad", "torch.autograd.backward"})

# Python I/O.
IO_FUNCTIONS = frozenset({
    "print", "input", "open", "breakpoint", "pdb.set_trace", "torch.save", "torch.load",
    "time.sleep", "sys.stdout.write", "sys.stderr.write", "sys.stdout.flush",
    "os.system", "subprocess.run", "subprocess.call", "json.dump", "pickle.dump", "numpy.save",
    "tqdm.write", "pprint.pprint", "traceback.print_exc",
})
LOGGING_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "log"})

# Ops that draw from a random generator, by name (torch.rand, F.dropout, Tensor.bernoulli_, ...).
RANDOM_OPS = frozenset({
    "rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli", "bernoulli_",
    "multinomial", "normal", "normal_", "uniform_", "exponential_", "poisson", "cauchy_", "geometric_",
    "log_normal_", "random_", "rrelu", "native_dropout",
})
# Dropouts draw only in training mode: their `training` argument (third, or by keyword).
DROPOUT_OPS = frozenset({"dropout", "dropout_", "alpha_dropout", "feature_alpha_dropout", "feature_dropout",
                         "dropout1d", "dropout2d", "dropout3d"})


def op_name(target: object) -> str:
    """An FX node's target as the tables name it: `"sin"` for a method name, `torch.sin`, `aten.sin`."""
    return target if isinstance(target, str) else getattr(target, "__name__", "") or ""
