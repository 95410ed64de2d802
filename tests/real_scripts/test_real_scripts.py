"""Public training scripts, decorated as carve's README advises, give eager's results.

Each script in scripts/ (nanoGPT, pytorch/examples, a pytorch tutorial, a diffusion script;
licences in their headers) runs eager and with `carve.compile` on the function holding its
graph breaks (harness.py says which, and what one call runs), three calls each, on the
`aot_eager` backend: printed output, returned values and every parameter and buffer after
each call equal eager's. The graphs carve compiled are reported in the terminal summary.
One case runs nanoGPT's training loop under Inductor.

bench/real_scripts.py times the same scripts against torch.compile on the model.
"""

from __future__ import annotations

import pytest

from tests.real_scripts.conftest import GRAPHS
from tests.real_scripts.harness import CASES, assert_same, run_calls, unload

CALLS = 3

def cases() -> list:
    return [pytest.param(name, id=name) for name in sorted(CASES)]


@pytest.mark.parametrize("name", cases())
def test_carve_on_the_function_holding_the_breaks_equals_eager(name):
    case = CASES[name]
    eager = run_calls(case, "eager", CALLS)
    carved = run_calls(case, "carve", CALLS, backend="aot_eager")
    try:
        assert_same(eager, carved)
        assert carved.graphs > 0, "carve compiled no graph"
        GRAPHS[name] = (CALLS, carved.graphs, carved.graph_calls)
    finally:
        unload(eager)
        unload(carved)


@pytest.mark.inductor
def test_nanogpt_training_loop_under_inductor_equals_eager():
    """Inductor draws random numbers from its own stream, not eager's: the loop's data sampler
    (`torch.randint` in get_batch) would pick other batches. `fallback_random` makes Inductor draw
    eager's, so the comparison is of the computation."""
    case = CASES["nanogpt"]
    eager = run_calls(case, "eager", 2)
    carved = run_calls(case, "carve", 2, backend="inductor", options={"fallback_random": True})
    try:
        assert_same(eager, carved, rtol=1e-3, atol=1e-4)
    finally:
        unload(eager)
        unload(carved)


@pytest.mark.inductor
@pytest.mark.parametrize("name", ["dcgan", "mnist"])
def test_training_scripts_under_inductor_equal_eager(name):
    """Parameters after each call (the gradients the optimizers applied: DCGAN's two optimizers and
    three backward passes, MNIST's Adadelta with dropout) equal eager's under Inductor, the default
    backend, where a wrong gradient can hide from the aot_eager runs above. Inductor draws eager's
    random numbers here (`fallback_random`), so dropout and sampled noise are the same."""
    case = CASES[name]
    eager = run_calls(case, "eager", 2)
    carved = run_calls(case, "carve", 2, backend="inductor", options={"fallback_random": True})
    try:
        assert_same(eager, carved, rtol=1e-3, atol=1e-4)
    finally:
        unload(eager)
        unload(carved)
