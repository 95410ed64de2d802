"""A region's first calls run its Python, timed; a region no compile could pay for runs as Python
for good, never traced, says so once, and gives eager's answer (runtime/cost_check.py,
`worth_compiling`).

The clock is injected: each reading advances a set step, so a timed call lasts that step and
the decision does not hang on this machine's load."""

import contextlib
import io
import logging

import pytest
import torch

import carve
from carve.runtime import cost_check, log
from carve.testing import CountingBackend
from tests.runtime.test_cost_check import run_both as compare_calls

# A Python call this long or longer is worth an Inductor compile of a few ops (the default run
# of 1,000 calls); one a tenth of it is not.
WORTH = (cost_check.SMALLEST_COMPILE + 10 * cost_check.COMPILE_PER_OP) / 1000


class StepClock:
    def __init__(self, step: float) -> None:
        self.step, self.now = step, 0.0

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.fixture(autouse=True)
def _default_run_length(monkeypatch):
    monkeypatch.setattr(cost_check, "PAYBACK_CALLS", 1000)  # the default (tests/conftest.py prices a long run)


@pytest.fixture
def clock_step(monkeypatch):
    def set_step(step: float) -> None:
        monkeypatch.setattr(cost_check, "clock", StepClock(step))
    return set_step


def add_then_print(x, w):
    y = x * w + 1
    print("total", round(float(y.sum()), 3))
    return y.sin() * 2


def args_of(call):
    torch.manual_seed(call)
    return torch.randn(8), torch.randn(8)


def run_both(fn, compiled, calls, make_args=args_of):
    """Each call compiled and eagerly: results and printed output equal."""
    compare_calls(fn, compiled, make_args, calls)


def priced_backend():
    """Runs graphs as Dynamo's eager backend does, but names no backend carve knows: its compiles
    are priced as Inductor's (cost_check.prices_compiles)."""
    backend = CountingBackend("eager")
    backend.compiler_name = "a kernel compiler"
    return backend


def test_a_region_too_short_to_pay_for_a_compile_is_never_traced_and_says_so_once(clock_step, caplog):
    clock_step(WORTH / 10)
    backend = priced_backend()
    compiled = carve.compile(add_then_print, backend=backend)
    with caplog.at_level(logging.INFO, logger=log.PERF):
        run_both(add_then_print, compiled, 12)
    assert backend.graphs == 0 and backend.calls == 0
    regions = [r for r in compiled.regions if r.eager_reason and "not worth a compile" in r.eager_reason]
    assert len(regions) == 2, [(r.name, r.eager_reason) for r in compiled.regions]
    assert all(not r.compile_times for r in regions)  # Dynamo never traced them
    said = [rec.getMessage() for rec in caplog.records if rec.name == log.PERF]
    about_regions = [message for message in said if message.startswith("region ")]
    assert len(about_regions) == 2 and all("runs as Python" in message and "not worth a compile" in message
                                           for message in about_regions), said
    # Then the function, every region settled as Python, runs as written (compiler/as_written.py).
    assert [message for message in said if message not in about_regions] == [
        f"function add_then_print ({add_then_print.__code__.co_filename}:{add_then_print.__code__.co_firstlineno}) "
        "runs as written from now on: every region runs as Python"], said


def test_a_region_long_enough_is_compiled_after_its_python_calls(clock_step):
    clock_step(WORTH * 2)
    backend = priced_backend()
    compiled = carve.compile(add_then_print, backend=backend)
    run_both(add_then_print, compiled, cost_check.PYTHON_FIRST_CALLS)
    assert backend.graphs == 0  # the first calls ran the Python
    run_both(add_then_print, compiled, 3)
    assert backend.graphs == 2 and backend.calls == 2 * 3
    assert all(r.path == "dynamo" for r in compiled.regions)


def test_the_fastest_of_the_first_calls_decides(monkeypatch):
    # The first call pays for caches and lazy set-up: a long first call and a short second one
    # is a short region.
    readings = iter([0.0, WORTH * 50, 0.0, WORTH / 10] + [float(n) for n in range(1000)])
    monkeypatch.setattr(cost_check, "clock", lambda: next(readings))
    backend = priced_backend()

    def chain(x, w):
        return (x * w + 1).sin()

    compiled = carve.compile(chain, backend=backend)
    run_both(chain, compiled, 4)
    assert backend.graphs == 0
    assert [r.path for r in compiled.regions] == ["eager"]


def test_a_backward_counts_twice_the_forward(clock_step):
    # A region whose results require grad runs a backward too: a third of the threshold is
    # enough; without grad it is not.
    clock_step(WORTH / 2)

    def chain(x, w):
        return (x * w + 1).sin().sum()

    backend = priced_backend()
    compiled = carve.compile(chain, backend=backend)
    run_both(chain, compiled, 4, lambda call: (args_of(call)[0], args_of(call)[1].requires_grad_()))
    assert backend.graphs == 1 and compiled.regions[0].path == "dynamo"
    inference_backend = priced_backend()
    inference = carve.compile(chain, backend=inference_backend)
    run_both(chain, inference, 4)
    assert inference_backend.graphs == 0 and inference.regions[0].path == "eager"


def test_dynamos_capture_backends_compile_from_the_first_call(clock_step):
    # eager and aot_eager are what a user picks to see a capture, from the first call; a compile
    # costs them a trace. Any other backend's compile is priced.
    clock_step(WORTH / 10)

    def chain(x, w):
        return (x * w + 1).sin()

    for backend, first_call_compiles in ((CountingBackend("eager"), True), (CountingBackend("aot_eager"), True),
                                         (CountingBackend(), True), (priced_backend(), False)):
        compiled = carve.compile(chain, backend=backend)
        run_both(chain, compiled, 1)
        assert (backend.graphs == 1) is first_call_compiles, backend.compiler_name
    for name in ("eager", "aot_eager"):
        assert not cost_check.prices_compiles(carve.runtime.CompileOptions(backend=name))
    assert cost_check.prices_compiles(carve.runtime.CompileOptions(backend="inductor"))
    assert cost_check.prices_compiles(carve.runtime.CompileOptions(backend=lambda gm, inputs: gm.forward))


def noisy(x):
    return torch.nn.functional.dropout(x, 0.5, training=True) * 2 + torch.rand(())


def test_a_region_drawing_random_numbers_is_compiled_whatever_its_time(clock_step):
    # Inductor's random stream is not eager's: whether the region runs compiled must not hang on
    # the machine's timing. A backend drawing eager's numbers is decided by its time.
    clock_step(WORTH / 10)
    other_stream = priced_backend()
    other_stream.random_stream = None
    compiled = carve.compile(noisy, backend=other_stream)
    for _ in range(4):
        compiled(torch.ones(16))
    assert other_stream.graphs == 1 and compiled.regions[0].path == "dynamo"
    same_stream = priced_backend()
    weighed = carve.compile(noisy, backend=same_stream)
    for fn in (noisy, weighed):
        torch.manual_seed(0)
        drawn = [fn(torch.ones(16)) for _ in range(4)]
        if fn is noisy:
            expected = drawn
    assert all(torch.equal(got, want) for got, want in zip(drawn, expected))
    assert same_stream.graphs == 0 and weighed.regions[0].path == "eager"


def test_a_break_that_must_raise_is_met_on_the_first_call(clock_step):
    # Under error_on_graph_break the first call is captured, so a break Dynamo finds raises as
    # torch.compile's would, rather than after the Python calls, or never.
    clock_step(WORTH / 10)
    backend = priced_backend()

    def chain(x, w):
        return (x * w + 1).sin()

    compiled = carve.compile(chain, backend=backend)
    with torch._dynamo.error_on_graph_break(True):
        run_both(chain, compiled, 1)
    assert backend.graphs == 1


def test_fullgraph_compiles_on_the_first_call(clock_step):
    clock_step(WORTH / 10)
    backend = priced_backend()

    def chain(x, w):
        return (x * w + 1).sin()

    compiled = carve.compile(chain, backend=backend, fullgraph=True)
    run_both(chain, compiled, 1)
    assert backend.graphs == 1


def test_explain_names_the_regions_not_worth_a_compile(clock_step):
    clock_step(WORTH / 10)
    with contextlib.redirect_stdout(io.StringIO()):
        report = carve.explain(add_then_print, calls=3, backend=priced_backend())(*args_of(0))
    lines = [line for line in str(report).splitlines() if "not worth a compile" in line]
    assert len(lines) == 2, str(report)
    assert all("runs eagerly" in line and "its Python took" in line for line in lines)
    # After one call, before the decision: explain says the region is being priced.
    with contextlib.redirect_stdout(io.StringIO()):
        report = carve.explain(add_then_print, calls=1, backend=priced_backend())(*args_of(0))
    lines = [line for line in str(report).splitlines() if "to price its compile" in line]
    assert len(lines) == 2, str(report)


def test_the_compile_is_priced_by_the_ops_the_python_ran(clock_step):
    # The same time a call, two sizes of graph: a compile of two ops pays over the run, one of
    # thirty (twice the cheapest compile) does not.
    clock_step(0.7 / 1000)

    def two_ops(x, w):
        return (x * w).sin()

    def thirty_ops(x, w):
        for _ in range(15):
            x = (x * w).sin()
        return x

    for fn, compiles in ((two_ops, True), (thirty_ops, False)):
        backend = priced_backend()
        compiled = carve.compile(fn, backend=backend)
        run_both(fn, compiled, 4)
        assert (backend.graphs == 1) is compiles, fn.__name__
    (region,) = compiled.regions
    assert "(30 torch operations)" in region.eager_reason, region.eager_reason


class Scaler(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.ones(8))

    def forward(self, x):
        y = x * self.w + 1
        print("total", round(float(y.sum()), 3))
        return y.sin() * 2


def scale_step(model, x):
    y = x * model.w + 1
    print("total", round(float(y.sum()), 3))
    return y.sin() * 2


@pytest.mark.parametrize("placement", ["the model", "a forward reached from the function"])
def test_a_models_forward_is_compiled_from_the_first_call_and_its_glue_is_priced(clock_step, placement):
    # As torch.compile(model) compiles the model; the same code as a function around the model
    # is glue, priced (too short here, so it runs as Python).
    clock_step(WORTH / 10)
    torch.manual_seed(0)
    model, reference = Scaler(), Scaler()
    backend = priced_backend()
    if placement == "the model":
        compiled = carve.compile(model, backend=backend)
        calls = lambda x: compiled(x)  # noqa: E731
    else:
        compiled_forward = carve.compile(Scaler.forward, backend=backend)
        calls = lambda x: compiled_forward(model, x)  # noqa: E731
    with contextlib.redirect_stdout(io.StringIO()) as got_out:
        got = calls(torch.ones(8))
    with contextlib.redirect_stdout(io.StringIO()) as want_out:
        want = reference(torch.ones(8))
    torch.testing.assert_close(got, want)
    assert got_out.getvalue() == want_out.getvalue()
    assert backend.graphs == 2  # both regions, on the first call
    glue_backend = priced_backend()
    glue = carve.compile(scale_step, backend=glue_backend)
    with contextlib.redirect_stdout(io.StringIO()):
        for _ in range(4):
            torch.testing.assert_close(glue(model, torch.ones(8)), want)
    assert glue_backend.graphs == 0


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = torch.nn.Linear(8, 8)
        self.outer = torch.nn.Linear(8, 8)

    def forward(self, x):
        return self.outer(self.inner(x).relu()).tanh()


def calls_the_model(model, x):
    return model(x) * 2


def mostly_glue(model, x):
    y = model(x)
    for _ in range(6):
        y = (y * 0.5 + 1).sin()
    return y


@pytest.mark.parametrize("fn, compiled_from_call_2", [(calls_the_model, True), (mostly_glue, False)],
                         ids=["calls the model", "mostly glue"])
def test_a_region_that_mostly_runs_a_model_is_compiled_after_one_call(clock_step, fn, compiled_from_call_2):
    # Most of its operations ran inside module calls: torch.compile(model) would compile them too.
    # Mostly glue around a model call: priced (too short here).
    clock_step(WORTH / 10)
    torch.manual_seed(0)
    model = Mlp()
    backend = priced_backend()
    compiled = carve.compile(fn, backend=backend)
    for call in range(4):
        x = torch.randn(2, 8, generator=torch.Generator().manual_seed(call))
        torch.testing.assert_close(compiled(model, x), fn(model, x))
        if call == 1:
            assert (backend.graphs == 1) is compiled_from_call_2
    assert (backend.graphs == 1) is compiled_from_call_2
    assert backend.calls == (3 if compiled_from_call_2 else 0)


OFFSET = 1.0


class Holder:
    scale = 2.0


def reads_state(holder, weights, x):
    y = x * holder.scale + OFFSET + weights[0]
    print("rows", y.shape[0])
    return y.sin() * weights[1]


def test_values_the_region_reads_change_between_every_call_through_pricing_and_compile(clock_step):
    # A global, an attribute, a list's contents and a shape change before every call: the
    # pricing calls (Python), the compile, and the compiled calls after it all give eager's answer.
    global OFFSET
    clock_step(WORTH * 2)
    backend = priced_backend()
    compiled = carve.compile(reads_state, backend=backend)
    holder, weights = Holder(), [torch.ones(()), torch.ones(())]
    saved = OFFSET
    try:
        for call in range(8):
            OFFSET = float(call)
            holder.scale = 0.5 * call
            weights[0] = torch.full((), float(call))
            weights[1] = torch.full((), 1.0 + call)
            x = torch.randn(3 + call % 2, generator=torch.Generator().manual_seed(call))
            with contextlib.redirect_stdout(io.StringIO()) as got_out:
                got = compiled(holder, weights, x)
            with contextlib.redirect_stdout(io.StringIO()) as want_out:
                want = reads_state(holder, weights, x)
            torch.testing.assert_close(got, want)
            assert got_out.getvalue() == want_out.getvalue()
    finally:
        OFFSET = saved
    assert backend.graphs >= 2 and all(r.path == "dynamo" for r in compiled.regions)
