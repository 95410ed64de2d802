"""`fullgraph=True` is one graph or a GraphBreakError, for every rule that splits a carve graph.

Each case runs the same function under `torch.compile(fullgraph=True)` and
`carve.compile(fullgraph=True)`. Where torch.compile breaks, carve raises too. Where
torch.compile traces what carve's split runs eagerly (a Python side effect, `.nonzero()`)
between graph work, carve captures the whole call with Dynamo and makes the same one graph;
where the eager statement only precedes or follows the graph work, carve's split is one graph
(even where torch.compile cannot trace that statement: `next()` on an input iterator).
"""

from __future__ import annotations

import pytest
import torch
import torch._dynamo

import carve
from carve.rewriters.rules import RULES
from carve.testing import CountingBackend

LOG: list = []


@pytest.fixture(autouse=True)
def fresh():
    torch._dynamo.reset()
    LOG.clear()
    yield
    LOG.clear()


def torch_fullgraph(fn, *args):
    """(result, graphs) under torch.compile(fullgraph=True)."""
    torch._dynamo.reset()
    counter = CountingBackend()
    result = torch.compile(fn, fullgraph=True, backend=counter)(*args)
    return result, counter.graphs


def carve_fullgraph(fn, *args):
    counter = CountingBackend()
    result = carve.compile(fn, fullgraph=True, backend=counter)(*args)
    return result, counter.graphs


# ---- carve splits where torch.compile does not: an error, before anything runs ----------------

def nonzero_between(x):
    y = x * 2
    idx = y.nonzero()
    return y.sum() + idx.sum()


def append_between(x):
    y = x * 2
    LOG.append(1)
    return y + 1


def append_in_loop(x):
    for i in range(4):
        x = x * 2
        LOG.append(i)
    return x


@pytest.mark.parametrize("fn, code", [(nonzero_between, "CRV021"), (append_between, "CRV019"), (append_in_loop, "CRV019")])
def test_what_torch_compile_traces_between_carve_graphs_is_one_graph(fn, code):
    assert not RULES[code].breaks_torch_compile and RULES[code].splits_carve_graph
    x = torch.tensor([1.0, 0.0, 2.0])
    expected, torch_graphs = torch_fullgraph(fn, x)
    torch_log = list(LOG)
    assert torch_graphs == 1  # torch.compile traces it: not a torch graph break
    for _ in range(2):
        LOG.clear()
        result, graphs = carve_fullgraph(fn, x)
        assert torch.equal(result, expected) and graphs == 1 and LOG == torch_log
    # Without fullgraph the same function runs, split around the statement, as eager does.
    assert torch.equal(carve.compile(fn, backend="eager")(x), expected)


# ---- both break: both raise -------------------------------------------------------------------

def print_between(x):
    y = x * 2
    print("y", y)
    return y + 1


def explicit_break(x):
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1


@pytest.mark.parametrize("fn, code", [(print_between, "CRV003"), (explicit_break, "CRV001")])
def test_a_torch_graph_break_is_an_error_in_both(fn, code):
    x = torch.ones(3)
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch_fullgraph(fn, x)
    with pytest.raises(carve.GraphBreakError) as info:
        carve_fullgraph(fn, x)
    assert info.value.code == code and RULES[code].breaks_torch_compile


def item_between(x):
    y = x * 2
    z = y.sum().item()
    return y + z


def test_item_is_an_error_for_carve_which_splits_there():
    x = torch.ones(3)
    with pytest.raises(carve.GraphBreakError) as info:
        carve_fullgraph(item_between, x)
    assert info.value.code == "CRV004"


# ---- one graph in both -----------------------------------------------------------------------

def append_after(x):
    y = x * 2
    LOG.append(1)
    return y


def append_in_python_branch(x, flag):
    y = x * 2
    if flag:
        LOG.append(1)
    return y + 1


def test_an_eager_statement_after_the_graph_work_leaves_one_graph():
    x = torch.ones(3)
    expected, torch_graphs = torch_fullgraph(append_after, x)
    assert (torch_graphs, LOG) == (1, [1])
    LOG.clear()
    result, graphs = carve_fullgraph(append_after, x)
    assert torch.equal(result, expected) and graphs == 1 and LOG == [1]


@pytest.mark.parametrize("flag", [False, True])
def test_a_side_effect_in_a_branch_kept_in_the_graph_is_not_an_error(flag):
    x = torch.ones(3)
    expected, torch_graphs = torch_fullgraph(append_in_python_branch, x, flag)
    torch_log = list(LOG)
    LOG.clear()
    result, graphs = carve_fullgraph(append_in_python_branch, x, flag)
    assert torch.equal(result, expected) and graphs == torch_graphs == 1
    assert LOG == torch_log == ([1] if flag else [])


def next_then_add(xs):
    a = next(xs)
    b = next(xs)
    return a + b


def test_eager_statements_before_the_graph_work_leave_one_graph():
    # torch.compile cannot call next() on an input iterator; carve runs it ahead of the graph.
    xs = [torch.tensor(1.0), torch.tensor(2.0)]
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch_fullgraph(next_then_add, iter(xs))
    result, graphs = carve_fullgraph(next_then_add, iter(xs))
    assert torch.equal(result, torch.tensor(3.0)) and graphs == 1


# ---- the rule properties ---------------------------------------------------------------------

def test_every_rule_that_breaks_torch_compile_splits_a_carve_graph():
    # CRV027 is a break no tensor operation precedes: there is no graph yet to split.
    for rule in RULES.values():
        if rule.breaks_torch_compile and rule.code != "CRV027":
            assert rule.splits_carve_graph, rule.code


def test_carve_only_splits_are_not_reported_by_lint_by_default():
    carve_only = {code for code, rule in RULES.items() if rule.splits_carve_graph and not rule.breaks_torch_compile}
    assert {"CRV014", "CRV019", "CRV021"} <= carve_only
    assert not any(RULES[code].lint_default for code in ("CRV014", "CRV019", "CRV021"))



def _breaks_between_graph_work(t):
    y = t.sin()
    torch._dynamo.graph_break()
    return y.cos()


def test_a_refusal_is_caught_as_torch_compiles_is():
    """Code written for torch.compile catches a fullgraph refusal as Dynamo's Unsupported (PyTorch's
    own tests do: `with self.assertRaises(Unsupported)`); carve's GraphBreakError is one."""
    t = torch.randn(2)
    caught = {}
    for name, compile_fn in (("torch.compile", torch.compile), ("carve", carve.compile)):
        compiled = compile_fn(_breaks_between_graph_work, backend="eager", fullgraph=True)
        with pytest.raises(torch._dynamo.exc.Unsupported) as error:
            compiled(t)
        caught[name] = error.value
    assert isinstance(caught["carve"], carve.GraphBreakError)
    assert f"{__file__}:" in str(caught["carve"])  # names the user's file and line


PULLED: list = []


def _pulls_then_adds(it, x):
    a = next(it)
    PULLED.append(a)
    return x + a


def test_explain_reports_the_split_that_ran_when_dynamo_refuses_the_whole_call():
    """Dynamo refuses `next()` on an input iterator; carve's one-graph split runs the call, and
    carve.explain reports that split (one graph, no break), not the refused whole-call capture."""
    PULLED.clear()
    x = torch.randn(3)
    out = carve.explain(_pulls_then_adds, fullgraph=True)(iter([2.0]), x)
    torch.testing.assert_close(out.result, x + 2.0)
    assert PULLED == [2.0]  # the iterator was pulled once
    assert (out.graph_count, out.graph_break_count) == (1, 0)
    assert len(out.regions) == 1 and "the whole call" not in out.regions[0]
