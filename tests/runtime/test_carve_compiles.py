"""Which compiles are carve's: Dynamo settings carve wants apply to its compiles only.

(A callee Dynamo fails to compile inside carve's call runs as Python, with `suppress_errors`
on for that compile only: tests/real_scripts, minGPT's trainer, whose callback torch 2.13's
Dynamo fails on.)

carve guards module hooks in its regions (Dynamo's `skip_nnmodule_hook_guards` off while
carve's compile runs); a user's own torch.compile in the same process, called inside or
outside a carve-compiled function, keeps torch's setting.
"""

from __future__ import annotations

import pytest
import torch

import carve


def _recording_backend(seen: list):
    def backend(gm, example_inputs):
        seen.append(torch._dynamo.config.skip_nnmodule_hook_guards)
        return gm.forward

    backend.compiler_name = "eager"  # runs the graph as Dynamo's eager does: compiled from the first call
    return backend


def test_only_carves_compiles_guard_module_hooks():
    torch._dynamo.reset()
    linear = torch.nn.Linear(4, 4)
    carve_seen: list = []
    user_seen: list = []
    users_step = torch.compile(lambda t: linear(t) * 2, backend=_recording_backend(user_seen))

    @carve.compile(backend=_recording_backend(carve_seen))
    def step(x):
        y = linear(x) + 1
        print(y.shape)  # a break: two regions
        return users_step(y) - 1

    x = torch.randn(2, 4)
    torch.testing.assert_close(step(x), linear(linear(x) + 1) * 2 - 1)
    users_step(torch.randn(3, 4))  # the user's torch.compile, outside carve: a new shape, a compile
    default = torch._dynamo.config.skip_nnmodule_hook_guards
    assert carve_seen and all(value is False for value in carve_seen)
    # The user's function called from carve's region is inlined into carve's graph; its own
    # compile outside carve keeps torch's setting.
    assert user_seen and all(value == default for value in user_seen)


def test_a_hook_registered_after_the_first_call_runs_in_a_region():
    torch._dynamo.reset()
    torch.manual_seed(0)
    linear = torch.nn.Linear(4, 4)

    def step(x):
        return linear(x).relu() + 1

    compiled = carve.compile(step, backend="eager")
    x = torch.randn(2, 4)
    for _ in range(3):  # into the steady state
        torch.testing.assert_close(compiled(x), step(x))
    handle = linear.register_forward_hook(lambda module, args, out: out * 10)
    torch.testing.assert_close(compiled(x), step(x))
    handle.remove()
    torch.testing.assert_close(compiled(x), step(x))



def test_the_steady_call_honours_torchs_stance_and_a_raising_graph():
    """A region's steady call enters Dynamo's compiled code itself (compat.dynamo_steady_entry):
    `torch.compiler.set_stance("force_eager")` still runs the region eagerly, and an error raised
    by the compiled graph leaves grad mode and later calls as they were."""
    from carve.testing import CountingBackend

    torch._dynamo.reset()
    backend = CountingBackend()

    def scale(x, w):
        return (x @ w).relu() * 2

    compiled = carve.compile(scale, backend=backend)
    x, w = torch.randn(3, 4), torch.randn(4, 2)
    for _ in range(20):  # past the cost check's timed calls (tests/conftest.py): the steady state
        torch.testing.assert_close(compiled(x, w), scale(x, w))
    assert all(region._steady for region in compiled.regions)  # the path under test
    calls = backend.calls
    with torch.compiler.set_stance("force_eager"):
        torch.testing.assert_close(compiled(x, w), scale(x, w))
    assert backend.calls == calls  # ran eagerly
    torch.testing.assert_close(compiled(x, w), scale(x, w))
    assert backend.calls == calls + 1  # compiled again once the stance is back
    bad = torch.randn(5, 2)  # a new shape: compiled, then the matmul raises as in eager
    with pytest.raises(RuntimeError) as raised:
        compiled(x, bad)
    with pytest.raises(RuntimeError) as expected:
        scale(x, bad)
    assert type(raised.value) is type(expected.value)
    assert torch.is_grad_enabled()
    torch.testing.assert_close(compiled(x, w), scale(x, w))
