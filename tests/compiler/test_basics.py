"""carve.compile on the shapes of Python callables users write, compared with eager."""

from __future__ import annotations

import logging

import pytest
import torch

import carve


def chain(x, y):
    a = x * 2 + y
    b = a.sin()
    return b * a


def test_decorator_forms_give_eager_results(backend):
    x, y = torch.randn(5), torch.randn(5)
    plain = carve.compile(chain, backend=backend)
    decorated = carve.compile(backend=backend)(chain)
    assert torch.allclose(plain(x, y), chain(x, y))
    assert torch.allclose(decorated(x, y), chain(x, y))
    # Both forms are one compiled version of `chain` (same options; as torch.compile shares
    # Dynamo's cache on the code object): one graph, no breaks.
    assert plain is decorated
    assert backend.graphs == 1


def test_bare_decorator_defaults_to_inductor_and_wraps():
    @carve.compile
    def f(x):
        return x + 1

    assert f.options.backend == "inductor"
    assert f.__name__ == "f" and f.__wrapped__ is not None


def test_defaults_star_args_and_keyword_only(backend):
    def f(x, scale=2.0, *rest, shift, **extra):
        out = x * scale + shift
        for r in rest:
            out = out + r
        return out + extra.get("bias", 0.0)

    compiled = carve.compile(f, backend=backend)
    x = torch.randn(3)
    for args, kwargs in [((x,), {"shift": 1.0}), ((x, 3.0, x, x), {"shift": 0.5, "bias": 2.0})]:
        assert torch.allclose(compiled(*args, **kwargs), f(*args, **kwargs))


def test_closure_reads_and_nonlocal_writes_reach_the_enclosing_scope(backend):
    def make():
        count = 0
        offset = torch.ones(3)

        @carve.compile(backend=backend)
        def f(x):
            nonlocal count
            count += 1
            return x + offset * count

        def read():
            return count

        return f, read

    f, read = make()
    x = torch.zeros(3)
    assert torch.equal(f(x), torch.ones(3))
    assert torch.equal(f(x), torch.full((3,), 2.0))
    assert read() == 2


def test_method_compiled_in_class_body(backend):
    class Scaler:
        def __init__(self, k):
            self.k = k

        @carve.compile(backend=backend)
        def apply(self, x):
            return x * self.k + 1

    s2, s3 = Scaler(2.0), Scaler(3.0)
    x = torch.randn(4)
    assert torch.allclose(s2.apply(x), x * 2 + 1)
    assert torch.allclose(s3.apply(x), x * 3 + 1)  # another self: guarded, not baked


def test_lambda(backend):
    f = carve.compile(lambda x: x.cos() * 2, backend=backend)
    x = torch.randn(3)
    assert torch.allclose(f(x), x.cos() * 2)
    assert backend.graphs == 1


def test_wrong_arguments_are_clear_errors():
    with pytest.raises(TypeError, match="expects a callable"):
        carve.compile(42)
    with pytest.raises(TypeError, match="backend"):
        carve.compile(chain, backend=3)
    with pytest.raises(ValueError, match="recompile_limit"):
        carve.compile(chain, recompile_limit=0)


def test_source_unavailable_is_captured_whole_and_says_why(backend, caplog):
    namespace = {}
    exec("def made(x):\n    return x * 3\n", namespace)
    f = carve.compile(namespace["made"], backend=backend)
    with caplog.at_level(logging.WARNING, logger="carve"):
        out = f(torch.ones(2))
        again = f(torch.arange(3.0))
    assert torch.equal(out, torch.full((2,), 3.0))
    assert torch.equal(again, torch.arange(3.0) * 3)
    messages = [r.getMessage() for r in caplog.records if "source" in r.getMessage()]
    assert len(messages) == 1 and "made" in messages[0]
    assert f.regions[0].path == "dynamo" and len(f.regions[0].graphs) >= 1


def test_fullgraph_with_unavailable_source_is_one_graph_or_an_error(backend):
    namespace = {}
    exec("def made(x):\n    return x * 3\n", namespace)
    exec("def breaks(x):\n    print('y', x)\n    return x * 3\n", namespace)
    f = carve.compile(namespace["made"], backend=backend, fullgraph=True)
    assert torch.equal(f(torch.ones(2)), torch.full((2,), 3.0))
    g = carve.compile(namespace["breaks"], backend=backend, fullgraph=True)
    with pytest.raises(carve.GraphBreakError):
        g(torch.ones(2))


def test_function_from_a_notebook_cell_is_found_through_linecache(backend):
    # IPython registers each cell's source in linecache under a pseudo file name.
    import linecache

    filename = "<ipython-input-7-carvetest>"
    source = "def cell_fn(x):\n    y = x * 3\n    print('cell', tuple(y.shape))\n    return y + 1\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"torch": torch}
    exec(compile(source, filename, "exec"), namespace)
    compiled = carve.compile(namespace["cell_fn"], backend=backend)
    x = torch.randn(2)
    for _ in range(2):
        assert torch.allclose(compiled(x), x * 3 + 1)
    assert backend.graphs == 2  # really compiled, not the eager fallback
