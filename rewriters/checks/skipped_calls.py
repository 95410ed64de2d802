"""CRV013 for calls torch.compile never traces: Dynamo's own skip rules, not a user's marker.

    t0 = time.perf_counter()            # CRV013: the time module's clocks are skipped functions
    scheduler.step()                    # CRV013: torch/optim/lr_scheduler.py is a force-skipped file
    pbar.update(1)                      # CRV013: tqdm is on Dynamo's third-party skip list
    f1 = sklearn.metrics.f1_score(y, p) # CRV013: so is scikit-learn

Dynamo graph-breaks at each ("Attempted to call function marked as skipped"). The
receivers of `.step()` and `.update()` cannot be typed from the source alone, so
schedulers and progress bars are recognised by their conventional names (`scheduler`,
`lr_sched`, `pbar`, `progress_bar`), as loggers are by theirs (checks/io.py).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.checks.io import IO_FUNCTIONS
from carve.rewriters.findings import Violation

# torch._dynamo.trace_rules.THIRDPARTY_SKIPLIST of torch 2.13 (copied: the rewriters never import torch).
DYNAMO_THIRDPARTY_SKIPLIST = frozenset({
    "fx2trt_oss", "hypothesis", "networkx", "numpy", "onnx", "onnxruntime", "onnx_tf", "pandas",
    "sklearn", "tabulate", "tensorflow", "tensorrt", "torch2trt", "tqdm", "tree", "tvm", "xarray",
})
# NumPy is on the list, but Dynamo traces NumPy calls itself (trace_numpy).
SKIPPED_PACKAGES = DYNAMO_THIRDPARTY_SKIPLIST - {"numpy"}
CLOCK_FUNCTIONS = frozenset(
    f"time.{name}{suffix}" for name in ("time", "perf_counter", "monotonic", "process_time", "thread_time")
    for suffix in ("", "_ns")
)
SCHEDULER_METHODS = frozenset({"step", "get_last_lr", "get_lr"})
PROGRESS_BAR_METHODS = frozenset({
    "update", "set_postfix", "set_postfix_str", "set_description", "set_description_str", "refresh", "close",
    "reset", "clear", "display",
})


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name in IO_FUNCTIONS:
        return  # CRV003 already
    if name in CLOCK_FUNCTIONS:
        yield Violation("CRV013", f"{ctx.dotted(call.func)}() reads the clock, which torch.compile does not trace")
        return
    package = name.split(".", 1)[0]
    local_head = (ctx.dotted(call.func) or "").split(".", 1)[0]
    if package in SKIPPED_PACKAGES and local_head in ctx.imports.aliases:  # imported, not a local named `tree`
        yield Violation("CRV013", f"{ctx.dotted(call.func)}() is in {package}, a package torch.compile skips")
        return
    method = method_name(call)
    if method is None:
        return
    receiver = (ctx.dotted(method_receiver(call)) or "").rsplit(".", 1)[-1].lower()
    if method in SCHEDULER_METHODS and "sched" in receiver:
        yield Violation("CRV013", f"{ctx.dotted(call.func)}(): torch.compile skips torch.optim.lr_scheduler")
    elif method in PROGRESS_BAR_METHODS and any(word in receiver for word in ("pbar", "progress", "tqdm")):
        yield Violation("CRV013", f"{ctx.dotted(call.func)}(): progress bars (tqdm) are skipped by torch.compile")
