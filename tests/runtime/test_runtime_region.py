"""Differential tests: a GraphRegion returns what the plain function returns, call after call."""

import logging

import pytest
import torch

from carve.runtime import CompileOptions, cost_check
from carve.testing import CountingBackend


def add_mul(x, y):
    z = x + y
    return z * 2, z.sum()


def test_values_equal_eager_and_cache_hits(make_region, backend):
    r = make_region(add_mul, backend)
    for _ in range(3):
        x, y = torch.randn(4, 3), torch.randn(4, 3)
        got, want = r(x, y), add_mul(x, y)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert backend.graphs == 1
    assert backend.calls == 3  # Dynamo runs the graph from the first call
    assert backend.ops_per_graph == [3]


def test_shape_change_recompiles_when_static(make_region, backend):
    r = make_region(add_mul, backend, dynamic=False)
    a = torch.randn(4)
    b = torch.randn(5)
    r(a, a)
    torch.testing.assert_close(r(b, b)[0], add_mul(b, b)[0])
    assert backend.graphs == 2
    r(a, a)
    r(b, b)
    assert backend.graphs == 2 and backend.calls == 4


def test_changed_size_becomes_symbolic_one_graph_serves_all_sizes(make_region, backend, caplog):
    r = make_region(add_mul, backend)
    for n in [4, 5, 7, 12, 33, 6, 4]:
        a, b = torch.randn(n), torch.randn(n)
        for got, want in zip(r(a, b), add_mul(a, b)):
            torch.testing.assert_close(got, want)
    # The static graph of the first size, then one graph with a symbolic size for all others
    # (one only, when Dynamo already saw this code's size change under another region).
    assert backend.graphs <= 2 and r.path == "dynamo"
    assert any("s" in str(node.meta.get("example_value", "")) for node in backend.graph_modules[-1].graph.nodes)


def test_dynamic_true_traces_symbolic_sizes_from_the_first_call(make_region, backend):
    r = make_region(add_mul, backend, dynamic=True)
    for n in [3, 8, 20]:
        a, b = torch.randn(n), torch.randn(n)
        torch.testing.assert_close(r(a, b)[0], add_mul(a, b)[0])
    assert backend.graphs == 1


def test_dtype_change_recompiles(make_region, backend):
    r = make_region(add_mul, backend)
    a = torch.randn(4)
    r(a, a)
    d = a.double()
    out = r(d, d)
    assert out[0].dtype == torch.float64
    assert backend.graphs == 2


def scale(x, s):
    return x * s


def test_python_scalar_change_recompiles_and_bool_is_not_int(make_region, backend):
    r = make_region(scale, backend)
    x = torch.ones(3)
    assert torch.equal(r(x, 2), scale(x, 2))
    assert torch.equal(r(x, 3), scale(x, 3))
    assert backend.graphs == 2
    # True == 1 in Python, but the trace for 1 must not be reused for True.
    r1 = make_region(scale, backend)
    r1(torch.ones(3, dtype=torch.int64), 1)
    out = r1(torch.ones(3, dtype=torch.int64), True)
    assert torch.equal(out, scale(torch.ones(3, dtype=torch.int64), True))
    assert backend.graphs == 4


def test_requires_grad_change_recompiles_and_gradients_flow(make_region, backend):
    r = make_region(scale, backend)
    r(torch.randn(3), 2.0)
    x = torch.randn(3, requires_grad=True)
    out = r(x, 2.0)
    assert backend.graphs == 2
    out.sum().backward()
    assert torch.equal(x.grad, torch.full((3,), 2.0))


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)
        self.register_buffer("offset", torch.ones(3))

    def forward(self, x):
        return torch.relu(self.lin(x)) + self.offset


def net_loss(model, x):
    return (model(x) ** 2).mean()


def test_module_params_lifted_optimizer_updates_seen(make_region, backend):
    torch.manual_seed(0)
    model = Net()
    ref = Net()
    ref.load_state_dict(model.state_dict())
    r = make_region(net_loss, backend)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(4):
        x = torch.randn(5, 4)
        loss, ref_loss = r(model, x), net_loss(ref, x)
        torch.testing.assert_close(loss, ref_loss)
        opt.zero_grad(), ref_opt.zero_grad()
        loss.backward(), ref_loss.backward()
        torch.testing.assert_close(model.lin.weight.grad, ref.lin.weight.grad)
        opt.step(), ref_opt.step()
    assert backend.graphs == 1 and backend.calls == 4  # Dynamo runs the graph from the first call
    # Graph inputs: x plus weight, bias and the buffer, never baked constants.
    assert sum(1 for n in backend.graph_modules[0].graph.nodes if n.op == "placeholder") == 4
    assert not list(backend.graph_modules[0].buffers()) and not list(backend.graph_modules[0].parameters())


def test_module_train_eval_retraces(make_region, backend):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Dropout(0.5))
    r = make_region(net_loss, backend)
    x = torch.randn(3, 4)
    r(model, x)
    model.eval()
    torch.testing.assert_close(r(model, x), net_loss(model, x))
    assert backend.graphs == 2


BIAS = torch.ones(3)


def add_global(x):
    return x + BIAS


def test_rebound_global_tensor_is_seen(make_region, backend):
    global BIAS
    r = make_region(add_global, backend)
    x = torch.zeros(3)
    assert torch.equal(r(x), torch.ones(3))
    BIAS = torch.full((3,), 5.0)
    try:
        assert torch.equal(r(x), torch.full((3,), 5.0))
        assert backend.graphs == 1  # fetched as an input, not baked, not recompiled
        BIAS.add_(1)
        assert torch.equal(r(x), torch.full((3,), 6.0))
    finally:
        BIAS = torch.ones(3)


def test_grad_mode_change_retraces(make_region, backend):
    r = make_region(scale, backend)
    x = torch.randn(3, requires_grad=True)
    assert r(x, 2.0).requires_grad
    with torch.no_grad():
        out = r(x, 2.0)
    assert not out.requires_grad
    assert backend.graphs == 2
    assert r(x, 2.0).requires_grad


def inner_no_grad(x):
    y = x * 2
    with torch.no_grad():
        z = y * 3
    return y + z


def test_no_grad_block_inside_region_is_recorded(make_region, backend):
    r = make_region(inner_no_grad, backend)
    for _ in range(2):
        x = torch.randn(3, requires_grad=True)
        out = r(x)
        out.sum().backward()
        assert torch.equal(x.grad, torch.full((3,), 2.0))  # z contributes no gradient
    assert backend.graphs == 1


def mutate(x, y):
    x.add_(y)
    x[0] = -1.0
    return x * 2


@pytest.mark.parametrize("backend_name", ["counting", "aot_eager"])
def test_inplace_mutation_of_input_matches_eager(make_region, backend_name):
    backend = CountingBackend() if backend_name == "counting" else "aot_eager"
    r = make_region(mutate, backend)
    for _ in range(3):
        x, y = torch.randn(4), torch.randn(4)
        x_ref = x.clone()
        out, want = r(x, y), mutate(x_ref, y)
        assert torch.equal(out, want)
        assert torch.equal(x, x_ref)


def structured(d, xs):
    a = d["a"] * xs[0]
    return {"sum": a + xs[1], "n": len(xs), "pair": (a, xs[1].shape[0])}


def test_pytree_args_and_outputs(make_region, backend):
    r = make_region(structured, backend)
    for _ in range(2):
        d = {"a": torch.randn(3)}
        xs = [torch.randn(3), torch.randn(3)]
        got, want = r(d, xs), structured(d, xs)
        assert got.keys() == want.keys() and got["n"] == 2 and got["pair"][1] == 3
        assert torch.equal(got["sum"], want["sum"]) and torch.equal(got["pair"][0], want["pair"][0])
    assert backend.graphs == 1 and backend.calls == 2  # Dynamo runs the graph from the first call
    r(d, xs + [torch.randn(3)])  # a longer list: new guards
    assert backend.graphs == 2


def test_recompile_limit_runs_eagerly(make_region, backend):
    r = make_region(scale, backend, recompile_limit=2, dynamic=False)
    x = torch.ones(2)
    for s in range(5):
        assert torch.equal(r(x, s), scale(x, s))
    assert backend.graphs == 2
    calls = backend.calls
    assert torch.equal(r(x, 1), scale(x, 1))  # cached entries are still used
    assert backend.calls == calls + 1


def test_changing_int_argument_becomes_symbolic_not_a_recompile_storm(make_region, backend):
    r = make_region(scale, backend, recompile_limit=2)
    x = torch.ones(2)
    for s in range(10):  # a step counter: a new value on every call
        assert torch.equal(r(x, s), scale(x, s))
    # Specialised once, then a symbolic int.
    assert backend.graphs <= 2 and r.path == "dynamo"


def raises_inside(x):
    y = x + 1
    if y.shape[0] > 3:
        raise ValueError("too long")
    return y


def test_exceptions_propagate_like_eager(make_region, backend):
    r = make_region(raises_inside, backend)
    with pytest.raises(ValueError, match="too long"):
        r(torch.randn(5))
    assert torch.equal(r(torch.ones(2)), torch.full((2,), 2.0))
    with pytest.raises(ValueError, match="too long"):
        r(torch.randn(5))


def matmul_fail(x, w):
    return x @ w


def test_runtime_errors_of_compiled_graph_propagate(make_region, backend):
    r = make_region(matmul_fail, backend)
    r(torch.randn(2, 3), torch.randn(3, 4))
    # Same guards hold for shapes (2,3)/(3,4) only; a shape error on new shapes is the user's error.
    with pytest.raises(RuntimeError):
        r(torch.randn(2, 3), torch.randn(4, 4))


def test_compile_failure_falls_back_to_eager_with_a_warning(make_region, caplog):
    def broken(gm, example_inputs):
        raise RuntimeError("backend exploded")
    r = make_region(add_mul, broken)
    x = torch.randn(3)
    with caplog.at_level(logging.WARNING, logger="carve"):
        # its Python first, to price the compile (a backend carve does not know), then the failed compile
        for _ in range(cost_check.PYTHON_FIRST_CALLS + 3):
            assert torch.equal(r(x, x)[0], add_mul(x, x)[0])
    warnings = [rec for rec in caplog.records if "backend exploded" in rec.getMessage()]
    assert len(warnings) == 1
    assert r.path == "eager" and "backend exploded" in r.eager_reason  # the compile was tried, and failed


def test_stats_for_explain(make_region, backend):
    r = make_region(add_mul, backend)
    r(torch.randn(3), torch.randn(3))
    assert len(r.graphs) == 1 and r.ops_per_graph == [3]
    assert len(r.compile_times) == 1 and r.compile_times[0] >= 0
    assert r.guards and any("TENSOR_MATCH" in line and "size=[" in line for line in r.guards[0])
    assert r.break_events == []


def test_region_inside_a_trace_runs_inline(make_region, backend):
    inner = make_region(scale, backend)

    def outer(x):
        return inner(x, 3.0) + 1

    r = make_region(outer, backend)
    x = torch.randn(3)
    assert torch.equal(r(x), x * 3.0 + 1)
    assert torch.equal(r(x), x * 3.0 + 1)
    assert backend.graphs == 1 and backend.ops_per_graph == [2]  # the inner region was traced into outer's graph


def test_compile_options_validation():
    with pytest.raises(TypeError):
        CompileOptions(backend=3)
    with pytest.raises(ValueError):
        CompileOptions(recompile_limit=0)
    assert CompileOptions(backend="eager").backend_name == "eager"


@pytest.mark.inductor
def test_inductor_backend_matches_eager(make_region):
    model = Net()
    r = make_region(net_loss, "inductor")
    for _ in range(cost_check.PYTHON_FIRST_CALLS + 2):  # its Python first, to price the compile
        x = torch.randn(5, 4)
        torch.testing.assert_close(r(model, x), net_loss(model, x))
    assert len(r.graphs) == 1


def aliasing_mutation(a, b):
    a.add_(1)
    return a + b


def test_mutating_graph_guards_against_aliased_inputs(make_region, backend):
    r = make_region(aliasing_mutation, backend)
    x, y = torch.zeros(3), torch.zeros(3)
    r(x, y)
    z = torch.zeros(3)
    z_ref = z.clone()
    assert torch.equal(r(z, z), aliasing_mutation(z_ref, z_ref))  # a and b alias: must not reuse the graph
    assert torch.equal(z, z_ref)
    assert backend.graphs == 2


def uses_random(x):
    import random
    return x * random.random()


def test_python_random_is_not_frozen_into_a_graph(make_region):
    r = make_region(uses_random)
    x = torch.ones(1)
    values = {float(r(x)) for _ in range(5)}
    assert len(values) > 1
    assert r.break_events[0].code in ("CRV015", "CRV017")  # a Python builtin Dynamo skips


def test_reaching_the_recompile_limit_is_said_once(make_region, backend, caplog):
    r = make_region(scale, backend, recompile_limit=2, dynamic=False)
    x = torch.ones(2)
    with caplog.at_level(logging.INFO, logger="carve.recompiles"):
        for s in range(5):
            assert torch.equal(r(x, s), scale(x, s))
    said = [rec.getMessage() for rec in caplog.records if "CRV020" in rec.getMessage()]
    assert len(said) == 1 and "recompile_limit=2" in said[0]


def returns_of(x, rewards):
    returns = torch.tensor(rewards)
    return (x * returns.sum()).sum()


def test_a_region_that_compiles_on_most_calls_runs_as_python_said_once(make_region, backend, caplog):
    """An episode's rewards, a list of a new length on each call: Dynamo guards the length and
    would compile a version per length up to its recompile limit. After CHURN_COMPILES compiles
    on most of its calls the region runs as Python, with eager's values throughout."""
    from carve.runtime.capture_policy import CHURN_COMPILES

    r = make_region(returns_of, backend)
    x = torch.randn(3)
    with caplog.at_level(logging.WARNING, logger="carve"):
        for length in range(1, 12):
            rewards = [float(i) for i in range(length)]
            assert torch.equal(r(x, rewards), returns_of(x, rewards))
    assert backend.graphs == CHURN_COMPILES
    assert r.path == "eager" and "len(rewards) == 1" in r.capture_path.reason
    said = [rec for rec in caplog.records if "runs as Python from now on" in rec.getMessage()]
    assert len(said) == 1 and "CRV020" in said[0].getMessage()


def test_a_region_that_compiles_a_few_versions_early_stays_compiled(make_region, backend):
    """Train and eval, a size made symbolic, a second dtype: four versions in the first calls,
    then many calls that reuse them."""
    r = make_region(add_mul, backend)
    inputs = [(torch.randn(4), torch.randn(4)), (torch.randn(6), torch.randn(6)),
              (torch.randn(6, dtype=torch.float64), torch.randn(6, dtype=torch.float64)),
              (torch.randn(2, 3), torch.randn(2, 3))]
    for call in range(40):
        x, y = inputs[call % len(inputs)] if call < 8 else inputs[call % 2]
        got, want = r(x, y), add_mul(x, y)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert r.path == "dynamo" and backend.calls == 40 - cost_check.SAMPLES  # the cost check's Python turns


def tensor_of_a_deque(x, n):
    import collections

    y = x * 2
    items = collections.deque()
    for i in range(n):
        items.appendleft(float(i))
    return y.sum() + torch.tensor(items).sum()


def test_dynamos_own_error_on_the_regions_frame_runs_it_as_python_said_once(make_region, backend, caplog):
    """torch 2.13's Dynamo raises InternalTorchDynamoError (NotImplementedError) tracing
    `torch.tensor(a_deque)`, before the region runs anything: carve runs it as Python, as eager."""
    r = make_region(tensor_of_a_deque, backend)
    with caplog.at_level(logging.WARNING, logger="carve"):
        for n in (3, 3, 5):
            x = torch.randn(4)
            assert torch.equal(r(x, n), tensor_of_a_deque(x, n))
    assert r.path == "eager" and "torch._dynamo failed to compile it" in r.capture_path.reason
    assert len([rec for rec in caplog.records if "runs eagerly" in rec.getMessage()]) == 1


