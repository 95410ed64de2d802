"""The rewrite keeps Python's semantics: differential tests of carve.compile against eager.

Each program runs eagerly and through `carve.compile(fn, backend="eager")`, several times, on
inputs that take different paths; return values, printed output, and the type, message and
line of any exception must be the same. Every test also checks that carve really outlined graph
regions (and, where the point is the unbound-name glue or a renamed temporary, that the
generated code has it), so none of them passes by carve running the function untouched.

Covered: names bound on some paths only (if without else, loops that run zero times, try/except
targets, suppressing `with`, `match` captures, `del`), `match` capture patterns, walrus and
comprehension scopes, and generated names that must not collide with the user's.
"""

from __future__ import annotations

import contextlib
import logging
import importlib.util
import sys
import traceback
from dataclasses import dataclass

import torch

import carve
from carve.rewriters.rewrite import rewrite_source

X = torch.arange(4.0)


# -- the differential harness -------------------------------------------------------------------

def _run(fn, args, capsys):
    capsys.readouterr()
    try:
        value = fn(*args)
        outcome = ("returned", value)
    except Exception as error:  # noqa: BLE001 - the exception is the behaviour compared
        frame = traceback.extract_tb(error.__traceback__)[-1]
        outcome = ("raised", type(error), str(error), frame.lineno)
    return outcome, capsys.readouterr().out


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def check(fn, *argsets, capsys, glue: tuple[str, ...] = ()):
    """Eager vs carve on each argument tuple, in order; `glue`: strings the generated code must hold."""
    compiled = carve.compile(fn, backend="eager")
    outcomes = set()
    for i, args in enumerate(argsets):
        expected, expected_out = _run(fn, args, capsys)
        got, got_out = _run(compiled, args, capsys)
        assert got_out == expected_out, f"call {i}: carve printed {got_out!r}, eager {expected_out!r}"
        assert got[0] == expected[0], f"call {i}: carve {got}, eager {expected}"
        if expected[0] == "returned":
            assert _same(got[1], expected[1]), f"call {i}: carve returned {got[1]!r}, eager {expected[1]!r}"
        else:
            assert got[1:] == expected[1:], f"call {i}: carve raised {got[1:]}, eager {expected[1:]}"
        outcomes.add(expected[0])
    source = compiled.generated_source
    assert source is not None and "_graph_region_" in source, "carve outlined no graph region"
    for text in glue:
        assert text in source, f"generated code lacks {text!r}:\n{source}"
    return compiled, outcomes


# -- names bound on some paths only ----------------------------------------------------------------

def if_without_else_unused(x, flag):
    if flag:
        y = x * 2
    print(x.sum())
    return x + 1


def test_if_without_else_name_never_read(capsys):
    check(if_without_else_unused, (X, True), (X, False), (X, True), capsys=capsys)


def if_without_else_read_on_bound_path(x, flag):
    if flag:
        y = x * 2
    print(x.sum())
    if flag:
        return y + 1
    return x


def test_if_without_else_name_read_only_where_bound(capsys):
    check(if_without_else_read_on_bound_path, (X, True), (X, False), (X, False), (X, True),
          capsys=capsys, glue=("_carve_unbound",))


def if_without_else_read_always(x, flag):
    if flag:
        y = x * 2
    print(x.sum())
    return y + 1


def test_unbound_read_raises_eagers_unbound_local_error(capsys):
    _, outcomes = check(if_without_else_read_always, (X, True), (X, False), (X, True), (X, False), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def loop_may_not_run(x, n):
    for i in range(n):
        last = x * i
    print("n", n)
    if n > 0:
        return last + 1
    return x


def loop_may_not_run_read_always(x, n):
    for i in range(n):
        last = x * i
    print("n", n)
    return last + i


def test_loop_that_runs_zero_times(capsys):
    check(loop_may_not_run, (X, 0), (X, 3), (X, 0), capsys=capsys, glue=("_carve_unbound",))
    _, outcomes = check(loop_may_not_run_read_always, (X, 2), (X, 0), (X, 1), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def bound_in_previous_iteration(x, n):
    for i in range(n):
        if i > 0:
            d = x - prev
        prev = x * i
        print(i)
    return d


def test_name_from_a_previous_iteration(capsys):
    _, outcomes = check(bound_in_previous_iteration, (X, 3), (X, 1), (X, 2), (X, 0), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def first_iteration_initialises(x):
    for i in range(3):
        if i == 0:
            acc = x
        else:
            acc = acc + x * i
    print("acc")
    return acc


def test_short_loop_initialising_on_its_first_iteration(capsys):
    check(first_iteration_initialises, (X,), (X + 1,), capsys=capsys)


def read_after_conditional_write_in_one_region(x, flag):
    if flag:
        y = x * 2
    z = y + 1
    print("z")
    return z, y


def test_read_after_conditional_write_in_the_same_run(capsys):
    _, outcomes = check(read_after_conditional_write_in_one_region, (X, True), (X, False), (X, True), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def conditional_write_read_and_returned(x, n, flag):
    for i in range(n):
        w = x + i
    for j in range(2):
        if j > 0:
            v = w * 2
        if flag:
            w = x * 3
    print("w")
    return w, v


def test_name_read_where_unbound_and_carried_out_of_the_same_loop(capsys):
    _, outcomes = check(conditional_write_read_and_returned, (X, 2, True), (X, 0, True), (X, 0, False),
                        (X, 1, False), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def try_target_and_skipped_binding(x, bad):
    try:
        if bad:
            raise ValueError("bad input")
        y = x * 2
    except ValueError as error:
        print("caught", error)
    print(x.sum())
    if not bad:
        return y + 1
    return x


def except_target_read_after_handler(x, bad):
    try:
        if bad:
            raise ValueError("bad input")
    except ValueError as error:
        print("caught", error)
    print(x.sum())
    return x * 2, error


def test_try_except_targets(capsys):
    check(try_target_and_skipped_binding, (X, False), (X, True), (X, False), capsys=capsys)
    _, outcomes = check(except_target_read_after_handler, (X, True), (X, False), capsys=capsys)
    assert outcomes == {"raised"}


def suppressed_with_body(x, k):
    with contextlib.suppress(ZeroDivisionError):
        q = 1 / k
        y = x * q
    print("k", k)
    if k:
        return y + 1
    return y


def test_with_that_suppresses_an_exception(capsys):
    _, outcomes = check(suppressed_with_body, (X, 2), (X, 0), (X, 4), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def deleted_then_read(x, drop):
    y = x * 2
    if drop:
        del y
    print("dropped", drop)
    return y + 1


def test_del_makes_a_name_unbound(capsys):
    _, outcomes = check(deleted_then_read, (X, False), (X, True), (X, False), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def unbound_error_caught_by_the_user(x, flag):
    if flag:
        y = x * 2
    print("before")
    try:
        z = y + 1
    except UnboundLocalError as error:
        print("caught", error)
        z = x
    return z


def test_unbound_local_error_from_a_region_is_catchable(capsys):
    check(unbound_error_caught_by_the_user, (X, True), (X, False), (X, False), (X, True), capsys=capsys,
          glue=("if y is _carve_unbound: del y",))


def conditional_binding_under_no_grad(x, flag):
    with torch.no_grad():
        if flag:
            y = x * 2
        z = x + 1
    print("no_grad")
    return z + y


def test_conditional_binding_inside_a_with_block_region(capsys):
    _, outcomes = check(conditional_binding_under_no_grad, (X, True), (X, False), (X, True), capsys=capsys)
    assert outcomes == {"returned", "raised"}


# -- match, walrus, comprehensions -----------------------------------------------------------------

@dataclass
class Point:
    x: float
    y: float


def match_captures(x, p):
    match p:
        case [a, b]:
            y = x * a + b
        case {"k": v, **rest}:
            y = x * v + len(rest)
        case Point(x=px, y=0):
            y = x * px
        case Point(x=px, y=py) if py > 10:
            y = x - px - py
        case [first, *others]:
            y = x * first + len(others)
        case str() as s:
            y = x + len(s)
        case _:
            y = x
    print("matched")
    return y + 1


def test_match_capture_patterns(capsys):
    check(match_captures, (X, [1, 2]), (X, {"k": 3, "z": 0}), (X, Point(2.0, 0)), (X, Point(1.0, 20)),
          (X, [4, 5, 6]), (X, "abc"), (X, 5), (X, [7, 8]), capsys=capsys)


def match_binds_in_some_cases(x, p):
    match p:
        case [a, b]:
            z = x * a
        case int():
            pass
    print("p", p)
    return z + b


def test_match_capture_bound_only_by_some_cases(capsys):
    _, outcomes = check(match_binds_in_some_cases, (X, [1, 2]), (X, 3), (X, "s"), (X, [2, 3]), capsys=capsys)
    assert outcomes == {"returned", "raised"}


def walrus_bindings(x, n):
    if (m := x.numel()) > n:
        print("big", m)
    total = x * m
    values = [w := x * j for j in range(n)]
    print(len(values))
    return total + w


def test_walrus_binds_in_the_function(capsys):
    _, outcomes = check(walrus_bindings, (X, 2), (X, 0), (X, 5), capsys=capsys)
    assert outcomes == {"returned", "raised"}


i = 100  # a module global the comprehension's loop variable must not shadow or overwrite


def comprehension_scope(x, n):
    ys = [x * i for i in range(n)]
    print(len(ys))
    return x + i


def comprehension_loop_variable_shadowed_local(x):
    j = x * 10
    ys = [x * j for j in range(3)]
    print(len(ys))
    return j + ys[-1]


def test_comprehension_variables_do_not_leak(capsys):
    check(comprehension_scope, (X, 3), (X, 0), capsys=capsys)
    check(comprehension_loop_variable_shadowed_local, (X,), (X * 2,), capsys=capsys)


# -- generated names never collide -----------------------------------------------------------------

def user_temp_name(x):
    _carve_t0 = x * 3
    print("mean", x.mean())
    return _carve_t0


def user_names_like_carves(x, flag):
    _carve_regions = x + 1
    _carve_unbound = x * 2
    _user_names_like_carves_graph_region_0 = x - 1
    __carve_factory__ = 5
    if flag:
        y = x * 4
    print("max", x.max())
    if flag:
        return y + _carve_regions + _carve_unbound + _user_names_like_carves_graph_region_0 + __carve_factory__
    return _carve_regions * _carve_unbound


def test_hoisted_temporary_does_not_overwrite_a_user_variable(capsys):
    compiled, _ = check(user_temp_name, (X,), (X + 1,), capsys=capsys)
    assert "_carve_t1 = x.mean()" in compiled.generated_source


def test_no_generated_name_shadows_a_user_name(capsys):
    compiled, _ = check(user_names_like_carves, (X, True), (X, False), (X, True), capsys=capsys)
    source = compiled.generated_source
    assert "_carve_regions_1" in source and "_carve_unbound_1" in source


def shadowed_locals_builtin(x, n):
    locals = [n]
    for k in range(n):
        last = x * k
    print(locals)
    if n:
        return last + 1
    return x


def test_call_sites_do_not_use_a_shadowed_locals(capsys):
    compiled, _ = check(shadowed_locals_builtin, (X, 2), (X, 0), capsys=capsys)
    assert "except NameError" in compiled.generated_source


# -- carve rewrite: module-wide names ---------------------------------------------------------------

CLASHING = '''\
import torch
import carve


@carve.compile(backend="eager")
def A_f(x):
    y = x * 2
    print("module-level", y.sum())
    return y + 1


class A:
    @carve.compile(backend="eager")
    def f(self, x):
        y = x * 3
        print("method", y.sum())
        return y - 1


@carve.compile(backend="eager")
def t0(x):
    z = x + 5
    print("t0", z.mean())
    return z
'''


def _undecorated(text):
    return "".join(line for line in text.splitlines(keepends=True) if "@carve.compile" not in line)


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_rewrite_gives_a_function_and_a_method_of_the_same_prefix_their_own_names(tmp_path, capsys):
    original_path = tmp_path / "clashing_original.py"
    original_path.write_text(_undecorated(CLASHING))
    rewritten_path = tmp_path / "clashing_rewritten.py"
    text = rewrite_source(CLASHING, "clashing.py").text
    rewritten_path.write_text(text)
    assert "_carve_A_f = carve.RegionSet" in text and "_carve_A_f_1 = carve.RegionSet" in text
    original = _load(original_path, "carve_test_clashing_original")
    rewritten = _load(rewritten_path, "carve_test_clashing_rewritten")
    try:
        for x in (X, X * 2):
            expected = (original.A_f(x), original.A().f(x), original.t0(x))
            expected_out = capsys.readouterr().out
            got = (rewritten.A_f(x), rewritten.A().f(x), rewritten.t0(x))
            got_out = capsys.readouterr().out
            assert _same(got, expected)
            assert got_out == expected_out
    finally:
        sys.modules.pop("carve_test_clashing_original", None)
        sys.modules.pop("carve_test_clashing_rewritten", None)


def test_region_names_do_not_depend_on_line_numbers():
    shifted = CLASHING.replace("import carve\n", "import carve\n\n\nCONSTANT = 1\n")
    def region_names(text):
        return [line.split("(")[0] for line in rewrite_source(text, "m.py").text.splitlines()
                if line.startswith("def _") and "_graph_region_" in line]
    names = region_names(CLASHING)
    assert names and names == region_names(shifted)
    assert all("lines" not in name for name in names)


UNBOUND_IN_FILE = '''\
import torch
import carve


@carve.compile(backend="eager")
def f(x, n):
    for k in range(n):
        last = x * k
    print("n", n)
    if n:
        return last + 1
    return x
'''


def test_rewritten_file_carries_unbound_names(tmp_path, capsys):
    path = tmp_path / "unbound_rewritten.py"
    text = rewrite_source(UNBOUND_IN_FILE, "unbound.py").text
    assert "from carve.rewriters.unbound import UNBOUND as _carve_unbound" in text
    assert rewrite_source(text, "again.py").text == text
    path.write_text(text)
    module = _load(path, "carve_test_unbound_rewritten")
    try:
        namespace: dict = {}
        exec(compile(_undecorated(UNBOUND_IN_FILE), "orig", "exec"), namespace)
        for n in (0, 2, 0, 3):
            expected = namespace["f"](X, n)
            expected_out = capsys.readouterr().out
            got = module.f(X, n)
            assert _same(got, expected) and capsys.readouterr().out == expected_out
    finally:
        sys.modules.pop("carve_test_unbound_rewritten", None)


# -- default values ------------------------------------------------------------------------------

def make_adder(reduce):
    def add_reduced(a, reduce=reduce, *, extra=reduce([3, 4])):
        y = a + reduce([1, 2])
        print("extra", extra)
        return y * extra

    return add_reduced


def test_defaults_that_name_enclosing_variables(capsys):
    # The default expressions name a local of the enclosing function: carve's generated
    # function must take the original's default objects, not evaluate the expressions again.
    for reduce in (min, max):
        fn = make_adder(reduce)
        check(fn, (X,), (X + 1,), capsys=capsys)
        compiled = carve.compile(fn, backend="eager", fullgraph=False)
        torch.testing.assert_close(compiled(X, reduce=sum), fn(X, reduce=sum))


# -- calls of closures defined in the function ------------------------------------------------------

def closure_reading_cells_after_a_print(x, scale):
    offset = x.sum()

    def shift(y):
        return y * scale + offset  # reads two cells of the compiled function

    print("step")
    return shift(x.cos())


def closure_writing_a_cell(x, n):
    total = x * 0

    def add(y):
        nonlocal total
        total = total + y  # rebinds the compiled function's cell

    print("start")
    for i in range(n):
        add(x * i)
    return total + 1


def test_a_closure_reading_cells_is_called_inside_a_region(capsys):
    # Dynamo traces the closure (new on every call) inside the region, reading this call's cells.
    x = torch.randn(4)
    compiled, _ = check(closure_reading_cells_after_a_print, (x, 2.0), (x, 3.0), (torch.randn(4), -1.0),
                        capsys=capsys, glue=("return shift(x.cos())",))
    region = compiled.regions[-1]
    assert region.path == "dynamo"


def test_a_closure_writing_a_cell_keeps_its_calls_python(capsys):
    # A region holding `total`'s value would miss the closure's rebinding of the cell.
    check(closure_writing_a_cell, (torch.randn(3), 0), (torch.randn(3), 4), (torch.randn(3), 2), capsys=capsys)


# -- a handler sees what a graph raises on a later call's data (CRV022) ----------------------------

def index_or_fallback(x, idx):
    try:
        y = x[idx] * 2  # out of range on some calls only: the graph raises when it runs
    except IndexError:
        y = x.sum()
    return y + 1


def cholesky_with_jitter(a):
    try:
        factor = torch.linalg.cholesky(a)
    except RuntimeError:  # torch.linalg.LinAlgError on a matrix that is not positive-definite
        factor = torch.linalg.cholesky(a + 10.0 * torch.eye(a.shape[0]))
    return factor.sum()


def logs_then_indexes(x, indices):
    total = x.sum() * 0
    for idx in indices:
        print("index", idx)  # a graph break inside the loop: the try is in a region of its body
        try:
            total = total + x[idx]
        except (IndexError, ValueError):
            total = total - 1
    return total


def test_handler_catches_what_the_graph_raises_on_later_data(capsys):
    # Captured with its try (torch.compile: one frame, one graph), the graph's op runs after the
    # trace left the try: the error of a later call's data escaped the handler.
    compiled, outcomes = check(index_or_fallback, (X, 1), (X, 2), (X, 7), (X, -1), (X, 9), capsys=capsys)
    assert outcomes == {"returned"}
    assert all(region.path != "eager" for region in compiled.regions)
    positive, indefinite = torch.eye(3) * 2.0, -torch.eye(3)
    check(cholesky_with_jitter, (positive,), (indefinite,), (positive * 3,), (indefinite * 2,), capsys=capsys)
    check(logs_then_indexes, (X, [0, 1]), (X, [2, 8]), (X, [9, 3, -7]), capsys=capsys)


def test_explain_says_why_the_try_stays_python():
    out = carve.explain(index_or_fallback)(X, 1)
    assert out.graph_break_count == 0  # not a break under torch.compile: a choice of carve's
    kept = [reason for reason in out.kept_in_python if reason.code == "CRV022"]
    assert len(kept) == 1 and "except IndexError" in kept[0].message
    assert "kept in Python by carve" in str(out) and "CRV022" in str(out)


def psd_safe_cholesky(a):
    # The shape of gpytorch's psd_safe_cholesky: retry with jitter when the factorization fails.
    try:
        return torch.linalg.cholesky(a)
    except RuntimeError:
        return torch.linalg.cholesky(a + 10.0 * torch.eye(a.shape[0]))


def calls_a_safe_cholesky(a):
    b = a * 1.0 + 0.0
    return psd_safe_cholesky(b).sum() * 2


def test_a_helpers_handler_catches_what_its_graph_raises(capsys):
    # Without a break of its own the caller would be Dynamo's whole, the helper inlined into its
    # graph: the helper's try counts as a break at the call, which runs the helper compiled alone.
    positive, indefinite = torch.eye(3) * 2.0, -torch.eye(3)
    check(calls_a_safe_cholesky, (positive,), (indefinite,), (positive * 3,), (indefinite * 2,), capsys=capsys)


def test_handlers_that_a_graph_cannot_raise_into_keep_one_graph(capsys):
    # KeyError, AttributeError, ValueError from a tensor op surface while tracing (static shapes),
    # where Dynamo models them: such a try is captured with what surrounds it.
    def lookup(x, table):
        try:
            w = table["w"]
        except KeyError:
            w = 1.0
        return x * w

    compiled, _ = check(lookup, (X, {"w": 2.0}), (X, {}), capsys=capsys)
    assert len(compiled.regions) == 1


# -- code that reads the function's own frame (CRV023) ---------------------------------------------

def reports_with_locals(x, step):
    y = x.softmax(-1)
    print("step {step}: total {total}".format(total=float(y.sum()), **locals()))
    scale = step + 1
    z = y * scale
    return sorted(k for k in locals() if not k.startswith("__")), z


def names_with_locals(x, step):
    y = x.softmax(-1)
    scale = step + 1
    z = y * scale
    return sorted(k for k in locals() if not k.startswith("__")), z


def test_locals_sees_the_names_eager_has(capsys, caplog):
    # carve's split keeps a region's locals in the region's frame, and Dynamo's resume function
    # after a break drops the locals dead after it: a function that reads its own frame is
    # captured whole by Dynamo when it does not break, and runs as written (said once) when it does.
    from carve.testing import CountingBackend

    for fn, compiles in ((names_with_locals, True), (reports_with_locals, False)):
        counting = CountingBackend()
        compiled = carve.compile(fn, backend=counting)
        with caplog.at_level(logging.WARNING, logger="carve"):
            for step in (0, 1, 1, 4):
                expected, expected_out = _run(fn, (X, step), capsys)
                got, got_out = _run(compiled, (X, step), capsys)
                assert got_out == expected_out
                assert got[0] == expected[0] == "returned"
                assert got[1][0] == expected[1][0]
                torch.testing.assert_close(got[1][1], expected[1][1])
        assert (counting.graphs >= 1) is compiles, fn.__name__
        said = [r for r in caplog.records if "CRV023" in r.getMessage()]
        assert len(said) == (0 if compiles else 1), fn.__name__
        caplog.clear()
