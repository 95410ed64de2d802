"""Random numbers a compiled function draws in its own code (a training loop's data sampler)
are eager's under Inductor; a dropout layer in a model draws from Inductor's stream, as under
torch.compile (runtime/compat.py `draws_random_outside_modules`)."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

import carve
from carve.runtime import cost_check

# A region's first calls run its Python to price its compile (runtime/cost_check.py); the compiled
# calls come after them.
PRICING = cost_check.PYTHON_FIRST_CALLS


def sample_batch(data, model):
    ix = torch.randint(0, data.size(0) - 4, (3,))          # nanoGPT's get_batch: batch offsets
    noise = torch.randn(3, 4) * 0.1
    offsets = ix.unsqueeze(1) + torch.arange(4)
    x = data[offsets] + noise
    return ix, model(x).sum()


@pytest.mark.inductor
def test_a_data_sampler_in_the_compiled_function_draws_eagers_numbers_under_inductor():
    torch.manual_seed(0)
    data = torch.randn(32)
    model = nn.Linear(4, 2)
    compiled = carve.compile(sample_batch)
    for fn in (sample_batch, compiled):
        torch.manual_seed(1)
        results = [fn(data, model) for _ in range(PRICING + 3)]
        if fn is sample_batch:
            expected = results
    for (ix, out), (want_ix, want_out) in zip(results, expected):
        assert torch.equal(ix, want_ix)
        torch.testing.assert_close(out, want_out)
    assert all(region.graphs for region in compiled.regions)  # the draws ran in Inductor's graphs too


class Noisy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x) * 2


def test_a_dropout_layer_is_not_a_draw_outside_modules():
    from carve.runtime import compat

    gm_module, gm_own = [], []

    def keep(store):
        def backend(gm, example_inputs):
            store.append(gm)
            return gm.forward
        return backend

    model = Noisy().train()
    torch.compile(lambda x: model(x), backend=keep(gm_module))(torch.ones(4))
    torch.compile(lambda x: x + torch.rand(4), backend=keep(gm_own))(torch.ones(4))
    assert not compat.draws_random_outside_modules(gm_module[0])
    assert compat.draws_random_outside_modules(gm_own[0])
