"""Patterns of public training scripts (tests/real_scripts/) that carve's split once got wrong
or slow, each compared with eager on the `eager` and `aot_eager` backends:

- a loop over a tensor's pieces that builds a list (`outputs += [output]`) is one graph, as
  torch.compile's unrolled loop (pytorch/examples' time-sequence model);
- a `global` (or `nonlocal`) name written in a branch a region keeps: the region function
  declares it, as the user's function does (nanoGPT's `running_mfu`);
- a list an episode loop grows, then stacked or made a tensor: read by Python, not by a region
  that Dynamo would compile again for every new length (actor-critic, REINFORCE);
- `returns.insert(0, R)` on a name that later holds a tensor is a list update, never tensor work;
- an `if`/`else` whose every branch breaks (`loss_ema` from `loss.item()` either way) keeps its
  control flow in Python;
- an optimizer made in the function is an object, not a tensor: its `zero_grad()` and `step()`
  stay Python statements.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
import torch

import carve
from carve.api import compiled_function_of
from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.hoist import Hoister
from carve.rewriters.partition import GraphRun, partition_block
from carve.rewriters.tensors import TensorInference
from carve.rewriters.walk import import_table
from carve.testing import CountingBackend

BACKENDS = ["eager", "aot_eager"]

steps_logged = 0


def log_every_other(x, log):
    global steps_logged
    y = x.sin() * 2
    if log:
        steps_logged = steps_logged + 1
    return y.cos() + steps_logged


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_written_in_a_branch_of_a_region_is_the_modules_global(backend):
    global steps_logged
    compiled = carve.compile(log_every_other, backend=backend)
    x = torch.randn(5)
    expected = []
    steps_logged = 0
    for log in (True, False, True, True):
        expected.append((log_every_other(x, log), steps_logged))
    steps_logged = 0
    for log, (value, count) in zip((True, False, True, True), expected):
        torch.testing.assert_close(compiled(x, log), value)
        assert steps_logged == count
    assert "global steps_logged" in compiled_function_of(compiled).generated_source.split("def __carve_compiled__")[0]


def counting_closure():
    count = 0

    def step(x, log):
        nonlocal count
        y = x.sin() * 2
        if log:
            count = count + 1
        return y.cos() + count

    return step, lambda: count


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_nonlocal_written_in_a_branch_of_a_region_is_the_enclosing_functions(backend):
    eager_step, eager_count = counting_closure()
    step, count = counting_closure()
    compiled = carve.compile(step, backend=backend)
    x = torch.randn(5)
    for log in (True, False, True, True):
        torch.testing.assert_close(compiled(x, log), eager_step(x, log))
        assert count() == eager_count()


def finish_episode(rewards, saved, gamma=0.99):
    R = 0
    policy_losses = []
    returns = []
    for r in rewards[::-1]:
        R = r + gamma * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-6)
    for (log_prob, value), R in zip(saved, returns):
        advantage = R - value.item()
        policy_losses.append(-log_prob * advantage)
    loss = torch.stack(policy_losses).sum()
    loss.backward()
    return loss.detach()


def episodes() -> list:
    """Eight episodes of different lengths: (weight, rewards, saved (log_prob, value) pairs)."""
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(3, generator=generator, requires_grad=True)
    made = []
    for length in (5, 9, 3, 12, 7, 4, 10, 6):
        states = torch.randn(length, 3, generator=generator)
        saved = [(torch.log_softmax(state * weight, 0)[0], (state * weight).sum()) for state in states]
        made.append((weight, [float(r) for r in torch.rand(length, generator=generator)], saved))
    return made


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_an_episode_grows_are_read_by_python_not_by_a_graph_per_length(backend):
    counting = CountingBackend(backend)
    compiled = carve.compile(finish_episode, backend=counting)
    for (weight, rewards, saved), (weight_again, rewards_again, saved_again) in zip(episodes(), episodes()):
        torch.testing.assert_close(compiled(rewards, saved), finish_episode(rewards_again, saved_again))
        torch.testing.assert_close(weight.grad, weight_again.grad)
    # A few graphs (a second once sizes turn dynamic), not one for each of the 8 episode lengths.
    assert counting.graphs <= 4
    source = compiled_function_of(compiled).generated_source.split("def __carve_compiled__")[1]
    assert "returns = torch.tensor(returns)" in source
    assert "loss = torch.stack(policy_losses).sum()" in source


def partitioned(source: str) -> list:
    """The partition of the function in `source`, each item as (kind, its first line of source)."""
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    items = partition_block(function.body, analyze_function(function, ModuleContext(module)))
    def first_line(statement: cst.CSTNode) -> str:
        return cst.Module([]).code_for_node(statement).strip().splitlines()[0]

    return [("graph", "; ".join(first_line(s) for s in item.statements)) if isinstance(item, GraphRun)
            else ("python", first_line(item.statement)) for item in items]


def test_a_read_of_a_list_an_episode_grows_stays_python_and_the_tensor_it_makes_does_not():
    assert partitioned("""
        import torch
        def f(rewards, x):
            returns = []
            for r in rewards:
                returns.insert(0, r * 2)
            returns = torch.tensor(returns)
            returns = (returns - returns.mean()) / returns.std()
            return returns * x
    """)[2:] == [("python", "returns = torch.tensor(returns)"),
                 ("graph", "returns = (returns - returns.mean()) / returns.std(); return returns * x")]


def test_a_list_a_fixed_loop_grows_is_graph_work():
    assert partitioned("""
        import torch
        def f(x):
            outs = []
            for i in range(4):
                outs.append(x * i)
                print(i)
            return torch.stack(outs).sum()
    """)[-1] == ("graph", "return torch.stack(outs).sum()")


def test_an_if_whose_every_branch_breaks_keeps_python_control_flow_and_one_that_may_not_break_does_not():
    both = partitioned("""
        def f(loss, ema):
            if ema is None:
                ema = loss.item()
            else:
                ema = 0.9 * ema + 0.1 * loss.item()
            return ema
    """)
    assert both[0][0] == "python"
    one = partitioned("""
        def f(loss, ema):
            y = loss * 2
            if ema is None:
                ema = loss.item()
            return y
    """)
    assert one == [("graph", "y = loss * 2; if ema is None:; return y")]


class Sequence(torch.nn.Module):
    """pytorch/examples' time_sequence_prediction model, smaller."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm1 = torch.nn.LSTMCell(1, 8)
        self.linear = torch.nn.Linear(8, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 8)
        c_t = torch.zeros(input.size(0), 8)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        for i in range(future):
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            output = self.linear(h_t)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_loop_over_a_tensors_pieces_building_a_list_is_one_graph(backend):
    torch.manual_seed(0)
    model, twin = Sequence(), Sequence()
    twin.load_state_dict(model.state_dict())
    counting = CountingBackend(backend)
    compiled = carve.compile(model, backend=counting)
    x = torch.randn(3, 12)
    for future in (0, 0, 4, 0):
        out, expected = compiled(x, future=future), twin(x, future=future)
        torch.testing.assert_close(out, expected)
        out.sum().backward()
        expected.sum().backward()
        torch.testing.assert_close(model.linear.weight.grad, twin.linear.weight.grad)
    counting.reset_counts()
    compiled(x)
    assert counting.calls == 1  # the 12 steps in one graph, not one graph call per step


def hoisted(source: str, index: int):
    """The hoisting of the second statement of the `index`-th statement (a loop) of the function in `source`."""
    module = cst.parse_module(textwrap.dedent(source))
    function = next(node for node in module.body if isinstance(node, cst.FunctionDef))
    imports = import_table(module)
    loop = function.body.body[index]
    return Hoister(TensorInference(function, imports), imports).hoist_statement(loop.body.body[1])


def test_a_list_update_is_never_hoisted_as_tensor_work():
    assert hoisted("""
        import torch
        def f(rewards):
            returns = []
            for r in rewards:
                R = r * 2
                returns.insert(0, R)
            returns = torch.tensor(returns)
            return returns
    """, 1) is None


def running_average(model, x, loss_ema):
    loss = model(x).pow(2).mean()
    loss.backward()
    if loss_ema is None:
        loss_ema = loss.item()
    else:
        loss_ema = 0.95 * loss_ema + 0.05 * loss.item()
    return loss_ema


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_if_whose_every_branch_breaks_stays_python_and_compiles_once(backend):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    twin = torch.nn.Linear(4, 1)
    twin.load_state_dict(model.state_dict())
    counting = CountingBackend(backend)
    compiled = carve.compile(running_average, backend=counting)
    ema = twin_ema = None
    for step in range(6):
        x = torch.randn(8, 4)
        ema, twin_ema = compiled(model, x, ema), running_average(twin, x, twin_ema)
        assert ema == pytest.approx(twin_ema, rel=1e-6)
        torch.testing.assert_close(model.weight.grad, twin.weight.grad)
    assert counting.graphs == 1  # the forward, once: no recompile for each new average


def train_with_own_optimizer(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        optimizer.step()
        print("loss", round(loss.item(), 4))
    return model.weight.detach().clone()


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_optimizer_made_in_the_function_steps_as_python(backend, capsys):
    torch.manual_seed(0)
    model, twin = torch.nn.Linear(4, 1), torch.nn.Linear(4, 1)
    twin.load_state_dict(model.state_dict())
    batches = [torch.randn(8, 4) for _ in range(3)]
    compiled = carve.compile(train_with_own_optimizer, backend=backend)
    torch.testing.assert_close(compiled(model, batches), train_with_own_optimizer(twin, batches))
    printed = capsys.readouterr().out.splitlines()
    assert printed[:3] == printed[3:]
    rewritten = compiled_function_of(compiled).generated_source.split("def __carve_compiled__")[1]
    assert "        optimizer.step()" in rewritten and "        optimizer.zero_grad()" in rewritten


def sample_like(x_gen):
    x_real = torch.Tensor(x_gen.shape)      # the diffusion script's evaluation: a tensor of x_gen's shape
    x_real.fill_(1.0)
    sizes = x_gen.size()
    buffer = torch.FloatTensor(sizes).zero_()
    return torch.cat([x_gen * 2, x_real, buffer + torch.Tensor([1.0, 2.0])[0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_legacy_constructor_of_a_shape_runs_as_python(backend):
    """torch 2.13's Dynamo reads `torch.Tensor(size)` as data (a tensor of the shape's numbers):
    carve keeps it out of its regions (CRV028) and gives eager's tensors."""
    x = torch.randn(4, 3)
    expected = sample_like(x)
    compiled = carve.compile(sample_like, backend=backend)
    for shape in [(4, 3), (4, 3), (5, 3)]:
        x = torch.randn(*shape)
        assert torch.equal(compiled(x), sample_like(x))
    assert expected.shape == (12, 3)
    region_defs = compiled_function_of(compiled).generated_source.split("def __carve_compiled__")[0]
    assert "torch.Tensor(x_gen.shape)" not in region_defs and "torch.FloatTensor(sizes)" not in region_defs
