"""A region that runs its models compiled finds them where its first call met them, on every
call (runtime/model_seats.py): a function that builds its model, trains it and samples from it,
called again, runs each new model compiled, and its values equal eager's.

    def train_and_sample(seed):
        model = Wrapper(Denoiser())       # a new model on every call
        for x in batches:
            loss = model(x)               # the model: the region's argument
            ...
        sample = model.sample(x)          # the region runs model.net: a submodule of its argument
"""

from __future__ import annotations

import contextlib
import io

import torch
from torch import nn
from torch.nn import functional as F

import carve
from carve.api import compiled_function_of
from carve.testing import graphs_run_by
from tests.runtime.test_compiled_models import MODEL_REASON, assert_left_as_written
from tests.runtime.test_worth_compiling import priced_backend


class Denoiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.out = nn.Linear(16, 6)

    def forward(self, x):
        return self.out(torch.tanh(self.inp(x)))


class Wrapper(nn.Module):
    """The diffusion script's DDPM in small: a training forward, and sampling that calls the
    network it wraps."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return F.mse_loss(self.net(x * 0.5), x)

    def sample(self, x):
        for _ in range(3):
            x = x - 0.1 * self.net(x)
        return x


BATCHES = [torch.linspace(-1, 1, 24).reshape(4, 6) * (i + 1) for i in range(3)]
SHARED = Denoiser()


def train_and_sample(seed):
    torch.manual_seed(seed)
    model = Wrapper(Denoiser())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in BATCHES:
        optimizer.zero_grad()
        loss = model(x)
        loss.backward()
        print("loss", round(loss.item(), 5))
        optimizer.step()
    with torch.no_grad():
        sample = model.sample(BATCHES[0])
    print("sample", round(float(sample.sum()), 4))
    return loss.detach(), sample, [p.detach().clone() for p in model.parameters()]


def denoise_shared(x):
    y = SHARED(x)
    print("y", round(float(y.sum()), 4))
    return y


def run_both(fn, compiled, *args):
    with contextlib.redirect_stdout(io.StringIO()) as got_out:
        got = compiled(*args)
    with contextlib.redirect_stdout(io.StringIO()) as want_out:
        want = fn(*args)
    torch.testing.assert_close(got, want)
    assert got_out.getvalue() == want_out.getvalue()


def test_a_model_built_in_each_call_runs_compiled_in_each_call():
    backend = priced_backend()
    compiled = carve.compile(train_and_sample, backend=backend)
    for seed in range(4):
        calls = backend.calls
        run_both(train_and_sample, compiled, seed)
        if seed >= 1:  # from the call after the pricing one: both models of the call run compiled
            assert backend.calls > calls, f"call {seed}: no compiled graph ran"
    model_regions = [region for region in compiled_function_of(compiled).regions
                     if region.eager_reason and MODEL_REASON in region.eager_reason]
    assert len(model_regions) == 2  # `loss = model(x)` and `sample = model.sample(...)`
    views = [view for region in model_regions for view in region.compiled_models]
    assert {type(view).__name__ for view in views} == {"Wrapper", "Denoiser"}
    assert all(graphs_run_by(region) for region in model_regions)
    # One graph per model class and mode, whatever the number of models built.
    graphs = backend.graphs
    run_both(train_and_sample, compiled, 7)
    assert backend.graphs == graphs


def test_a_global_model_rebound_runs_the_new_model_compiled():
    global SHARED
    backend = priced_backend()
    compiled = carve.compile(denoise_shared, backend=backend)
    x = BATCHES[1]
    saved = SHARED
    try:
        for _ in range(3):
            run_both(denoise_shared, compiled, x)
        torch.manual_seed(5)
        SHARED = Denoiser()  # the global rebound: the region finds the new model
        calls = backend.calls
        run_both(denoise_shared, compiled, x)
        assert backend.calls > calls
        (region,) = [r for r in compiled_function_of(compiled).regions if r.eager_reason and MODEL_REASON in r.eager_reason]
        assert [type(view).__name__ for view in region.compiled_models] == ["Denoiser"]
        assert_left_as_written(SHARED)
        SHARED = nn.Identity()  # not a module of the priced class: runs as written
        run_both(denoise_shared, compiled, x)
    finally:
        SHARED = saved
