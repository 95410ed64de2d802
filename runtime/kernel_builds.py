"""A graph's C++ kernels built while the program runs on (first-call time).

Inductor compiles a graph in two parts: Python work (AOT autograd, lowering, scheduling, C++
code generation) in the calling thread, and gcc, which builds each kernel in Inductor's worker
processes. torch.compile waits for gcc before the first call runs; on a 4-layer GPT under
`no_grad` that wait is 3.3 s of a 5.7 s first call. For a graph that builds no autograd graph,
carve does not wait:

    torch.compile:  trace, compile (Python), wait for gcc    -> run the compiled graph
    carve:          trace, compile (Python)                   -> run the graph's FX code (its ops,
                                                                 one by one, as eager runs them)
                    later calls: the FX code until every kernel of the graph is built, then the
                    compiled graph, for good

While carve compiles such a graph, Inductor's generated module does not wait for its kernels at
load (`compat.inductor_waits_deferred`): each kernel not yet built is stood in for by a
`PendingKernel` in the module's globals, which a helper thread replaces with the kernel once
its build finishes. A stand-in called before then waits for its build, so the module is safe to
call at any time, by anyone. A graph switches to its compiled code at the first call after all
its kernels are built; if a build fails, the graph runs its FX code for good and carve says so
once.

Which graphs: the Inductor backend, tensors on the CPU, gradients off (`torch.no_grad()`,
`torch.inference_mode()`: generation, evaluation, serving; a training run's values are those
of one compiled program from its first step, whatever the machine's timing), and no op that
draws random numbers (Inductor's random stream is not eager's: a seeded program's draws must
not hang on when gcc finishes). Both ways give eager's answer, to rounding.

The program runs on while gcc builds, so the builds must not take its CPU: on a machine with
as many cores as Inductor has workers, gcc and the program's own threads would share them, and
the program's calls would run slower than eager's until the builds end (1.6x on two cores for a
diffusion model's sampling). The first time carve does not wait, it lowers the CPU priority of
whoever builds Inductor's kernels (`BUILD_NICENESS`, Linux: the threads of Inductor's compile
thread pool, which start gcc, the gcc they run, and Inductor's worker processes): a build then
takes the cores the program leaves idle. A compile torch.compile or carve waits
for is unaffected where the machine is otherwise idle (the waiting program leaves the cores to
gcc); the priority cannot be raised again without privileges, so later compiles on a loaded
machine take longer.

`CARVE_BACKGROUND_KERNELS=0` turns this off (carve waits as torch.compile does);
`carve.wait_for_kernels()` blocks until every kernel started so far is built (a benchmark's
steady state, a server's warm-up).
"""

from __future__ import annotations

import copy
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import torch

from . import compat, cost_check, log

ENABLED = os.environ.get("CARVE_BACKGROUND_KERNELS", "1") != "0"
# The nice value of Inductor's compile workers once carve builds kernels in the background.
BUILD_NICENESS = 10

_unbuilt_lock = threading.Lock()
_unbuilt: set["PendingKernel"] = set()
_queue: "queue.SimpleQueue[PendingKernel]" = queue.SimpleQueue()
_builder: threading.Thread | None = None


class PendingKernel:
    """One kernel of a generated module whose build has not been waited for: stands in for the
    kernel in the module's globals until `build()` puts the kernel there."""

    __slots__ = ("scope", "name", "future", "kernel", "error", "_lock")

    def __init__(self, scope: dict, name: str, future: Any) -> None:
        self.scope = scope
        self.name = name
        self.future = future
        self.kernel: Callable[..., Any] | None = None
        self.error: BaseException | None = None
        self._lock = threading.Lock()

    @property
    def done(self) -> bool:
        return self.kernel is not None or self.error is not None

    def build(self) -> None:
        """Wait for the build (in the helper thread, or in a caller that needs the kernel now)."""
        with self._lock:
            if self.done:
                return
            try:
                kernel = self.future.result()
            except BaseException as error:  # a failed build is the graph's to report, not the thread's
                self.error = error
            else:
                self.scope[self.name] = kernel  # the module's calls find the kernel itself from now on
                self.kernel = kernel
            self.future = None
        with _unbuilt_lock:
            _unbuilt.discard(self)

    def __call__(self, *args: Any) -> Any:
        self.build()
        if self.kernel is None:
            raise RuntimeError(f"carve: building Inductor kernel {self.name} failed") from self.error
        return self.kernel(*args)


def _build_forever() -> None:
    while True:
        _queue.get().build()


def _start_build(kernel: PendingKernel) -> None:
    global _builder
    with _unbuilt_lock:
        _unbuilt.add(kernel)
        if _builder is None:
            # A daemon: a program that ends before its kernels are built does not wait for them.
            _builder = threading.Thread(target=_build_forever, name="carve-kernel-builds", daemon=True)
            _builder.start()
    _queue.put(kernel)


def lower_build_priority() -> None:
    """Lower the CPU priority of whoever builds Inductor's kernels (see the module docstring): the
    threads of Inductor's compile thread pool, which start gcc for each C++ kernel (a gcc started
    later inherits the thread's priority), the builds they have running, and Inductor's worker
    pool processes. The program's own threads are left as they are. Where the system says no
    (no /proc, another platform), nothing changes."""
    threads, processes = compat.inductor_compile_workers()
    for thread in threads:
        _lower(thread)
        processes.extend(_children(os.getpid(), thread))
    for process in processes:
        for pid in _process_tree(process):
            for thread in _threads_of(pid):
                _lower(thread)


def _lower(thread: int) -> None:
    try:
        if os.getpriority(os.PRIO_PROCESS, thread) < BUILD_NICENESS:
            os.setpriority(os.PRIO_PROCESS, thread, BUILD_NICENESS)  # Linux: one thread's nice value
    except OSError:
        pass


def _threads_of(pid: int) -> list[int]:
    try:
        return [int(thread) for thread in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        return []


def _children(pid: int, thread: int) -> list[int]:
    """The processes thread `thread` of process `pid` started (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/task/{thread}/children") as children:
            return [int(child) for child in children.read().split()]
    except (OSError, ValueError):
        return []


def _process_tree(pid: int) -> list[int]:
    """`pid` and its descendants, read from /proc (Linux)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for thread in _threads_of(current):
            todo.extend(_children(current, thread))
    return found


def pending() -> int:
    """How many kernels carve has not waited for are still building."""
    return len(_unbuilt)


def wait_for_kernels() -> None:
    """Block until every Inductor kernel carve started building is built (or has failed): what a
    benchmark's steady state or a server's warm-up waits for. `carve.wait_for_kernels()`."""
    while True:
        with _unbuilt_lock:
            kernels = list(_unbuilt)
        if not kernels:
            return
        for kernel in kernels:
            kernel.build()


class UntilBuilt:
    """A compiled graph whose kernels are still building: runs `eager` (the graph's FX code) until
    they are all built, then `compiled`."""

    __slots__ = ("compiled", "eager", "kernels", "label", "started", "eager_calls")

    def __init__(self, compiled: Callable[..., Any], eager: Callable[..., Any], kernels: list[PendingKernel],
                 label: str) -> None:
        self.compiled: Callable[..., Any] | None = compiled
        self.eager: Callable[..., Any] | None = eager
        self.kernels: list[PendingKernel] | None = kernels
        self.label = label
        self.started = time.perf_counter()
        self.eager_calls = 0

    def __call__(self, *args: Any) -> Any:
        eager = self.eager  # read once: another thread's call may switch meanwhile
        if eager is not None and not self._switch():
            self.eager_calls += 1
            return eager(*args)
        return self.compiled(*args)  # type: ignore[misc]  # set until a failed build's switch

    @property
    def building(self) -> bool:
        return self.kernels is not None

    def _switch(self) -> bool:
        """Whether the compiled graph runs from now on (False: its FX code runs this call)."""
        kernels = self.kernels
        if kernels is None:
            return True  # switched already (by another thread's call)
        if not all(kernel.done for kernel in kernels):
            return False
        failed = next((kernel for kernel in kernels if kernel.error is not None), None)
        if failed is not None:
            self.compiled = self.eager  # before `kernels` is cleared: other threads' calls read that
        self.kernels = None
        self.eager = None  # read by calls only before the switch: free the FX code
        if failed is not None:
            log.log_once(("kernel build", self.label), log.warnings_log, logging.WARNING,
                         "carve: a graph of %s runs its ops one by one: building its Inductor kernel %s failed: "
                         "%s: %s", self.label, failed.name, type(failed.error).__name__, failed.error)
            return True
        log.perf_log.info("a graph of %s runs compiled from now on: its Inductor kernels were built %.1f s after "
                          "its compile, while %d call(s) ran its ops one by one", self.label,
                          time.perf_counter() - self.started, self.eager_calls)
        return True


def off_cpu(values: Iterable[Any]) -> bool:
    """Whether any of `values` is a tensor off the CPU (the host's clock and threads do not see
    a GPU's kernels finish)."""
    return any(isinstance(value, torch.Tensor) and value.device.type != "cpu" for value in values)


def _defers(gm: torch.fx.GraphModule, example_inputs: list) -> bool:
    if not ENABLED or torch.is_grad_enabled() or off_cpu(example_inputs):
        return False
    return not cost_check.draws_random([gm])


def compile_graph(compile_fn: Callable[[Any, list], Callable[..., Any]], gm: torch.fx.GraphModule,
                  example_inputs: list, *, uses_inductor: bool, label: str) -> Callable[..., Any]:
    """`compile_fn(gm, example_inputs)`, not waiting for Inductor's kernel builds when the graph
    qualifies (see the module docstring)."""
    if not uses_inductor or not _defers(gm, example_inputs):
        return compile_fn(gm, example_inputs)
    # The FX code as Dynamo made it: Inductor's passes rewrite `gm` in place.
    eager = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))
    kernels: list[PendingKernel] = []

    def defer(scope: dict, name: str, future: Any) -> None:
        kernel = scope[name] = PendingKernel(scope, name, future)
        kernels.append(kernel)

    with compat.inductor_waits_deferred(defer):
        compiled = compile_fn(gm, example_inputs)
    if not kernels:
        return compiled
    lower_build_priority()  # before the program runs on beside the builds
    for kernel in kernels:
        _start_build(kernel)
    return UntilBuilt(compiled, eager, kernels, label)


__all__ = ["ENABLED", "PendingKernel", "UntilBuilt", "compile_graph", "off_cpu", "pending", "wait_for_kernels"]
