"""`carve lint` answers for one torch version: the installed one (read from its metadata, torch not
imported), `--torch-version`, or `torch-version` in [tool.carve.lint]. Constructs Dynamo traces
only from some version on (rewriters/lint/torch_version.py) are breaks for older ones."""

import importlib.metadata

from carve.rewriters.lint import LintConfig, lint_source
from carve.rewriters.lint.torch_version import CHECKED_WITH, DYNAMO_CHANGES, parse_version, traces

from .conftest import run_cli

GENERATORS = """
import contextlib
import torch

def squares(x):
    for i in range(3):
        yield x * i

@contextlib.contextmanager
def tagged():
    yield

@torch.compile
def f(x):
    y = x * 2
    with tagged():
        y = y + 1
    return sum(squares(y))
"""


def test_versions_parse_as_torch_writes_them():
    assert parse_version("2.13.0+cpu") == (2, 13, 0)
    assert parse_version("2.6") == (2, 6, 0)
    assert parse_version("2.7.0a0+git1234") == (2, 7, 0)
    assert traces("generator-call", (2, 7, 0)) and not traces("generator-call", (2, 6, 9))
    assert all(change.since <= CHECKED_WITH for change in DYNAMO_CHANGES.values())


def test_generators_and_context_managers_called_from_compiled_code_break_before_torch_2_7_only():
    def codes(version):
        result = lint_source(GENERATORS, "m.py", LintConfig(torch_version=version))
        return [(f.code, f.line) for f in result.findings]

    assert codes((2, 13, 0)) == [] == codes(None)
    old = codes((2, 6, 0))
    assert old == [("CRV010", 7), ("CRV010", 11), ("CRV016", 16), ("CRV016", 18)]


def test_the_option_and_the_configuration_choose_the_version(write, tmp_path):
    path = write("gen.py", GENERATORS)
    assert run_cli(path).returncode == 0  # the installed torch traces them
    assert importlib.metadata.version("torch").startswith(".".join(map(str, CHECKED_WITH[:2])))
    old = run_cli(path, "--torch-version", "2.6")
    assert old.returncode == 1 and "CRV016" in old.stdout
    write("pyproject.toml", '[tool.carve.lint]\ntorch-version = "2.5.1"\n')
    assert run_cli(path, cwd=tmp_path).returncode == 1
    bad = run_cli(path, "--torch-version", "two")
    assert bad.returncode == 2 and "--torch-version" in bad.stderr
