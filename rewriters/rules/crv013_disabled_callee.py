"""CRV013: a call torch.compile never traces: a disabled function, or one of Dynamo's own skip rules.

    t0 = time.perf_counter()            # CRV013: the time module's clocks are skipped functions
    torch.manual_seed(0)                # CRV013: so are torch's RNG state functions
    random.shuffle(order)               # CRV013: and most of Python's random module
    k = random.randint(0, 3)            # not CRV013: randint, randrange and uniform are traced
    scheduler.step()                    # CRV013: torch/optim/lr_scheduler.py is a force-skipped file
    pbar.update(1)                      # CRV013: tqdm is on Dynamo's third-party skip list
    f1 = sklearn.metrics.f1_score(y, p) # CRV013: so is scikit-learn
    batch = next(self.data_iter)        # CRV013: DataLoader iterators (torch/utils/data) are skipped
    for x, y in train_loader: ...       # CRV013: so is a loop over one (torch.compile skips the frame)
    loader = DataLoader(TensorDataset(x, y), 32)   # CRV013: so is building one
    init.kaiming_normal(m.weight)       # CRV013: deprecated torch.nn.init spellings warn from torch's code
    optimizer.step()                    # not CRV013: not a scheduler (a side effect, CRV019)

Dynamo graph-breaks at each ("Attempted to call function marked as skipped"). The
receivers of `.step()` and `.update()` cannot be typed from the source alone, so
schedulers and progress bars are recognised by their conventional names (`scheduler`,
`lr_sched`, `pbar`, `progress_bar`), as loggers are by theirs (crv003_io.py).
`check_call` finds these, `check_iteration` a `for` loop over a DataLoader; `check_callee` a
call to a function marked carve.disable / torch.compiler.disable, which the callee resolver
recognises (rewriters/callees.py: the decorator of a function whose source it reads; the
compiler's live resolver: the marker) and the analysis (rewriters/analysis.py) hands it.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.names import dotted_name
from carve.rewriters.op_tables import IO_FUNCTIONS
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV013", "disabled-callee", "call to a disabled or skipped function",
    "The callee is marked carve.disable / torch.compiler.disable, or torch.compile's own rules skip it "
    "(the time module's clocks, torch.optim.lr_scheduler, progress bars and the other third-party packages "
    "on Dynamo's skip list): it runs eagerly, so the graph breaks at the call.",
    "If the callee is pure tensor code, remove the marker or use carve.nonstrict_trace; move clock reads, "
    "scheduler steps and progress-bar updates out of the compiled function.",
    Strategy.ESCAPE_HATCH,
    resumable_in_branch=True,
    what="Flags calls to functions marked `carve.disable` / `torch.compiler.disable`, clock reads of the "
         "`time` module, the torch functions Dynamo skips (`torch.manual_seed` and the other RNG-state "
         "functions, `pack_padded_sequence`), calls into the standard-library modules it skips (`random` but "
         "for `randint`/`randrange`/`uniform`, `copy`, `re`), learning-rate scheduler steps, progress-bar "
         "updates, `next()` / `iter()` of a DataLoader and a `for` loop over one (by its name: `train_loader`, "
         "`self.data_iter`), building "
         "a dataset, loader or sampler of `torch.utils.data` (`DataLoader(...)`, `TensorDataset(...)`), the "
         "deprecated `torch.nn.init` spellings (`init.kaiming_normal`, which warn from torch's code) and calls into the third-party packages on Dynamo's skip list (tqdm, pandas, scikit-learn, ...).",
    why="torch.compile does not trace into these functions: it ends the graph before the call, runs the call "
        "eagerly and starts a new graph after it.",
    bad_example="@torch.compiler.disable\ndef helper(x): ...\n\ny = helper(x)",
    good_example="@torch._dynamo.nonstrict_trace\ndef helper(x): ...\n\ny = helper(x)",
    known_problems="Schedulers, progress bars and DataLoaders are recognised by the receiver's name "
                   "(containing `sched`, `pbar`, `progress`, `tqdm` or `loader`, or an iterator named `data_iter`): a "
                   "scheduler named `lr_policy` or a loader named `batches` is missed, and an unrelated object "
                   "named `progress` is flagged. A disable marker is seen by `carve lint` only where "
                   "the decorated function's source can be read.",
    fix_safety="No automatic fix. The compiler runs the call eagerly between two graphs.",
)

# torch._dynamo.trace_rules.THIRDPARTY_SKIPLIST of torch 2.13 (copied: the rewriters never import torch).
DYNAMO_THIRDPARTY_SKIPLIST = frozenset({
    "fx2trt_oss", "hypothesis", "networkx", "numpy", "onnx", "onnxruntime", "onnx_tf", "pandas",
    "sklearn", "tabulate", "tensorflow", "tensorrt", "torch2trt", "tqdm", "tree", "tvm", "xarray",
})
# NumPy is on the list, but Dynamo traces NumPy calls itself (trace_numpy).
SKIPPED_PACKAGES = DYNAMO_THIRDPARTY_SKIPLIST - {"numpy"}
# The torch functions torch._dynamo.trace_rules of torch 2.13 maps to SkipFunctionVariable (public
# names; tests/lint/test_lint_torch_knowledge.py compares them with the installed torch's).
DYNAMO_SKIPPED_TORCH_FUNCTIONS = frozenset({
    "torch.get_rng_state", "torch.set_rng_state", "torch.manual_seed", "torch.cuda.get_rng_state",
    "torch.cuda.set_rng_state", "torch.cuda.manual_seed", "torch.cuda.manual_seed_all",
    "torch.cuda.random.manual_seed", "torch.cuda.random.manual_seed_all", "torch.xpu.get_rng_state",
    "torch.xpu.set_rng_state", "torch.nn.utils.rnn.pack_padded_sequence", "torch.nn.utils.rnn.pad_packed_sequence",
    "torch.to_dlpack", "torch.cuda.set_device", "torch.distributed.destroy_process_group", "torch.jit.isinstance",
    "torch.resize_as_", "torch.resize_as_sparse_", "torch.distributions.constraints.is_dependent",
})
# torch modules on Dynamo's skip list whose functions a user calls for their effect (torch.random:
# `torch.random.manual_seed`, `fork_rng`), and torch.utils.data, whose datasets, loaders, samplers and
# collate functions Dynamo never traces (`DataLoader(dataset, 32)`, `TensorDataset(x, y)`).
DYNAMO_SKIPPED_TORCH_MODULES = ("torch.random.", "torch.utils.data.")
# Standard-library modules on torch._dynamo.trace_rules.BUILTIN_SKIPLIST (torch 2.13), and the
# functions of the random module Dynamo traces anyway (RandomVariable).
DYNAMO_SKIPPED_STDLIB_MODULES = frozenset({"abc", "copy", "importlib", "linecache", "random", "re"})
TRACED_RANDOM_FUNCTIONS = frozenset({"random.randint", "random.randrange", "random.uniform"})
CLOCK_FUNCTIONS = frozenset(
    f"time.{name}{suffix}" for name in ("time", "perf_counter", "monotonic", "process_time", "thread_time")
    for suffix in ("", "_ns")
)
SCHEDULER_METHODS = frozenset({"step", "get_last_lr", "get_lr"})
PROGRESS_BAR_METHODS = frozenset({
    "update", "set_postfix", "set_postfix_str", "set_description", "set_description_str", "refresh", "close",
    "reset", "clear", "display",
})


# torch.nn.init's deprecated spellings (no trailing underscore, torch 2.13): each warns and then calls
# the underscored function; the warning is `_warnings.warn` called from torch's code, which Dynamo skips.
DEPRECATED_INIT_FUNCTIONS = frozenset(
    f"torch.nn.init.{name}" for name in (
        "uniform", "normal", "constant", "xavier_uniform", "xavier_normal", "kaiming_uniform", "kaiming_normal",
        "orthogonal", "sparse")
)
ITERATOR_BUILTINS = frozenset({"next", "iter"})


def is_data_loader_name(node: cst.BaseExpression) -> bool:
    """`train_loader`, `self.data_iter`, `dataloader`: a name that says it holds a DataLoader or an iterator
    over one (the receiver's type cannot be read from the source)."""
    last = (dotted_name(node) or "").rsplit(".", 1)[-1].lower()
    return "loader" in last or last in ("data_iter", "dataiter", "batch_iter", "train_iter", "loader_iter")


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name in IO_FUNCTIONS:
        return  # I/O (`tqdm.write`, `time.sleep`): CRV003's
    if name in DEPRECATED_INIT_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() is deprecated: its warning is a call torch.compile "
                                   f"skips (use {name.rsplit('.', 1)[-1]}_())")
        return
    if (isinstance(call.func, cst.Name) and call.func.value in ITERATOR_BUILTINS and name in ("", call.func.value)
            and len(call.args) == 1 and is_data_loader_name(call.args[0].value)):
        yield Violation(RULE.code, f"{call.func.value}() of a DataLoader: torch.compile skips torch.utils.data's "
                                   "iterators")
        return
    if name in CLOCK_FUNCTIONS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() reads the clock, which torch.compile does not trace")
        return
    if name in DYNAMO_SKIPPED_TORCH_FUNCTIONS or name.startswith(DYNAMO_SKIPPED_TORCH_MODULES):
        where = "in torch.utils.data, which" if name.startswith("torch.utils.data.") else "a function"
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() is {where} torch.compile skips")
        return
    package = name.split(".", 1)[0]
    if package in DYNAMO_SKIPPED_STDLIB_MODULES and "." in name and name not in TRACED_RANDOM_FUNCTIONS and (
            (ctx.dotted(call.func) or "").split(".", 1)[0] in ctx.imports.aliases):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() is in {package}, a module torch.compile skips")
        return
    local_head = (ctx.dotted(call.func) or "").split(".", 1)[0]
    if package in SKIPPED_PACKAGES and local_head in ctx.imports.aliases:  # imported, not a local named `tree`
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() is in {package}, a package torch.compile skips")
        return
    method = method_name(call)
    if method is None:
        return
    receiver = (ctx.dotted(method_receiver(call)) or "").rsplit(".", 1)[-1].lower()
    if method in SCHEDULER_METHODS and "sched" in receiver:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}(): torch.compile skips torch.optim.lr_scheduler")
    elif method in PROGRESS_BAR_METHODS and any(word in receiver for word in ("pbar", "progress", "tqdm")):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}(): progress bars (tqdm) are skipped by torch.compile")


def check_iteration(iterable: cst.BaseExpression, ctx: CheckContext):
    """`for x, y in train_loader:` (the analysis calls it on each `for` header): iterating a DataLoader
    calls its iterator, which torch.compile skips, at the loop and at every step of it."""
    if is_data_loader_name(iterable):
        yield Violation(RULE.code, f"iterating {ctx.dotted(iterable)}, a DataLoader: torch.compile skips "
                                   "torch.utils.data's iterators")


def check_callee(callee: CalleeInfo):
    """A call whose target the callee resolver found marked carve.disable / torch.compiler.disable."""
    if callee.kind is CalleeKind.DISABLED:
        yield Violation(RULE.code, f"{callee.name} is disabled (carve.disable / torch.compiler.disable)")
