"""Python side effects in callees happen on every call.

A cached graph replays tensor operations only; a callee's Python side effects (a step counter
in a submodule's forward, `past.append(...)`, a draw from a `random.Random`, a hook, a context
manager's enter and exit, a global counter, a print) must take effect on every call, in order,
as eagerly. Each scenario calls the compiled program several times and yields, after each
call, its result together with the state the callees changed; prints are compared too. Programs
come with and without a graph break, and the harness checks carve compiled graphs.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import random

import pytest
import torch
import torch.nn as nn

import carve

from .harness import BOTH, attempt, differential, regions_of

X = torch.arange(1.0, 7.0).reshape(2, 3)
BREAKS = pytest.mark.parametrize("breaks", [False, True], ids=["one-graph", "graph-break"])


# -- a submodule's step counter --------------------------------------------------------------------

class Counted(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


class Parent(nn.Module):
    def __init__(self):
        super().__init__()
        self.child = Counted()

    def forward(self, x):
        return self.child(self.child(x).tanh())


class ParentWithBreak(Parent):
    def forward(self, x):
        h = self.child(x).tanh()
        print("calls", self.child.calls)
        return self.child(h)


@BREAKS
def test_submodule_step_counter(breaks):
    def scenario(compile):
        torch.manual_seed(0)
        net = (ParentWithBreak if breaks else Parent)()
        compiled = compile(net)
        for _ in range(4):
            yield compiled(X), net.child.calls

    differential(scenario)


# -- past.append(...) in a helper ---------------------------------------------------------------

def remember(past, x):
    past.append(x.detach() * 1)
    return x + len(past)


def with_memory(x, past):
    y = remember(past, x)
    return remember(past, y.sin())


def with_memory_with_break(x, past):
    y = remember(past, x)
    print("remembered", len(past))
    return remember(past, y.sin())


@pytest.mark.parametrize("fn", [with_memory, with_memory_with_break], ids=["one-graph", "graph-break"])
def test_append_in_a_helper(fn):
    def scenario(compile):
        past = []
        compiled = compile(fn)
        for _ in range(3):
            yield compiled(X, past), list(past)
        past.clear()
        yield compiled(X, past), list(past)

    differential(scenario, backends=BOTH)


# -- a stateful method on an argument ---------------------------------------------------------

class RunningMean:
    def __init__(self):
        self.count = 0
        self.total = torch.zeros(3)

    def update(self, x):
        self.count += 1
        self.total = self.total + x.sum(0)
        return self.total / self.count


def normalised(x, stats):
    h = (x * 2).sin()
    mean = stats.update(h)
    return (h - mean).cos()


def normalised_with_break(x, stats):
    h = (x * 2).sin()
    mean = stats.update(h)
    print("count", stats.count)
    return (h - mean).cos() + stats.update(h * 2)


@pytest.mark.parametrize("fn", [normalised, normalised_with_break], ids=["one-graph", "graph-break"])
def test_stateful_method_on_an_argument(fn):
    def scenario(compile):
        stats = RunningMean()
        compiled = compile(fn)
        for i in range(4):
            yield compiled(X + i, stats), stats.count, stats.total

    differential(scenario)


# -- random.Random instances -------------------------------------------------------------------

def jitter(x, rng):
    return x + rng.random()


def jittered(x, rng):
    y = x.cos() * 2  # tensor work a graph captures beside the draws that stay Python
    return jitter(y, rng) * rng.uniform(1.0, 2.0)


def jittered_with_break(x, rng):
    h = x.cos() * 2
    y = jitter(h, rng)
    print("y", y.shape)
    return y * rng.choice([1.0, 2.0, 3.0])


@pytest.mark.parametrize("fn", [jittered, jittered_with_break], ids=["one-graph", "graph-break"])
def test_random_instance_draws_on_every_call(fn):
    def scenario(compile):
        rng = random.Random(0)
        compiled = compile(fn)
        for _ in range(4):
            yield compiled(X, rng)
        yield rng.random()

    differential(scenario)


SHARED_RNG = random.Random(1)


def global_rng_helper(x):
    k = SHARED_RNG.randint(1, 100)
    return x * k, k


def test_global_random_instance_in_a_helper():
    def scenario(compile):
        SHARED_RNG.seed(1)
        compiled = compile(global_rng_helper)
        for _ in range(3):
            yield compiled(X)
        SHARED_RNG.seed(1)  # reseeded between calls: the same draws again
        yield compiled(X)

    differential(scenario)


def torch_random_helper(x):
    noise = torch.rand(x.shape)
    return x + noise


def uses_torch_random(x):
    y = torch_random_helper(x)
    print("drawn", y.shape)
    return torch_random_helper(y)


def test_torch_random_in_a_helper_draws_fresh_values():
    def scenario(compile):
        torch.manual_seed(0)
        compiled = compile(uses_torch_random)
        for _ in range(3):
            yield compiled(X)
        torch.manual_seed(0)
        yield compiled(X)

    differential(scenario)


# -- forward hooks and pre-hooks on submodules ---------------------------------------------------

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 3)
        self.second = nn.Linear(3, 3)

    def forward(self, x):
        return self.second(self.first(x).relu())


class StackWithBreak(Stack):
    def forward(self, x):
        h = self.first(x).relu()
        print("h", h.shape)
        return self.second(h)


@BREAKS
def test_hooks_registered_before_and_after_the_first_call_and_removed(breaks):
    def scenario(compile):
        torch.manual_seed(0)
        net = (StackWithBreak if breaks else Stack)()
        seen = []

        def record(module, args, output):
            seen.append(("forward", output.shape))

        def scale_output(module, args, output):
            return output * 10

        def shift_input(module, args):
            seen.append("pre")
            return (args[0] + 1,)

        recorder = net.first.register_forward_hook(record)
        compiled = compile(net)
        yield compiled(X), list(seen)
        scaler = net.second.register_forward_hook(scale_output)  # after the first call
        yield compiled(X), list(seen)
        shifter = net.first.register_forward_pre_hook(shift_input)
        yield compiled(X), list(seen)
        recorder.remove()
        yield compiled(X), list(seen)
        scaler.remove()
        shifter.remove()
        yield compiled(X), list(seen)

    differential(scenario, backends=BOTH)


def test_hook_on_the_compiled_module_itself():
    def scenario(compile):
        torch.manual_seed(0)
        net = StackWithBreak()
        compiled = compile(net)
        calls = []
        yield compiled(X)
        handle = net.register_forward_hook(lambda m, a, out: calls.append(1) or out + 100)
        yield compiled(X), len(calls)
        handle.remove()
        yield compiled(X), len(calls)

    differential(scenario)


def test_backward_hook_on_a_submodule():
    def scenario(compile):
        torch.manual_seed(0)
        net = Stack()
        grads = []
        net.first.register_full_backward_hook(lambda m, grad_in, grad_out: grads.append(grad_out[0].sum()))
        compiled = compile(net)
        for _ in range(3):
            x = X.clone().requires_grad_(True)
            out = compiled(x).sum()
            out.backward()
            yield out, x.grad, len(grads), grads[-1]

    differential(scenario, backends=BOTH)


# -- a context manager entered in a callee -----------------------------------------------------

class Recorder:
    """A context manager with state: how deep we are, and a log of enters and exits."""

    def __init__(self):
        self.depth = 0
        self.log = []

    def __enter__(self):
        self.depth += 1
        self.log.append(("enter", self.depth))
        return self

    def __exit__(self, *exc):
        self.log.append(("exit", self.depth, exc[0] is not None))
        self.depth -= 1
        return False


def scoped(x, recorder):
    with recorder:
        return x * (recorder.depth + 1)


def uses_scoped(x, recorder):
    return scoped(x, recorder) + scoped(x, recorder)


def uses_scoped_with_break(x, recorder):
    y = scoped(x, recorder)
    print("log", len(recorder.log))
    return y + scoped(y, recorder)


@pytest.mark.parametrize("fn", [uses_scoped, uses_scoped_with_break], ids=["one-graph", "graph-break"])
def test_context_manager_entered_in_a_callee(fn):
    def scenario(compile):
        recorder = Recorder()
        compiled = compile(fn)
        for _ in range(3):
            yield compiled(X, recorder), list(recorder.log)

    differential(scenario)


TRACE = []


@contextlib.contextmanager
def traced(name):
    TRACE.append("enter " + name)
    try:
        yield
    finally:
        TRACE.append("exit " + name)


def in_generator_context(x):
    with traced("inner"):
        y = x.cos()
    return y * 2


def uses_generator_context(x):
    y = in_generator_context(x)
    print("trace", len(TRACE))
    return in_generator_context(y)


def test_contextmanager_decorated_helper():
    def scenario(compile):
        TRACE.clear()
        compiled = compile(uses_generator_context)
        for _ in range(3):
            yield compiled(X), list(TRACE)

    differential(scenario)


def no_grad_helper(x, w):
    with torch.no_grad():
        frozen = x * w
    return frozen + x * w


def uses_no_grad_helper(x, w):
    y = no_grad_helper(x, w)
    print("requires grad", y.requires_grad)
    return y.sum()


def test_no_grad_entered_in_a_callee():
    def scenario(compile):
        compiled = compile(uses_no_grad_helper)
        for i in range(3):
            w = torch.full((3,), 1.0 + i, requires_grad=True)
            out = compiled(X, w)
            out.backward()
            yield out, w.grad, torch.is_grad_enabled()

    differential(scenario, backends=BOTH)


def raises_inside_context(x, recorder):
    with recorder:
        if recorder.depth > 0 and x.shape[0] > 2:
            raise ValueError("too many rows")
        return x + 1


def test_exception_raised_inside_a_callee_context_manager():
    def scenario(compile):
        recorder = Recorder()
        compiled = compile(raises_inside_context)
        yield compiled(X, recorder), list(recorder.log)
        yield attempt(compiled, torch.ones(3, 3), recorder), list(recorder.log)
        yield compiled(X, recorder), list(recorder.log)

    differential(scenario)


# -- a global counter incremented by a helper ---------------------------------------------------

COUNTER = 0


def counted_helper(x):
    global COUNTER
    COUNTER += 1
    return x * COUNTER


def with_global_counter(x):
    return counted_helper(counted_helper(x))


def with_global_counter_with_break(x):
    y = counted_helper(x)
    print("counter", COUNTER)
    return counted_helper(y)


@pytest.mark.parametrize("fn", [with_global_counter, with_global_counter_with_break],
                         ids=["one-graph", "graph-break"])
def test_global_counter_incremented_by_a_helper(fn):
    def scenario(compile):
        global COUNTER
        COUNTER = 0
        compiled = compile(fn)
        for _ in range(4):
            yield compiled(X), COUNTER

    differential(scenario)


# -- print inside a helper ---------------------------------------------------------------------

def chatty(x, tag):
    print("chatty", tag, x.shape)
    return x.relu()


def calls_chatty(x):
    y = chatty(x - 3, "first") * 2
    return chatty(y, "second").sum()


def test_print_inside_a_helper():
    def scenario(compile):
        compiled = compile(calls_chatty)
        for i in range(3):
            yield compiled(X + i)

    differential(scenario)


class Logging(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        y = self.linear(x)
        print("Logging.forward", tuple(y.shape))
        return y


def test_print_inside_a_submodule_forward():
    def scenario(compile):
        torch.manual_seed(0)
        net = nn.Sequential(Logging(), nn.ReLU(), Logging())
        compiled = compile(net)
        for _ in range(3):
            yield compiled(X)

    differential(scenario)


# -- more callee effects: iterators, dict stores, attribute stores, buffers, exceptions -------------

def draw(x, it):
    return x * next(it)


def uses_iterator(x, it):
    h = x.exp()
    y = draw(h, it) + draw(h, it)
    return y.tanh()


def test_next_on_an_iterator_argument_in_a_helper():
    def scenario(compile):
        it = itertools.count(1)
        compiled = compile(uses_iterator)
        for _ in range(3):
            yield compiled(X, it)
        yield next(it)

    differential(scenario)


def store_in_cache(cache, key, y):
    cache[key] = y
    cache["calls"] = cache.get("calls", 0) + 1


def caching(x, cache):
    y = x.exp()
    store_in_cache(cache, "exp", y)
    z = y.log()
    store_in_cache(cache, "log", z)
    return z


def test_dict_item_stores_in_a_helper():
    def scenario(compile):
        cache = {}
        compiled = compile(caching)
        for i in range(3):
            yield compiled(X + i, cache), dict(cache)

    differential(scenario)


class Holder:
    def __init__(self):
        self.last = None
        self.history = 0


def keep_last(holder, y):
    holder.last = y
    holder.history += 1
    return y


def stores_attribute(x, holder):
    h = x * 2 + 1
    y = keep_last(holder, h)
    z = (y + 1).relu()
    return keep_last(holder, z)


def test_attribute_stores_in_a_helper():
    def scenario(compile):
        holder = Holder()
        compiled = compile(stores_attribute)
        for i in range(3):
            out = compiled(X + i, holder)
            yield out, holder.last, holder.history, holder.last is out

    differential(scenario)


def test_buffers_updated_by_a_submodule():
    def scenario(compile):
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3, momentum=0.5))
        compiled = compile(net)
        for i in range(3):
            yield compiled(X + i), net[1].running_mean, net[1].running_var, net[1].num_batches_tracked
        net.eval()
        yield compiled(X), net[1].running_mean

    differential(scenario, backends=BOTH)


def bump_in_place(t):
    t.add_(1)
    return t


def mutates_its_argument(x, t):
    y = bump_in_place(t) * x
    return y + bump_in_place(t)


def test_tensor_mutated_in_place_by_a_helper():
    def scenario(compile):
        t = torch.zeros(3)
        compiled = compile(mutates_its_argument)
        for _ in range(3):
            yield compiled(X, t), t

    differential(scenario, backends=BOTH)


def limited(x, budget):
    budget.append(1)
    if len(budget) > 2:
        raise RuntimeError(f"budget exhausted after {len(budget)} calls")
    return x * len(budget)


def uses_limited(x, budget):
    y = limited(x, budget)
    return y.sum()


def test_helper_raises_after_its_side_effect():
    def scenario(compile):
        budget = []
        compiled = compile(uses_limited)
        for _ in range(4):
            yield attempt(compiled, X, budget), len(budget)

    differential(scenario)


def make_counter():
    count = 0

    def tick(x):
        nonlocal count
        count += 1
        return x + count

    return tick, lambda: count


def test_nonlocal_counter_in_a_closure_helper():
    def scenario(compile):
        tick, read = make_counter()

        def fn(x):
            y = tick(x)
            print("count", read())
            return tick(y * 2)

        compiled = compile(fn)
        for _ in range(3):
            yield compiled(X), read()

    differential(scenario)


class Stepper(nn.Module):
    """A module whose forward both counts and uses the count (a decaying schedule)."""

    def __init__(self):
        super().__init__()
        self.step = 0
        self.trace = []

    def forward(self, x):
        self.step += 1
        self.trace.append(self.step)
        return x * (0.5 ** self.step)


def test_module_counter_read_back_in_the_same_call():
    def scenario(compile):
        stepper = Stepper()

        def fn(x):
            y = stepper(x)
            z = stepper(y)
            return y + z, stepper.step

        compiled = compile(fn)
        for _ in range(3):
            yield compiled(X), list(stepper.trace)
        stepper.step = 0
        yield compiled(X), list(stepper.trace)

    differential(scenario)


# -- autograd state set in the compiled function and in a callee ----------------------------------

def retains_grad(x):
    y = x * 2
    y.retain_grad()
    z = y.sin()
    return (y * z).sum(), y, z


def keep_grad(y):
    y.retain_grad()
    return y


def retains_grad_in_a_callee(x):
    h = x.cos() * 2
    z = keep_grad(h.sin())
    return (h * z).sum(), h, z


@pytest.mark.parametrize("fn", [retains_grad, retains_grad_in_a_callee], ids=["function", "callee"])
def test_retain_grad(fn):
    def scenario(compile):
        compiled = compile(fn)
        for i in range(3):
            x = torch.full((3,), 1.0 + i, requires_grad=True)
            out, y, z = compiled(x)
            out.backward()
            yield out, x.grad, y.grad, z.grad

    differential(scenario, backends=BOTH)


def fits_fresh_parameters(x):
    """PyTorch's tutorial style: parameters made in the function, trained by its own loop."""
    a = torch.zeros((), requires_grad=True)
    b = torch.randn(3).requires_grad_()
    loss = (a + b * x).pow(2).sum()
    print("loss", round(loss.item(), 4))
    loss.backward()
    return a.grad, b.grad, a.requires_grad, b.is_leaf


def scales_a_parameter(p, x):
    y = (p.float() * x).sum()
    print("y", y.item())
    y.backward()
    return p.grad


def test_an_input_leaf_handed_back_by_an_op_keeps_the_fast_path():
    # `p.float()` of a float parameter returns `p` itself: not a new autograd leaf.
    compiled = carve.compile(scales_a_parameter, backend="aot_eager")
    with contextlib.redirect_stdout(io.StringIO()):
        for i in range(3):
            p = torch.full((3,), 1.0 + i, requires_grad=True)
            expected = scales_a_parameter(p.detach().clone().requires_grad_(), torch.ones(3))
            torch.testing.assert_close(compiled(p, torch.ones(3)), expected)
    assert [r.path for r in regions_of(compiled) if r.graphs][0] == "dynamo"


def test_tensors_made_requiring_grad_in_a_region_keep_their_gradients():
    # Under AOT autograd such a tensor must come back a leaf that requires grad, on every call
    # (a detached one makes the second call's backward raise "does not require grad").
    def scenario(compile):
        compiled = compile(fits_fresh_parameters)
        for i in range(3):
            torch.manual_seed(i)
            yield compiled(torch.full((3,), 1.0 + i))

    differential(scenario, backends=BOTH)


# -- a write through one argument, seen through another sharing its memory -----------------------

def write_then_read(a, b):
    a.add_(1)
    return b * 2


def bump(t):
    t.add_(1)


def write_in_a_callee_then_read(a, b):
    h = a * 1
    bump(a)
    return b * 2 + h


@pytest.mark.parametrize("fn, backend", [
    (write_then_read, "eager"),
    pytest.param(write_then_read, "aot_eager", marks=pytest.mark.xfail(
        strict=True, reason="Dynamo (torch 2.13) does not guard which inputs share storage: a region it "
        "compiled with aot_eager for distinct tensors, called with two views of one tensor, misses the write "
        "(torch.compile(backend='aot_eager') does the same)")),
    (write_in_a_callee_then_read, "eager"),
    pytest.param(write_in_a_callee_then_read, "aot_eager", marks=pytest.mark.xfail(
        strict=True, reason="Dynamo (torch 2.13) does not guard which inputs share storage: a region it "
        "compiled with aot_eager for distinct tensors, called with two views of one tensor, misses the write "
        "(torch.compile(backend='aot_eager') does the same)"))],
    ids=["function-eager", "function-aot_eager", "callee-eager", "callee-aot_eager"])
def test_in_place_write_seen_through_an_aliasing_argument(fn, backend):
    def scenario(compile):
        compiled = compile(fn)
        for _ in range(2):
            a, b = torch.zeros(4), torch.zeros(4)
            yield compiled(a, b), a, b
        base = torch.zeros(4)
        yield compiled(base, base[:]), base  # the same memory, another object
        base = torch.zeros(8)
        yield compiled(base[:4], base[2:6]), base  # overlapping views
        base = torch.zeros(8)
        yield compiled(base[:4], base[4:]), base  # one storage, no overlap
        a = torch.zeros(4)
        yield compiled(a, a), a

    differential(scenario, backends=[backend])


# -- hooks on a module called from a statement carve keeps eager -----------------------------------

class Announcing(nn.Module):
    """Prints in its forward: a caller's statement that calls it breaks the graph, and carve compiles
    the module on its own (a nested frame)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)

    def forward(self, x):
        y = self.linear(x)
        print("Announcing.forward", tuple(y.shape))
        return y


ANNOUNCING = Announcing()
HOOK_CALLS = []


def calls_announcing(x):
    h = x * 2
    y = ANNOUNCING(h)
    return y.relu()


def test_hooks_of_a_module_called_from_an_eager_statement():
    def scenario(compile):
        HOOK_CALLS.clear()
        handles = [ANNOUNCING.register_forward_hook(lambda m, a, out: HOOK_CALLS.append("hook") or out * 10),
                   ANNOUNCING.register_forward_pre_hook(lambda m, a: (a[0] + 1,))]
        try:
            compiled = compile(calls_announcing)
            for _ in range(2):
                yield compiled(X), list(HOOK_CALLS)
            handles.pop().remove()
            yield compiled(X), list(HOOK_CALLS)
        finally:
            for handle in handles:
                handle.remove()

    differential(scenario)


# -- an error met after a graph break does not run the call again ------------------------------------

def _logs_then_multiplies(x, w, fn, log):
    y = x.sin()
    log.append(len(log))
    z = fn(y)  # a callee that prints: Dynamo breaks the graph here
    return z @ w


def _printing_triple(t):
    print("triple")
    return t * 3


def test_a_shape_error_after_a_graph_break_keeps_side_effects_once(capsys):
    """Dynamo runs the graph before the break (and replays the append), then fails tracing the
    rest on the last call's shapes: the call must not run again from the start."""
    compiled = carve.compile(_logs_then_multiplies, backend="eager")
    for w in (torch.randn(3, 2), torch.randn(3, 2), torch.randn(4, 2)):  # the last does not fit
        x = torch.randn(3)
        outcomes = []
        for run in (_logs_then_multiplies, compiled):
            log = []
            try:
                value = run(x, w, _printing_triple, log)
            except RuntimeError:
                value = None
            outcomes.append((value, log, capsys.readouterr().out))
        (expected, expected_log, expected_out), (got, got_log, got_out) = outcomes
        assert (got is None) == (expected is None)
        if expected is not None:
            torch.testing.assert_close(got, expected)
        assert (got_log, got_out) == (expected_log, expected_out)
