"""One graph where torch.compile makes one: code with no graph break on the path
actually taken is not cut into many graphs by carve's static partition.

Each case runs eagerly, under torch.compile and under carve with counting backends; results
(values, prints, exceptions) equal eager's on every call, and carve's graph count is at most
torch.compile's.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn
from torch import no_grad
from torch.nn.attention import SDPBackend, sdpa_kernel

import carve
from carve.runtime import cost_check
from carve.testing import CountingBackend

CALLS = 3


def graph_counts(fn, *args) -> tuple[int, int]:
    """(torch.compile's graphs, carve's graphs) over CALLS calls, each result checked against eager."""
    counts = []
    for make in (lambda f, b: torch.compile(f, backend=b), lambda f, b: carve.compile(f, backend=b)):
        torch._dynamo.reset()
        backend = CountingBackend()
        compiled = make(fn, backend)
        for _ in range(CALLS):
            torch.testing.assert_close(compiled(*args), fn(*args))
        counts.append(backend.graphs)
    return counts[0], counts[1]


def under_no_grad(x):
    with torch.no_grad():
        a = x.sin()
        b = a * 2
        c = b + a
    return c


def under_autocast(x):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = x @ x
        b = a * 2
        c = b + a
    return c


def under_imported_no_grad(x):
    with no_grad():
        a = x.sin()
        b = a * 2
    return b + a


def under_sdpa_kernel(q):
    with sdpa_kernel(SDPBackend.MATH):
        a = torch.nn.functional.scaled_dot_product_attention(q, q, q)
        b = a * 2
    return b + 1


def try_body(x):
    try:
        a = x.sin()
        b = a * 2
        c = b + a
    except ValueError:
        c = x
    return c


def items_loop(d):
    total = 0
    for _, value in d.items():
        total = total + value.sin() * 2
    return total


class Blocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x, verbose=False):
        for block in self.blocks:
            x = block(x)
            if verbose:
                print("block", round(x.sum().item(), 3))
        return x


class Config:
    output_hidden_states = False


class HiddenStates(nn.Module):
    """The shape of a HuggingFace encoder forward: a config flag read in the loop."""

    def __init__(self) -> None:
        super().__init__()
        self.config = Config()
        self.blocks = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))

    def forward(self, x):
        hidden = () if self.config.output_hidden_states else None
        for block in self.blocks:
            if self.config.output_hidden_states:
                hidden = hidden + (x,)
            x = block(x)
        return x, hidden


def test_fragmentation_cases_are_one_graph():
    x = torch.randn(4, 4)
    torch.manual_seed(0)
    cases = {
        "no_grad": (under_no_grad, x),
        "autocast": (under_autocast, x),
        "no_grad imported by name": (under_imported_no_grad, x),
        "sdpa_kernel": (under_sdpa_kernel, torch.randn(1, 2, 4, 8)),
        "try body": (try_body, x),
        "dict items": (items_loop, {"a": x, "b": x * 2}),
        "ModuleList with untaken print": (Blocks(), x),
        "config flag in the loop": (HiddenStates(), x),
    }
    for name, (fn, arg) in cases.items():
        torch_graphs, carve_graphs = graph_counts(fn, arg)
        assert carve_graphs == 1 and torch_graphs == 1, (name, torch_graphs, carve_graphs)


def test_untaken_break_in_a_loop_then_taken_then_not(capsys):
    torch.manual_seed(0)
    model = Blocks()
    backend = CountingBackend()
    compiled = carve.compile(model, backend=backend)
    x = torch.randn(2, 4)
    for call, verbose in enumerate((False, False, True, True, False, True)):
        if call == 1:
            # torch._dynamo.reset() drops Dynamo's compile callbacks, through which carve learns
            # that Dynamo gave up on a region: carve must register them again.
            torch._dynamo.reset()
        expected = model(x, verbose)
        eager_out = capsys.readouterr().out
        got = compiled(x, verbose)
        assert capsys.readouterr().out == eager_out
        torch.testing.assert_close(got, expected)
        if verbose:
            assert eager_out.count("block") == 3
    # The first call with verbose=True made Dynamo give up on the one-graph region; carve then
    # re-split the function with the loop as Python, whose body is still compiled.
    regions = compiled._compiled_forward.regions
    assert regions and all(region.path != "eager" for region in regions)
    calls_before = backend.calls
    compiled(x, False)
    assert backend.calls > calls_before


def try_body_read_by_handler(x, fail):
    a = None
    try:
        a = x.sin()
        b = a.reshape(3, 3) if fail else a * 2
        c = b + 1
    except RuntimeError:
        return ("caught", a)
    return ("done", c)


def try_body_bound_before_raise(x, fail):
    try:
        a = x.sin()
        b = a.reshape(3, 3) if fail else a * 2
    except RuntimeError:
        b = x
    return a, b


def test_try_body_binds_names_as_eager_when_it_raises():
    x = torch.randn(4)
    for fn in (try_body_read_by_handler, try_body_bound_before_raise):
        compiled = carve.compile(fn, backend="eager")
        for fail in (False, True, False, True):
            expected, got = fn(x, fail), compiled(x, fail)
            assert type(got) is type(expected) and len(got) == len(expected)
            for e, g in zip(expected, got):
                if isinstance(e, torch.Tensor):
                    torch.testing.assert_close(g, e)
                else:
                    assert g == e


def try_body_mutates(x, fail):
    try:
        x.mul_(2)
        y = x.reshape(3, 3) if fail else x + 1
    except RuntimeError:
        y = x
    return y


def test_try_body_that_mutates_in_place_keeps_eager_effects():
    for fail in (False, True, True):
        x_eager, x_carve = torch.ones(4), torch.ones(4)
        compiled = carve.compile(try_body_mutates, backend="eager")
        torch.testing.assert_close(compiled(x_carve, fail), try_body_mutates(x_eager, fail))
        torch.testing.assert_close(x_carve, x_eager)


def try_body_logging_handler(x, fail):
    try:
        a = x.sin()
        b = a.reshape(3, 3) if fail else a * 2
    except RuntimeError:
        print("failed, a is", a.shape)
        b = x
    return a, b


def test_try_is_in_one_region_unless_a_part_of_it_breaks(capsys):
    whole = carve.compile(try_body, backend="eager")
    whole(torch.randn(3))
    assert len(whole.regions) == 1  # the try statement, with what surrounds it
    # `except RuntimeError` must see what a graph raises on a later call's data (CRV022): the
    # try stays Python, its body compiled.
    kept = carve.compile(try_body_bound_before_raise, backend="eager")
    kept(torch.randn(4), False)
    assert kept.regions and "    try:\n" in kept.generated_source
    # The handler prints (Python) and reads `a`: the try stays Python and its body is one
    # region per statement, so `a` is bound exactly when eager binds it.
    split = carve.compile(try_body_logging_handler, backend="eager")
    for fail in (False, True):
        x = torch.randn(4)
        expected = try_body_logging_handler(x, fail)
        eager_out = capsys.readouterr().out
        got = split(x, fail)
        assert capsys.readouterr().out == eager_out
        for g, e in zip(got, expected):
            torch.testing.assert_close(g, e)
    assert len(split.regions) >= 2


def collect_stats(x, acc, stats):
    y = x * 2
    acc.append(y.mean() + 1)
    stats["energy"] = (y ** 2).sum()
    return y + 1


def test_tensor_work_in_python_side_effects_runs_in_graphs():
    backend = CountingBackend()
    compiled = carve.compile(collect_stats, backend=backend)
    for n in (3, 3, 5):
        x = torch.randn(n)
        acc_eager, stats_eager, acc_carve, stats_carve = [], {}, [], {}
        torch.testing.assert_close(compiled(x, acc_carve, stats_carve), collect_stats(x, acc_eager, stats_eager))
        torch.testing.assert_close(acc_carve, acc_eager)
        torch.testing.assert_close(stats_carve, stats_eager)
    source = compiled.generated_source
    # The list append and the dict store are graph work, in one region (Dynamo replays them on
    # the real list and dict).
    assert "acc.append(y.mean() + 1)" in source and 'stats["energy"] = (y ** 2).sum()' in source, source
    assert len(compiled.regions) == 1
    graph_ops = {node.target.__name__ if callable(node.target) else node.target
                 for gm in backend.graph_modules for node in gm.graph.nodes if node.op != "placeholder"}
    assert {"mean", "sum"} <= graph_ops, graph_ops


def maybe_logs(x, verbose=False):
    y = x.sin()
    if verbose:
        print("y", y)
    return y * 2


def test_fullgraph_accepts_a_break_in_an_untaken_branch_as_torch_compile_does(capsys):
    by_torch = torch.compile(maybe_logs, backend="eager", fullgraph=True)
    backend = CountingBackend()
    compiled = carve.compile(maybe_logs, backend=backend, fullgraph=True)
    x = torch.randn(3)
    torch.testing.assert_close(by_torch(x), maybe_logs(x))
    for _ in range(2):
        torch.testing.assert_close(compiled(x), maybe_logs(x))
    assert backend.graphs == 1
    with pytest.raises(torch._dynamo.exc.Unsupported):
        by_torch(x, True)
    with pytest.raises(carve.GraphBreakError) as raised:
        compiled(x, True)
    assert raised.value.lineno == maybe_logs.__code__.co_firstlineno + 3
    assert capsys.readouterr().out == ""  # the print never ran


def promoted_add(x, y):
    if x.dtype == torch.promote_types(x.dtype, y.dtype) and torch.can_cast(y.dtype, x.dtype):
        return x + y
    return x - y.to(x.dtype)


def test_dtype_arithmetic_is_not_a_tensor_condition():
    # torch.promote_types / can_cast answer with a dtype and a bool: the `if` tests Python
    # values, not a tensor's data, so fullgraph is one graph, as under torch.compile.
    backend = CountingBackend()
    compiled = carve.compile(promoted_add, backend=backend, fullgraph=True)
    for y_dtype in (torch.float16, torch.float64):
        x, y = torch.ones(3), torch.full((3,), 2.0, dtype=y_dtype)
        torch.testing.assert_close(compiled(x, y), promoted_add(x, y))
    assert backend.graphs == 2  # one graph per dtype of y, no break


# -- functions nothing in which breaks torch.compile: captured whole, one frame ----------------------

class Marker:
    pass


def python_between_tensor_statements(a, b):
    v = a + b
    if Marker != None:  # noqa: E711 - Python the split would keep between graphs
        v = v.sin()
    scratch = v * 2
    del scratch
    out = (v,)
    out += (v - a,)
    return out


def closure_and_builtins(a, b):
    def add(x):
        return x + b

    return sum(map(add, [a, a * 2]))


def side_effect_between(a, log):
    y = a.cos()
    log.append(len(log))
    return y + 1


@pytest.mark.parametrize("fn, args", [
    (python_between_tensor_statements, (torch.randn(4), torch.randn(4))),
    (closure_and_builtins, (torch.randn(4), torch.randn(4))),
], ids=["python-statements", "closure-and-builtins"])
def test_a_function_torch_compile_does_not_break_is_one_frame(fn, args):
    """carve's split would make several graphs (or none) of these; Dynamo on the whole call makes
    torch.compile's one, and carve.explain says so."""
    assert graph_counts(fn, *args) == (1, 1)
    out = carve.explain(fn)(*args)
    assert out.graph_count == 1 and out.graph_break_count == 0
    assert [line.split(" captured by ")[1] for line in out.regions] == ["Dynamo (the whole call is one region)"]


def test_side_effects_of_a_whole_call_happen_on_every_call_in_order():
    compiled = carve.compile(side_effect_between, backend="eager")
    log, expected = [], []
    for _ in range(3):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x, log), side_effect_between(x, expected))
    assert log == expected == [0, 1, 2]


def steps(x, n):
    for _ in range(n):
        x = x * 0.5 + 1
    return x


def test_a_loop_with_a_changing_trip_count_keeps_carves_split():
    """Nothing breaks torch.compile here, but Dynamo unrolls the loop into a graph per `n`; carve
    keeps the loop Python and compiles its body once."""
    backend = CountingBackend()
    compiled = carve.compile(steps, backend=backend)
    for n in (2, 3, 5, 8, 1):
        x = torch.randn(3)
        torch.testing.assert_close(compiled(x, n), steps(x, n))
    assert backend.graphs == 1


LAYERS = 3


def fixed_trip_counts(x, y):
    r = x + y
    for _ in range(x.size(0) + 2):  # fixed by a shape
        r = r / y
    for _ in range(LAYERS):  # fixed by the program
        r = r * 1.5
    return r


def test_a_loop_with_a_fixed_trip_count_is_unrolled_into_one_graph_as_torch_compile_does():
    """A trip count fixed by a shape or a module constant is Dynamo's to unroll: one graph, where
    carve's split would call each loop body's graph on every trip (6 graphs here)."""
    global LAYERS
    backend = CountingBackend()
    compiled = carve.compile(fixed_trip_counts, backend=backend)
    for size, layers in ((3, 3), (3, 3), (5, 3), (5, 2)):
        LAYERS = layers
        x, y = torch.randn(size), torch.rand(size) + 1
        torch.testing.assert_close(compiled(x, y), fixed_trip_counts(x, y))
    LAYERS = 3
    # one graph per (shape, LAYERS) Dynamo has specialised on, never one per trip
    assert backend.graphs == 3


# -- a whole call's guards: every value it depends on changes between calls --------------------------

SCALE = {"value": 2.0}
OFFSET = 1.0


class Settings:
    def __init__(self) -> None:
        self.shift = 0.5


def reads_python_state(x, settings, table):
    y = x * SCALE["value"]
    if Marker != None:  # noqa: E711 - Python between tensor statements: the call is captured whole
        y = y + settings.shift
    del x
    return y + table["bias"] + OFFSET


def test_a_whole_call_follows_every_value_it_reads():
    global OFFSET
    settings, table = Settings(), {"bias": torch.ones(3)}
    compiled = carve.compile(reads_python_state, backend="eager")
    changes = [
        lambda: None,
        lambda: SCALE.__setitem__("value", 5.0),                   # a container's contents
        lambda: setattr(settings, "shift", -3.0),                  # an attribute
        lambda: table.__setitem__("bias", torch.full((3,), 7.0)),  # a tensor in a container
        lambda: globals().__setitem__("OFFSET", 10.0),             # a global
    ]
    try:
        for change in changes:
            change()
            for shape in ((3,), (4, 3)):                           # a shape
                x = torch.randn(shape)
                torch.testing.assert_close(compiled(x, settings, table), reads_python_state(x, settings, table))
    finally:
        SCALE["value"], OFFSET = 2.0, 1.0
    assert [region.capture_reason for region in compiled.regions] == ["the whole call is one region"]


def logs_under_no_grad(x):
    y = x.sin()
    with torch.no_grad():
        y = y + 2
        print("mean", round(y.mean().item(), 4))
        z = y * 3
    return z.cos()


def converts_under_profiler(x):
    y = x**2
    with torch.profiler.profile():
        y = y + 2
        with torch.profiler.record_function("step"):
            z = y**3
            print("values", [round(v, 4) for v in z.tolist()])
            z = z + 1
    return z


def returns_under_saved_tensors_hooks_disabled(x):
    with torch.autograd.graph.disable_saved_tensors_hooks("not here"):
        y = x + 1
        torch._dynamo.graph_break()
        return y * 2


@pytest.mark.parametrize("fn", [logs_under_no_grad, converts_under_profiler, returns_under_saved_tensors_hooks_disabled])
def test_a_break_inside_a_with_block_dynamo_resumes_in_makes_torch_compiles_graphs(fn, capsys):
    # Dynamo resumes after a break inside torch's own context managers, re-entering the manager:
    # carve keeps the block in one region instead of a region on each side of each `with` line
    # (4 graphs against torch.compile's 2 before).
    x = torch.randn(4, requires_grad=True)
    fn(x)
    printed_eagerly = capsys.readouterr().out
    torch_graphs, carve_graphs = graph_counts(fn, x)
    assert carve_graphs == torch_graphs == 2
    # Each of graph_counts' calls runs the compiled function and eager, for each compiler.
    assert capsys.readouterr().out == printed_eagerly * CALLS * 2 * 2


class MicroMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(32, 1)

    def forward(self, x):
        return self.b(torch.nn.functional.gelu(self.a(x)))


def accumulate(model, batches, accum):
    """Gradient accumulation over micro-batches picked by the loop counter, logging each loss."""
    total = 0.0
    for micro in range(accum):
        x = batches[micro]
        loss = model(x).pow(2).mean() / accum
        loss.backward()
        total += loss.item()
    return total


def test_micro_batches_picked_by_the_loop_counter_share_one_graph():
    # Read in the region, `batches[micro]` made Dynamo guard micro's value: one graph per step,
    # and past the recompile limit the steps ran uncompiled.
    torch.manual_seed(0)
    model = MicroMLP()
    batches = [torch.randn(4, 16) for _ in range(12)]
    graphs = []
    for make in (torch.compile, carve.compile):
        torch._dynamo.reset()
        backend = CountingBackend()
        compiled = make(accumulate, backend=backend)
        for _ in range(CALLS):
            model.zero_grad()
            got = compiled(model, batches, len(batches))
            got_grads = [p.grad.clone() for p in model.parameters()]
            model.zero_grad()
            assert got == accumulate(model, batches, len(batches))
            for got_grad, param in zip(got_grads, model.parameters()):
                torch.testing.assert_close(got_grad, param.grad)
        # Every micro-batch of every call ran a graph.
        assert backend.calls >= CALLS * len(batches) - cost_check.SAMPLES  # the cost check's Python turns run none
        graphs.append(backend.graphs)
    assert graphs[1] <= graphs[0] == 1, graphs


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.body(x)


def evaluate(model, batches):
    """An evaluation loop collecting each batch's predictions and logits, printing as it goes."""
    preds, logits = [], []
    for batch in batches:
        out = model(batch)
        preds.append(model.head(out).argmax(-1))
        logits.append(model.head(out))
        print("batch", out.shape[0], len(preds))
    return torch.cat(preds), torch.stack(logits)


def test_lists_a_loop_fills_leave_every_step_in_one_graph(capsys):
    # In the region, `preds.append(...)` made Dynamo guard the list's length: one graph per
    # step, and past the recompile limit the model ran uncompiled.
    torch.manual_seed(0)
    model = Classifier().eval()
    batches = [torch.randn(4, 8) for _ in range(12)]
    backend = CountingBackend()
    compiled = carve.compile(evaluate, backend=backend)
    with torch.no_grad():
        for _ in range(CALLS):
            got = compiled(model, batches)
            printed = capsys.readouterr().out
            expected = evaluate(model, batches)
            assert printed == capsys.readouterr().out
            for got_tensor, expected_tensor in zip(got, expected):
                torch.testing.assert_close(got_tensor, expected_tensor)
    # One graph for the loop body (the model call and both appends' arguments), one for the cat.
    assert backend.graphs == 2, backend.graphs
    # Every batch of every call ran the body's graph.
    assert backend.calls >= CALLS * (len(batches) + 1) - cost_check.SAMPLES, backend.calls  # (its Python turns)
