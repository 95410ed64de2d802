"""Under no_grad, a graph's Inductor kernels build while the program runs on: its first call does
not wait for gcc, calls until the kernels are built run the graph's ops one by one, and every
call gives eager's answer (runtime/kernel_builds.py).

The builds are held back on purpose (`held_builds`), so which calls run before the switch does
not hang on this machine's gcc."""

from __future__ import annotations

import concurrent.futures
import os
import sys
import copy
import logging
import threading
import time

import pytest
import torch

import carve
from carve.runtime import compat, cost_check, kernel_builds

# A region's first calls run its Python to price its compile (runtime/cost_check.py).
PRICING = cost_check.PYTHON_FIRST_CALLS


@pytest.fixture
def held_builds(monkeypatch):
    """Kernel builds start only at `release()`; the graphs made meanwhile are recorded."""
    held: list = []
    graphs: list = []
    unbuilt: set = set()
    monkeypatch.setattr(kernel_builds, "ENABLED", True)
    monkeypatch.setattr(kernel_builds, "_unbuilt", unbuilt)

    def hold(kernel):
        held.append(kernel)
        unbuilt.add(kernel)

    monkeypatch.setattr(kernel_builds, "_start_build", hold)

    class RecordedUntilBuilt(kernel_builds.UntilBuilt):
        __slots__ = ()

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            graphs.append(self)

    monkeypatch.setattr(kernel_builds, "UntilBuilt", RecordedUntilBuilt)

    class Held:
        kernels = held
        built_graphs = graphs

        @staticmethod
        def release():
            for kernel in held:
                kernel.build()

    return Held


class Net(torch.nn.Module):
    """A module region (Dynamo's capture) that updates buffers under no_grad (training-mode
    batch norm) and mutates its input."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.norm = torch.nn.BatchNorm1d(8)

    def forward(self, x):
        x.mul_(0.5)
        return torch.relu(self.norm(self.lin(x))) * 2 + 1


def _tensors(module):
    return [t.detach().clone() for t in list(module.parameters()) + list(module.buffers())]


@pytest.mark.inductor
def test_module_first_call_does_not_wait_and_every_call_equals_eager(held_builds):
    torch.manual_seed(0)
    net = Net()
    reference = copy.deepcopy(net)
    compiled = carve.compile(net)
    with torch.no_grad():
        for call in range(6):  # a model's forward is compiled from its first call (no pricing calls)
            if call == 3:
                held_builds.release()
            x = torch.randn(4, 8) + call
            x_eager = x.clone()
            out, expected = compiled(x), reference(x_eager)
            assert torch.allclose(out, expected, rtol=1e-4, atol=1e-5)
            assert torch.equal(x, x_eager)  # the input's mutation, both ways
            for got, want in zip(_tensors(net), _tensors(reference)):
                assert torch.allclose(got, want, rtol=1e-4, atol=1e-5)  # running statistics
            if call < 3:
                assert kernel_builds.pending() > 0
    (graph,) = held_builds.built_graphs
    assert graph.eager_calls == 3  # the calls before the release ran the ops one by one
    assert not graph.building


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.scale = 2.0

    def forward(self, x):
        return torch.tanh(self.lin(x)) * self.scale


@pytest.mark.inductor
def test_values_the_graph_reads_change_between_calls_before_and_after_the_switch(held_builds):
    # Weights, an attribute and the batch size change between calls; builds are released half
    # way, and the graphs compiled after that (a new attribute value, a new size) build anew.
    torch.manual_seed(0)
    net = Scaled()
    reference = copy.deepcopy(net)
    compiled = carve.compile(net)
    changes = [
        lambda m: None,
        lambda m: m.lin.weight.add_(0.25),
        lambda m: setattr(m, "scale", -1.5),
        lambda m: None,                        # (the release)
        lambda m: m.lin.bias.mul_(3.0),
        lambda m: setattr(m, "scale", 0.5),
    ]
    with torch.no_grad():
        for call, change in enumerate(changes):  # a model's forward: compiled from its first call
            change(net)
            change(reference)
            if call == 3:
                held_builds.release()
            x = torch.randn(4 + call % 2, 8)
            torch.testing.assert_close(compiled(x), reference(x), rtol=1e-4, atol=1e-5)
    assert held_builds.built_graphs


@pytest.mark.inductor
def test_function_region_switches_after_its_kernels_are_built(held_builds):
    def f(x, w):
        y = (x @ w).sin() * 2
        print("rows", y.shape[0])
        return (y + x).softmax(-1) * 3  # three ops: Inductor's (two would run through aot_eager)

    compiled = carve.compile(f)
    w = torch.randn(16, 16)
    with torch.no_grad():
        first = torch.randn(8, 16)
        for _ in range(PRICING + 1):
            assert torch.allclose(compiled(first, w), f(first, w), rtol=1e-4, atol=1e-6)
        assert held_builds.kernels and kernel_builds.pending() == len(held_builds.kernels)
        w.add_(1.0)  # a value the graph reads changes between calls
        assert torch.allclose(compiled(first, w), f(first, w), rtol=1e-4, atol=1e-6)
        held_builds.release()
        assert kernel_builds.pending() == 0
        for _ in range(2):
            x = torch.randn(8, 16)
            assert torch.allclose(compiled(x, w), f(x, w), rtol=1e-4, atol=1e-6)
    # The regions before and after the print, each run op by op on the two calls before its
    # kernels were built.
    graphs = held_builds.built_graphs
    assert len(graphs) == 2 and all(graph.eager_calls == 2 and not graph.building for graph in graphs)


@pytest.mark.inductor
def test_graphs_that_need_gradients_or_draw_random_numbers_wait_for_their_kernels(held_builds):
    def train(x, w):
        return ((x * w).sin() * 3).sum()

    def sample(x):
        return (x + torch.rand_like(x)).cos()

    w = torch.randn(32, requires_grad=True)
    w_eager = w.detach().clone().requires_grad_()
    x = torch.randn(32)
    compiled_train, compiled_sample = carve.compile(train), carve.compile(sample)
    for _ in range(PRICING + 1):  # compiled on the last call
        compiled_train(x, w).backward()
        train(x, w_eager).backward()
        assert torch.allclose(w.grad, w_eager.grad, rtol=1e-4, atol=1e-6)
        with torch.no_grad():
            compiled_sample(x)
    assert all(region.graphs for function in (compiled_train, compiled_sample) for region in function.regions)
    assert held_builds.kernels == [] and held_builds.built_graphs == []


@pytest.mark.inductor
def test_a_failed_build_leaves_the_graph_running_its_ops_and_says_so_once(held_builds, caplog):
    def f(x):
        return (x.exp() + 1).log() * 2

    compiled = carve.compile(f)
    with torch.no_grad():
        x = torch.randn(64)
        for _ in range(PRICING + 1):
            assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
        for kernel in held_builds.kernels:
            failed = concurrent.futures.Future()
            failed.set_exception(OSError("gcc: internal compiler error"))
            kernel.future = failed
        held_builds.release()
        assert kernel_builds.pending() == 0
        with caplog.at_level(logging.WARNING, logger="carve"):
            for _ in range(3):
                x = torch.randn(64)
                assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
    said = [r.getMessage() for r in caplog.records if "building its Inductor kernel" in r.getMessage()]
    assert len(said) == 1 and "gcc: internal compiler error" in said[0]


@pytest.mark.inductor
def test_turned_off_the_first_call_waits_as_torch_compile_does(held_builds, monkeypatch):
    monkeypatch.setattr(kernel_builds, "ENABLED", False)

    def f(x):
        return x.tanh() * 3 - 1

    with torch.no_grad():
        x = torch.randn(16)
        assert torch.allclose(carve.compile(f)(x), f(x), rtol=1e-5, atol=1e-6)
    assert held_builds.kernels == [] and held_builds.built_graphs == []


def test_a_stand_in_called_before_its_build_waits_for_it_and_then_leaves_the_module():
    future: concurrent.futures.Future = concurrent.futures.Future()
    scope: dict = {}
    kernel = scope["cpp_fused_0"] = kernel_builds.PendingKernel(scope, "cpp_fused_0", future)
    threading.Timer(0.05, future.set_result, args=(lambda a, b: a + b,)).start()
    start = time.perf_counter()
    assert kernel(2, 3) == 5  # blocked until the build finished
    assert time.perf_counter() - start >= 0.04
    assert scope["cpp_fused_0"] is kernel.kernel  # the module calls the kernel itself from now on


def test_a_stand_in_whose_build_failed_raises_when_called():
    future: concurrent.futures.Future = concurrent.futures.Future()
    future.set_exception(OSError("no space left on device"))
    scope: dict = {}
    kernel = scope["k"] = kernel_builds.PendingKernel(scope, "k", future)
    with pytest.raises(RuntimeError, match="building Inductor kernel k failed") as raised:
        kernel()
    assert isinstance(raised.value.__cause__, OSError)
    assert scope["k"] is kernel


def test_wait_for_kernels_blocks_until_every_build_started_is_done(monkeypatch):
    monkeypatch.setattr(kernel_builds, "_unbuilt", set())
    futures = [concurrent.futures.Future() for _ in range(3)]
    scope: dict = {}
    for index, future in enumerate(futures):
        kernel_builds._start_build(kernel_builds.PendingKernel(scope, f"k{index}", future))
    assert kernel_builds.pending() == 3
    for index, future in enumerate(futures):
        threading.Timer(0.02 * (index + 1), future.set_result, args=(index,)).start()
    carve.wait_for_kernels()
    assert kernel_builds.pending() == 0
    assert [scope[f"k{index}"] for index in range(3)] == [0, 1, 2]


@pytest.mark.inductor
def test_a_backend_object_that_says_it_is_inductor_is_compiled_as_inductor(held_builds):
    class CountingInductor:
        """What a benchmark passes to count graphs: torch's own Inductor wrapper says the same."""

        compiler_name = "inductor"

        def __init__(self):
            self.graphs = 0

        def __call__(self, gm, example_inputs):
            from torch._inductor.compile_fx import compile_fx

            self.graphs += 1
            return compile_fx(gm, example_inputs)

    def f(x):
        return (x.cos() + 2).sqrt() * x

    backend = CountingInductor()
    compiled = carve.compile(f, backend=backend)
    with torch.no_grad():
        for _ in range(3):
            x = torch.randn(32)
            assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
        held_builds.release()
        x = torch.randn(32)
        assert torch.allclose(compiled(x), f(x), rtol=1e-5, atol=1e-6)
    assert backend.graphs == 1 and len(held_builds.built_graphs) == 1


@pytest.mark.inductor
def test_the_build_priority_is_lowered_before_the_program_runs_on_beside_the_builds(held_builds, monkeypatch):
    """While the program runs on beside gcc, the builds take the cores it leaves idle."""
    lowered = []
    monkeypatch.setattr(kernel_builds, "lower_build_priority", lambda: lowered.append(len(held_builds.kernels)))

    class Widened(torch.nn.Module):  # a class of its own: no graph of another test's to reuse
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 12)

        def forward(self, x):
            return torch.sigmoid(self.lin(x)) * 3 - 1

    torch.manual_seed(0)
    net = Widened()
    compiled = carve.compile(net)
    with torch.no_grad():
        x = torch.randn(4, 8)
        torch.testing.assert_close(compiled(x), net(x))
        held_builds.release()
        torch.testing.assert_close(compiled(x), net(x))
    assert held_builds.built_graphs, "the graph's kernels were not built in the background"
    assert lowered == [0]  # once, before its builds started


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads processes from /proc")
def test_lowering_the_build_priority_reaches_the_pool_and_every_process_it_started(monkeypatch):
    import subprocess
    import time

    # A stand-in for Inductor's pool: a process with a child of its own, as the sidecar has its
    # workers (and they their gcc).
    child = "import time; time.sleep(60)"
    pool = subprocess.Popen([sys.executable, "-c",
                             f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); "
                             "time.sleep(60)"])
    try:
        deadline = time.monotonic() + 30
        while len(kernel_builds._process_tree(pool.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        processes = kernel_builds._process_tree(pool.pid)
        assert len(processes) == 2
        monkeypatch.setattr(compat, "inductor_compile_workers", lambda: ([], [pool.pid]))
        kernel_builds.lower_build_priority()
        for pid in processes:
            assert os.getpriority(os.PRIO_PROCESS, pid) >= kernel_builds.BUILD_NICENESS
        assert os.getpriority(os.PRIO_PROCESS, 0) < kernel_builds.BUILD_NICENESS  # the program's own
    finally:
        for pid in reversed(kernel_builds._process_tree(pool.pid)):
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        pool.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads threads from /proc")
def test_lowering_the_build_priority_reaches_the_compile_threads_and_the_builds_they_started(monkeypatch):
    """Inductor's compile thread pool starts gcc for each C++ kernel: the pool's threads and the
    processes they started build at the lower priority, the program's own threads do not."""
    import subprocess

    started, stop, worker = threading.Event(), threading.Event(), {}

    def compile_thread():
        worker["thread"] = threading.get_native_id()
        worker["build"] = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        started.set()
        stop.wait(60)

    thread = threading.Thread(target=compile_thread)
    thread.start()
    try:
        assert started.wait(30)
        monkeypatch.setattr(compat, "inductor_compile_workers", lambda: ([worker["thread"]], []))
        kernel_builds.lower_build_priority()
        assert os.getpriority(os.PRIO_PROCESS, worker["thread"]) >= kernel_builds.BUILD_NICENESS
        assert os.getpriority(os.PRIO_PROCESS, worker["build"].pid) >= kernel_builds.BUILD_NICENESS
        assert os.getpriority(os.PRIO_PROCESS, 0) < kernel_builds.BUILD_NICENESS  # this thread: the program's
    finally:
        if "build" in worker:
            worker["build"].kill()
            worker["build"].wait()
        stop.set()
        thread.join()


def test_the_compile_workers_are_read_without_making_a_pool():
    from torch._inductor.async_compile import AsyncCompile

    made = AsyncCompile.pool.cache_info().currsize, AsyncCompile.process_pool.cache_info().currsize
    threads, processes = compat.inductor_compile_workers()
    assert (AsyncCompile.pool.cache_info().currsize, AsyncCompile.process_pool.cache_info().currsize) == made
    assert all(isinstance(thread, int) for thread in threads) and all(isinstance(pid, int) for pid in processes)
