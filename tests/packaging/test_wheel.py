"""The wheel a user installs works: built from a copy of the source, installed into a fresh
virtual environment, and used from outside the repository.

    pip wheel <copy> --no-deps --no-build-isolation      # carve-<version>-py3-none-any.whl
    python -m venv env; pip --python env/bin/python install --no-deps <wheel>
    env/bin/carve lint bad.py; env/bin/carve rewrite ok.py; env/bin/python -m carve --help
    env/bin/python -c "carve.compile(f, backend='eager')(x) == f(x)"

torch and libcst come from the project's environment through a `.pth` file (the test has no
network beyond package registries, and torch is gigabytes), so only carve itself comes from
the wheel; every run checks `carve.__file__` to prove the editable install is not what ran.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Source folder -> import package, as pyproject's package-dir maps them.
FOLDERS = {"compiler": "carve", "rewriters": "carve/rewriters", "runtime": "carve/runtime"}



def _installed(distribution: str) -> bool:
    # Asked through package metadata, not importlib.util.find_spec: setuptools' distutils shim
    # answers find_spec("pip") by switching itself off for the whole process, after which
    # Inductor's C++ builder (which imports setuptools) fails in every later test.
    try:
        importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


pytestmark = [
    pytest.mark.packaging,
    pytest.mark.skipif(
        not all(_installed(name) for name in ("pip", "setuptools")),
        reason="building the wheel needs pip and setuptools in the test environment",
    ),
]

LINTED = """\
import torch


@torch.compile
def step(x):
    y = x * 2
    print("y", y)
    return y + 1
"""

REWRITTEN = """\
import carve


@carve.compile(backend="eager")
def step(x):
    y = x * 2
    print("norm", y.norm())
    return y + 1
"""

COMPILED = """\
import carve, torch

def step(x):
    y = x.sin() * 2
    print("mean", round(float(y.mean()), 4))
    return y.cos() + 1

x = torch.linspace(-1, 1, 5)
expected = step(x)
compiled = carve.compile(step, backend="eager")
assert torch.equal(compiled(x), expected)
assert torch.equal(compiled(x), expected)
print("carve at", carve.__file__)
"""


def _run(args, cwd, env=None, check=True):
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode}\nstdout:\n{done.stdout}\nstderr:\n{done.stderr}")
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(env's python, env's bin dir, a work directory outside the repository)."""
    tmp = tmp_path_factory.mktemp("wheel")
    # Build from a copy: an in-tree build leaves build/ and *.egg-info in the repository.
    source = tmp / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for folder in FOLDERS:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--no-build-isolation", "-q", "-w", dist], cwd=tmp)
    (wheel,) = dist.glob("carve-*.whl")

    env_dir = tmp / "env"
    _run([sys.executable, "-m", "venv", "--without-pip", env_dir], cwd=tmp)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=tmp).stdout.strip()
    # torch, libcst, numpy from the project's environment, after the env's own site-packages.
    Path(purelib, "project_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel], cwd=tmp)

    work = tmp / "work"
    work.mkdir()
    return wheel, python, bin_dir, work, Path(purelib)


def _env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_wheel_holds_every_module_and_one_version(installed):
    wheel, *_ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = {
        f"{package}/{path.relative_to(ROOT / folder).as_posix()}"
        for folder, package in FOLDERS.items() for path in (ROOT / folder).rglob("*.py")
    }
    assert expected - names == set()
    init = (ROOT / "compiler" / "__init__.py").read_text()
    version = re.search(r'^__version__ = "([^"]+)"', init, re.M).group(1)
    assert wheel.name.startswith(f"carve-{version}-")


def test_installed_carve_is_the_wheel(installed):
    _, python, _, work, purelib = installed
    where = _run([python, "-c", "import carve, carve.rewriters.lint, carve.rewriters.checks; print(carve.__file__)"],
                 cwd=work, env=_env()).stdout.strip()
    assert Path(where).is_relative_to(purelib)


def test_carve_lint_from_the_wheel(installed):
    _, _, bin_dir, work, _ = installed
    (work / "linted.py").write_text(LINTED)
    done = _run([bin_dir / "carve", "lint", "--no-progress", "linted.py"], cwd=work, env=_env(), check=False)
    assert done.returncode == 1, done.stderr
    assert "linted.py:7:" in done.stdout and "CRV003" in done.stdout


def test_carve_rewrite_from_the_wheel(installed):
    _, python, bin_dir, work, _ = installed
    (work / "rewritten.py").write_text(REWRITTEN)
    done = _run([bin_dir / "carve", "rewrite", "rewritten.py", "-o", "out"], cwd=work, env=_env())
    text = (work / "out" / "rewritten.py").read_text()
    assert "RegionSet" in text and "CRV003" in text, done.stdout
    # The rewritten module runs standalone with the installed carve, as eager does.
    script = textwrap.dedent("""\
        import importlib.util, sys, torch
        spec = importlib.util.spec_from_file_location("rewritten", "out/rewritten.py")
        module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
        x = torch.arange(4.0)
        print(module.step(x).tolist())
    """)
    ran = _run([python, "-c", script], cwd=work, env=_env())
    assert ran.stdout.splitlines()[-1] == "[1.0, 3.0, 5.0, 7.0]"
    assert ran.stdout.splitlines()[0].startswith("norm tensor(7.4833")


def test_python_dash_m_carve_from_the_wheel(installed):
    _, python, _, work, _ = installed
    done = _run([python, "-m", "carve", "--help"], cwd=work, env=_env())
    assert "lint" in done.stdout and "rewrite" in done.stdout
    version = _run([python, "-m", "carve", "--version"], cwd=work, env=_env())
    assert version.stdout.startswith("carve ")


def test_carve_compile_from_the_wheel(installed):
    _, python, _, work, purelib = installed
    (work / "compiled.py").write_text(COMPILED)
    done = _run([python, "compiled.py"], cwd=work, env=_env())
    lines = done.stdout.splitlines()
    assert lines[0] == lines[1] == lines[2]  # eager, then two compiled calls print alike
    assert Path(lines[-1].removeprefix("carve at ")).is_relative_to(purelib)
