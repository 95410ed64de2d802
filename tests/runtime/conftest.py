"""Fixtures for carve.runtime tests: a region factory, fresh log state (`backend` is tests/conftest.py's)."""

import pytest

from carve.runtime import CompileOptions, GraphRegion, log


@pytest.fixture
def make_region():
    def make(fn, backend="eager", **options):
        code = fn.__code__
        return GraphRegion(fn, name=fn.__name__, options=CompileOptions(backend=backend, **options),
                           filename=code.co_filename, first_line=code.co_firstlineno,
                           last_line=code.co_firstlineno + 10)
    return make


@pytest.fixture(autouse=True)
def _fresh_logs():
    log.reset()
    yield
    log.reset()
