"""`carve.explain(fn, calls=n)`: where the calls' time went, per region (compiled, as Python,
compiling) and between regions, and the advice it gives (compiler/explanation.py)."""

from __future__ import annotations

import contextlib
import io

import pytest
import torch

import carve
from carve.explain_session import RegionTime
from carve.explanation import _advice

model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))


def train(xs, ys, lr):
    total = 0.0
    for x, y in zip(xs, ys):
        loss = ((model(x) - y) ** 2).mean()
        total += loss.item()
        scaled = loss * lr
        print("loss", round(total, 4))
    return scaled, total


def test_the_time_of_n_calls_is_split_by_region_and_the_results_are_eagers():
    xs, ys = [torch.randn(4, 8) for _ in range(3)], [torch.randn(4, 1) for _ in range(3)]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        out = carve.explain(train, calls=4)(xs, ys, 0.5)
    with contextlib.redirect_stdout(io.StringIO()) as printed_eager:
        for _ in range(4):
            expected = train(xs, ys, 0.5)
    assert printed.getvalue() == printed_eager.getvalue()
    torch.testing.assert_close(out.result[0], expected[0])
    assert out.result[1] == pytest.approx(expected[1])
    assert out.calls == 4 and out.seconds > 0
    assert len(out.region_times) == len(out.regions) >= 2
    # Each region ran once per loop step (or once per call), every call counted once.
    assert sorted(times.calls for _, times in out.region_times) in ([4, 12], [12, 12], [4, 12, 12])
    spent = sum(t.compiled + t.python + t.compiling for _, t in out.region_times)
    assert spent <= out.seconds
    assert all(t.compiling > 0 for _, t in out.region_times)  # each compiled on its first call
    text = str(out)
    assert "time over 4 calls:" in text and "Python between regions" in text
    assert all(where in text for where, _ in out.region_times)


def maybe_unbound(x, k):
    for i in range(k):
        t = x * i
    print("k", k)
    return t + 1


def test_a_timed_region_still_raises_eagers_unbound_local_error():
    with contextlib.redirect_stdout(io.StringIO()):
        assert torch.equal(carve.explain(maybe_unbound, calls=2)(torch.ones(2), 2).result, torch.full((2,), 2.0))
        with pytest.raises(UnboundLocalError):
            carve.explain(maybe_unbound)(torch.ones(2), 0)


def test_calls_must_be_a_positive_int():
    for calls in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="calls must be a positive int"):
            carve.explain(train, calls=calls)


def _time(compiled=0.0, python=0.0):
    return RegionTime(calls=10, compiled=compiled, python=python)


def test_advice_names_the_one_region_that_runs_compiled_when_the_rest_runs_as_python():
    timed = [("m.py:3-4", _time(python=0.002)), ("m.py:6-6", _time(compiled=0.050)), ("m.py:8-9", _time(python=0.001))]
    (advice,) = _advice(timed)
    assert advice.startswith("only m.py:6-6 runs compiled (100% of the compiled time)")
    # Two regions with compiled time of their own: the function's compile is worth it.
    timed[0] = ("m.py:3-4", _time(compiled=0.02))
    assert _advice(timed) == []
    # Too few regions to say anything.
    assert _advice(timed[1:]) == []



def scores(critic, x):
    s = critic(x).sum() * 2
    print("score", round(float(s), 3))
    return s


def test_a_region_that_runs_a_model_is_timed_without_the_models_own_regions():
    # The model's regions run inside the caller's region, which runs as Python with the model
    # compiled: each is counted once, so the regions' times add up to no more than the run's,
    # and the caller's region (its pricing call included) counts as Python.
    from tests.runtime.test_compiled_models import Discriminator
    from tests.runtime.test_worth_compiling import priced_backend

    torch.manual_seed(0)
    critic, x = Discriminator(), torch.randn(4, 6)
    with contextlib.redirect_stdout(io.StringIO()):
        out = carve.explain(scores, calls=6, backend=priced_backend())(critic, x)
        expected = scores(critic, x)
    torch.testing.assert_close(out.result, expected)
    spent = sum(t.compiled + t.python + t.compiling for _, t in out.region_times)
    assert spent <= out.seconds
    line = scores.__code__.co_firstlineno + 1
    outer = [t for where, t in out.region_times if where.endswith(f":{line}-{line}")]
    model_regions = [t for where, t in out.region_times if not where.endswith(f":{line}-{line}")]
    assert outer and outer[0].compiled == 0 and outer[0].python > 0, out.region_times
    assert model_regions and all(t.compiled + t.compiling > 0 for t in model_regions), out.region_times
