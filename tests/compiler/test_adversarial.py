"""Adversarial differential tests: carve.compile(fn) must behave exactly like fn run eagerly.

Each test runs the same program eagerly and through carve (over several calls, so cache hits
and misses both happen) and compares results, printed output and mutated inputs. Tests marked
xfail(strict=True) are known carve bugs: a wrong answer or a crash where eager succeeds.
"""

from __future__ import annotations

import contextlib
import copy
import io
import itertools

import numpy as np
import pytest
import torch

import carve


def _call(fn, args):
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            result = fn(*args)
    except Exception as e:  # noqa: BLE001 - the exception is part of the behaviour compared
        result = ("raised", type(e).__name__)
    return result, out.getvalue()


def _same(a, b):
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape \
            and a.dtype == b.dtype and torch.equal(a, b) and _signbits(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _signbits(a, b):
    if not a.is_floating_point():
        return True
    return torch.equal(torch.signbit(a), torch.signbit(b))


def check(fn, *argsets, backend="eager"):
    """Run fn eagerly and compiled on deep copies of each argument tuple, in order; compare all."""
    compiled = carve.compile(fn, backend=backend)
    for i, args in enumerate(argsets):
        eager_args, carve_args = copy.deepcopy(args), copy.deepcopy(args)
        expected, expected_out = _call(fn, eager_args)
        got, got_out = _call(compiled, carve_args)
        assert _same(got, expected), f"call {i}: carve returned {got!r}, eager {expected!r}"
        assert got_out == expected_out, f"call {i}: carve printed {got_out!r}, eager {expected_out!r}"
        assert _same(list(carve_args), list(eager_args)), f"call {i}: inputs mutated differently"


X = torch.arange(4.0)


# ---------------------------------------------------------------------------------------------
# Liveness and outlining
# ---------------------------------------------------------------------------------------------

def conditional_write_then_return(x, flag):
    z = x + 0
    print("hi")
    if flag:
        z = x * 2
    return z


def test_conditionally_written_name_keeps_its_earlier_value():
    check(conditional_write_then_return, (X, True), (X, False), (X, False))


def partial_assignment_in_try(x):
    a = x
    try:
        a = x * 2
        b = a[10]  # IndexError after `a` was rebound
        a = b
    except IndexError:
        pass
    return a


def test_exception_in_try_region_keeps_earlier_assignments():
    check(partial_assignment_in_try, (X,), (X,))


def lambda_sees_rebound_name(x):
    s = x * 2
    g = lambda t: t + s  # noqa: E731
    print("hi")
    s = x * 3
    return g(x)


def test_lambda_in_region_sees_later_rebinding():
    check(lambda_sees_rebound_name, (X,), (X,))


def alias_of_list_argument(x, xs):
    ys = xs
    y = x * 2
    ys.append(1)
    return y


def test_alias_of_list_argument_is_the_same_list():
    compiled = carve.compile(alias_of_list_argument, backend="eager")
    first, second = [], []
    compiled(X, first)
    compiled(X, second)
    assert first == [1] and second == [1]


# ---------------------------------------------------------------------------------------------
# Hoisting
# ---------------------------------------------------------------------------------------------

def short_circuit_test(x, y=None):
    if y is not None and y.sum() > 0:
        x = x + 1
    return x * 2


def test_hoisting_respects_short_circuit_and():
    check(short_circuit_test, (X, None), (X, X), (X, None))


def conditional_expression_in_print(x, y):
    print(y.mean() if y is not None else "none")
    return x + 1


def test_hoisting_respects_conditional_expression():
    check(conditional_expression_in_print, (X, None), (X, X))


# ---------------------------------------------------------------------------------------------
# Guards
# ---------------------------------------------------------------------------------------------

SCALES = {"scale": 2.0}
OFFSETS = [1.0]


def reads_global_containers(x):
    return x * SCALES["scale"] + OFFSETS[0]


def test_mutated_global_container_values_retrace():
    compiled = carve.compile(reads_global_containers, backend="eager")
    try:
        assert torch.equal(compiled(X), reads_global_containers(X))
        SCALES["scale"], OFFSETS[0] = 5.0, 7.0
        assert torch.equal(compiled(X), reads_global_containers(X))
    finally:
        SCALES["scale"], OFFSETS[0] = 2.0, 1.0


class Cfg:
    def __init__(self, scale):
        self.scale = scale


def reads_attribute_of_list_item(x, cfgs):
    return x * cfgs[0].scale


def reads_attribute_by_getattr(x, cfg):
    return x * getattr(cfg, "scale")


def reads_tuple_keyed_dict(x, d):
    return x * d[(0, 1)]


def reads_set_length(x, s):
    return x * len(s)


def _mutate_between_calls(fn, obj, mutate):
    compiled = carve.compile(fn, backend="eager")
    assert torch.equal(compiled(X, obj), fn(X, obj))
    mutate(obj)
    assert torch.equal(compiled(X, obj), fn(X, obj))


def test_attribute_of_list_item_is_guarded():
    _mutate_between_calls(reads_attribute_of_list_item, [Cfg(2.0)], lambda o: setattr(o[0], "scale", 3.0))


def test_getattr_builtin_read_is_guarded():
    _mutate_between_calls(reads_attribute_by_getattr, Cfg(2.0), lambda o: setattr(o, "scale", 3.0))


def test_tuple_keyed_dict_value_is_guarded():
    _mutate_between_calls(reads_tuple_keyed_dict, {(0, 1): 2.0}, lambda o: o.__setitem__((0, 1), 3.0))


def test_set_argument_contents_are_guarded():
    _mutate_between_calls(reads_set_length, {1}, lambda o: o.add(2))


def scale_then_reciprocal(x, s):
    y = x * s
    return 1 / y


def test_negative_zero_scalar_is_not_zero():
    check(scale_then_reciprocal, (X + 1, 0.0), (X + 1, -0.0))


def reads_stride(x):
    s = x.stride()[1]
    return x * s


def test_stride_of_size_one_dim_is_guarded():
    a = torch.ones(3, 1)
    b = torch.ones(1, 3).t()
    assert a.is_contiguous() and b.is_contiguous() and a.stride() != b.stride()
    compiled = carve.compile(reads_stride, backend="eager")
    assert torch.equal(compiled(a), reads_stride(a))
    assert torch.equal(compiled(b), reads_stride(b))


def reads_numpy_element(x, arr):
    return x * arr[0]


def test_numpy_scalar_argument_on_cache_hit():
    arr = np.array([2.0])
    compiled = carve.compile(reads_numpy_element, backend="eager")
    assert torch.equal(compiled(X, arr), reads_numpy_element(X, arr))
    assert torch.equal(compiled(X, arr), reads_numpy_element(X, arr))


# ---------------------------------------------------------------------------------------------
# Side effects the graph cannot replay
# ---------------------------------------------------------------------------------------------

def numpy_random_scale(x):
    k = float(np.random.rand())
    return x * k


def test_numpy_random_is_not_frozen():
    compiled = carve.compile(numpy_random_scale, backend="eager")
    np.random.seed(0)
    got = [compiled(X) for _ in range(3)]
    np.random.seed(0)
    expected = [numpy_random_scale(X) for _ in range(3)]
    assert all(torch.equal(g, e) for g, e in zip(got, expected))


def counting_helper(t, cache={}):  # noqa: B006 - the mutable default is the point
    cache["n"] = cache.get("n", 0) + 1
    return t * cache["n"]


def calls_counting_helper(x):
    return counting_helper(x) + 1


CALLS = []


def logging_helper(t):
    CALLS.append(1)
    return t * 2


def calls_logging_helper(x):
    return logging_helper(x) + 1


def test_callee_side_effect_on_mutable_default_is_replayed():
    compiled = carve.compile(calls_counting_helper, backend="eager")
    got = [compiled(X) for _ in range(3)]
    counting_helper.__defaults__[0].clear()
    expected = [calls_counting_helper(X) for _ in range(3)]
    assert all(torch.equal(g, e) for g, e in zip(got, expected))


def test_callee_append_to_global_list_runs_every_call():
    CALLS.clear()
    compiled = carve.compile(calls_logging_helper, backend="eager")
    for _ in range(3):
        compiled(X)
    assert len(CALLS) == 3


def list_augmented_assignment(x, xs):
    xs += [1]
    y = x * len(xs)
    return y


def test_list_augmented_assignment_mutates_every_call():
    check(list_augmented_assignment, (X, []), (X, [0]), (X, []))


def nested_nonlocal_accumulator(x):
    total = x * 0

    def add(t):
        nonlocal total
        total = total + t

    add(x)
    print("x")
    add(x * 2)
    return total


def test_nested_function_nonlocal_write_called_in_region():
    check(nested_nonlocal_accumulator, (X,), (X,))


def switches_default_dtype(x):
    torch.set_default_dtype(torch.float64)
    y = torch.ones(3) + x
    torch.set_default_dtype(torch.float32)
    return y


def test_default_dtype_switch_inside_region():
    check(switches_default_dtype, (torch.zeros(3),), (torch.zeros(3),))


def replays_rng_state(x):
    s = torch.get_rng_state()
    a = torch.rand(3)
    torch.set_rng_state(s)
    b = torch.rand(3)
    return x + a - b


def test_rng_state_restore_inside_region():
    check(replays_rng_state, (torch.zeros(3),), (torch.zeros(3),), (torch.zeros(3),))


def module_plus_one(m, x):
    return m(x) + 1


def test_global_forward_hook_added_after_compile():
    lin = torch.nn.Linear(3, 3)
    inp = torch.ones(1, 3)
    compiled = carve.compile(module_plus_one, backend="eager")
    assert torch.equal(compiled(lin, inp), module_plus_one(lin, inp))
    handle = torch.nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 0)
    try:
        assert torch.equal(compiled(lin, inp), module_plus_one(lin, inp))
    finally:
        handle.remove()


# ---------------------------------------------------------------------------------------------
# Attacks carve survives (regression tests)
# ---------------------------------------------------------------------------------------------



G = None


def writes_global(x):
    global G
    G = x * 2
    return G + 1


def test_global_write_in_region_reaches_module():
    compiled = carve.compile(writes_global, backend="eager")
    for k in range(3):
        out = compiled(X + k)
        assert torch.equal(out, (X + k) * 2 + 1)
        assert torch.equal(G, (X + k) * 2)


COUNTER = itertools.count()


def uses_next(x):
    k = next(COUNTER)
    return x * k


def test_next_on_global_iterator_advances_every_call():
    global COUNTER
    COUNTER = itertools.count()
    compiled = carve.compile(uses_next, backend="eager")
    got = [compiled(X) for _ in range(3)]
    assert [torch.equal(g, X * k) for k, g in enumerate(got)] == [True] * 3


def augmented_add_of_possibly_aliased_inputs(x, y):
    x += 1
    return x + y


@pytest.mark.parametrize("backend_name", ["eager", "aot_eager"])
def test_inplace_augmented_add_with_aliased_inputs(backend_name):
    compiled = carve.compile(augmented_add_of_possibly_aliased_inputs, backend=backend_name)
    for same in (False, True, False, True):
        a1, b1 = torch.ones(3), torch.ones(3)
        a2, b2 = torch.ones(3), torch.ones(3)
        expected = augmented_add_of_possibly_aliased_inputs(a1, a1 if same else b1)
        got = compiled(a2, a2 if same else b2)
        assert torch.equal(got, expected) and torch.equal(a2, a1)


def view_augmented_add(x):
    y = x[0]
    y += 1
    return x * 1


def walrus_in_region(x):
    y = (z := x * 2) + 1
    print("p")
    return y + z


def star_unpack(x):
    a, *b = x.unbind(0)
    print(len(b))
    return a + sum(b)


def return_in_try_finally(x):
    y = x * 2
    try:
        return y + 1
    finally:
        y.add_(100)
        print("fin")


def loop_with_del(x, n):
    out = []
    for i in range(n):
        y = x * i
        out.append(y)
        del y
    return out


def unrolled_loop_break(x, k):
    y = x
    for i in range(5):
        if i == k:
            break
        y = y + 1
    return y


def shape_error_on_second_call(x, w):
    y = x @ w
    return y.sum()


def elif_chain(x, m):
    if m == "a":
        y = x + 1
    elif m == "b":
        y = x + 2
    else:
        y = x + 3
    print(m)
    return y


def no_grad_block(x, w):
    with torch.no_grad():
        w2 = w * 2
    print("a")
    return (x * w2).sum()


def seeded_rand(x):
    torch.manual_seed(0)
    return x + torch.rand(3)


def test_view_augmented_add_mutates_input():
    check(view_augmented_add, (X,), (X + 1,), (X,))


def test_walrus_in_region():
    check(walrus_in_region, (X,), (X + 1,))


def test_star_unpacking_of_tensor():
    check(star_unpack, (X,), (X + 1,))


def test_return_inside_try_finally_that_mutates():
    check(return_in_try_finally, (X,), (X + 1,))


def test_del_inside_python_loop():
    check(loop_with_del, (X, 2), (X, 3), (X, 2))


def test_unrolled_loop_break_on_python_int():
    check(unrolled_loop_break, (X, 2), (X, 3), (X, 2))


def test_shape_error_raised_on_second_call():
    check(shape_error_on_second_call, (torch.ones(2, 3), torch.ones(3, 2)), (torch.ones(2, 3), torch.ones(2, 2)),
          (torch.ones(2, 3), torch.ones(3, 2)))


def test_elif_chain_on_strings():
    check(elif_chain, (X, "a"), (X, "b"), (X, "c"), (X, "a"))


def test_no_grad_block_then_grad():
    w1 = X.clone().requires_grad_()
    w2 = X.clone().requires_grad_()
    compiled = carve.compile(no_grad_block, backend="eager")
    for _ in range(2):
        assert torch.equal(compiled(X, w1), no_grad_block(X, w2))
    assert compiled(X, w1).requires_grad == no_grad_block(X, w2).requires_grad


def test_manual_seed_then_rand_every_call():
    check(seeded_rand, (torch.zeros(3),), (torch.zeros(3),), (torch.zeros(3),))


def kw_only_with_defaults(x, *, scale=2.0, **kw):
    return x * scale + kw.get("b", 0)


def test_keyword_arguments_and_defaults():
    compiled = carve.compile(kw_only_with_defaults, backend="eager")
    for kwargs in ({"scale": 3.0, "b": 1}, {}, {"b": 5}, {"scale": 3.0, "b": 1}):
        assert torch.equal(compiled(X, **kwargs), kw_only_with_defaults(X, **kwargs))


def generator_function(x):
    for i in range(2):
        yield x * i


def test_generator_function():
    compiled = carve.compile(generator_function, backend="eager")
    for _ in range(2):
        assert [t.tolist() for t in compiled(X)] == [t.tolist() for t in generator_function(X)]


def inplace_and_return_input(x):
    x.mul_(2)
    return x


@pytest.mark.parametrize("backend_name", ["eager", "aot_eager"])
def test_inplace_on_input_returns_the_input(backend_name):
    compiled = carve.compile(inplace_and_return_input, backend=backend_name)
    for _ in range(3):
        a = X.clone()
        assert compiled(a) is a and torch.equal(a, X * 2)


class ScaledLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.k = 2.0

    def forward(self, x):
        y = self.lin(x) * self.k
        print("f")
        return y + 1


def test_module_changes_between_calls_are_seen():
    torch.manual_seed(0)
    m = ScaledLinear()
    compiled = carve.compile(m, backend="eager")
    x = torch.ones(1, 3)

    def same():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            got, expected = compiled(x), m(x)
        return torch.equal(got, expected) and out.getvalue() == "f\nf\n"

    assert same()
    m.k = 3.0
    assert same()
    with torch.no_grad():
        m.lin.weight.add_(1)
    assert same()
    m.lin = torch.nn.Linear(3, 3)
    assert same()
    m.eval()
    assert same()


def python_loop_carry(x, xs):
    acc = x * 0
    for t in xs:
        acc = acc + t * x
        print("i")
    return acc


def test_loop_carried_tensor_over_python_list():
    check(python_loop_carry, (X, [1.0, 2.0]), (X, [3.0]), (X, [1.0, 2.0]), (X, []))


def sin_square_loss(w, x):
    y = (w * x).sin()
    print("b")
    return (y * y).sum()


@pytest.mark.parametrize("backend_name", ["eager", "aot_eager"])
def test_gradients_through_regions(backend_name):
    compiled = carve.compile(sin_square_loss, backend=backend_name)
    for seed in range(3):
        torch.manual_seed(seed)
        w1 = torch.randn(4, requires_grad=True)
        w2 = w1.detach().clone().requires_grad_()
        with contextlib.redirect_stdout(io.StringIO()):
            compiled(w1, X).backward()
            sin_square_loss(w2, X).backward()
        assert torch.allclose(w1.grad, w2.grad)


def make_closure_reader():
    state = {"bias": torch.zeros(4), "k": 2.0}
    scale = 1.0

    def f(x):
        return x * scale * state["k"] + state["bias"]

    def set_scale(v):
        nonlocal scale
        scale = v

    return f, set_scale, state


def test_closure_cell_and_closure_dict_changes_are_seen():
    f, set_scale, state = make_closure_reader()
    compiled = carve.compile(f, backend="eager")
    assert torch.equal(compiled(X), f(X))
    set_scale(3.0)
    assert torch.equal(compiled(X), f(X))
    state["k"] = 5.0
    assert torch.equal(compiled(X), f(X))
    state["bias"] = torch.ones(4)
    assert torch.equal(compiled(X), f(X))


def while_loop_region(x, n):
    i = 0
    y = x
    while i < n:
        y = y * 2 + i
        i += 1
    return y


def test_while_loop_with_python_counter():
    check(while_loop_region, (X, 3), (X, 0), (X, 5), (X, 3))
