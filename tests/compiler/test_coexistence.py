"""carve next to the tools people run, and the objects compiled code makes.

A profiler or a tracer active during a first call keeps working and is restored exactly;
objects built by compiled code are new on every call, as eager builds them; a function whose
regions cannot all be captured settles: repeated calls with the same inputs compile nothing
more. Every result is compared with eager.
"""

from __future__ import annotations

import cProfile
import dataclasses
import io
import pstats
import sys
from typing import NamedTuple

import torch

import carve
from carve.testing import CountingBackend


def with_print(x):
    y = x.sin() * 2
    print("rows", y.shape[0])
    return y.cos() + 1


def closed(x):
    return x.relu() * 3 - 1


def test_cprofile_active_during_the_first_call(capsys):
    for fn in (with_print, closed):
        compiled = carve.compile(fn, backend="eager")
        x = torch.randn(4)
        profiler = cProfile.Profile()
        profiler.enable()
        try:
            got = compiled(x)
            assert sys.getprofile() is profiler  # carve never takes the profiler's hook away
        finally:
            profiler.disable()
        assert sys.getprofile() is None
        torch.testing.assert_close(got, fn(x))
        report = io.StringIO()
        pstats.Stats(profiler, stream=report).print_stats()
        assert fn.__name__ in report.getvalue() or "_graph_region_" in report.getvalue()
        torch.testing.assert_close(compiled(x), fn(x))  # and after profiling


def test_sys_settrace_active_during_the_first_call(capsys):
    events = []

    def tracer(frame, event, arg):
        events.append(event)
        return tracer

    for fn in (with_print, closed):
        compiled = carve.compile(fn, backend="eager")
        x = torch.randn(3)
        sys.settrace(tracer)
        try:
            got = compiled(x)
            assert sys.gettrace() is tracer
        finally:
            sys.settrace(None)
        torch.testing.assert_close(got, fn(x))
    assert "call" in events


def test_torch_profiler_active_during_the_first_call():
    compiled = carve.compile(closed, backend="eager")
    x = torch.randn(5)
    with torch.profiler.profile() as profile:
        got = compiled(x)
    torch.testing.assert_close(got, closed(x))
    assert any("relu" in event.key for event in profile.key_averages())


@dataclasses.dataclass
class Output:
    hidden: torch.Tensor
    scores: list


class Pair(NamedTuple):
    first: torch.Tensor
    second: torch.Tensor


def make_objects(x):
    h = x.tanh()
    out = Output(h * 2, [h.sum()])
    pair = Pair(h, h + 1)
    return out, pair, {"mean": h.mean()}


def test_objects_made_in_compiled_code_are_new_on_every_call():
    compiled = carve.compile(make_objects, backend="eager")
    x = torch.randn(4)
    first = compiled(x)
    first[0].scores.append("changed by the caller")
    first[2]["extra"] = 1
    second = compiled(x)
    expected = make_objects(x)
    assert first[0] is not second[0] and first[2] is not second[2]
    assert len(second[0].scores) == 1 and "extra" not in second[2]
    assert type(second[1]) is Pair
    torch.testing.assert_close(second[0].hidden, expected[0].hidden)
    torch.testing.assert_close(second[1].second, expected[1].second)
    torch.testing.assert_close(second[2]["mean"], expected[2]["mean"])


def breaks_twice(x, scale):
    y = x * scale
    print("norm", round(float(y.norm()), 3))
    z = y.nonzero()
    return y.sum() + z.float().sum()


def test_repeated_calls_compile_nothing_more(capsys):
    backend = CountingBackend()
    compiled = carve.compile(breaks_twice, backend=backend)
    x = torch.randn(6)
    for _ in range(3):
        torch.testing.assert_close(compiled(x, 2.0), breaks_twice(x, 2.0))
    settled = backend.graphs
    for _ in range(10):
        torch.testing.assert_close(compiled(x, 2.0), breaks_twice(x, 2.0))
    assert backend.graphs == settled and settled >= 1


# A backward that AOT autograd compiles lazily, run inside a running compiled frame, starts a
# compile there: carve's compile callbacks, traced by Dynamo under the lock its compile held,
# hung the process. Each program runs in its own process, with a timeout, so a hang fails.
BACKWARD_IN_A_COMPILED_FRAME = '''
import torch, carve

class Trainer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = torch.nn.Linear(4, 1)
        self.hooks = [self.backward]          # a backward behind a list of callables
    def backward(self, loss):
        loss.backward()
        return loss.detach()

def step(trainer, x):
    loss = (trainer.model(x) ** 2).sum()
    return trainer.hooks[0](loss) * 2

def torch_step(model, x):
    loss = (model(x) ** 2).sum()
    print("loss", round(loss.item(), 4))     # a graph break before the backward
    loss.backward()
    return loss.detach()

compiled, eager = Trainer(), Trainer()
step_compiled = carve.compile(step, backend="aot_eager")
for n in (2, 3, 5, 5):
    x = torch.randn(n, 4)
    torch.testing.assert_close(step_compiled(compiled, x), step(eager, x))
    torch.testing.assert_close(compiled.model.weight.grad, eager.model.weight.grad)
# torch.compile in the same process, after carve compiled something
model = torch.nn.Linear(4, 1)
by_torch = torch.compile(torch_step, backend="aot_eager")
for n in (2, 3):
    by_torch(model, torch.randn(n, 4))
print("finished")
'''


def test_a_backward_compiled_inside_a_running_frame_does_not_hang():
    import subprocess

    done = subprocess.run([sys.executable, "-c", BACKWARD_IN_A_COMPILED_FRAME], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().endswith("finished")
