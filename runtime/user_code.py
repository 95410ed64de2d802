"""Which code is the user's: one definition for every part of carve that asks.

    is_user_file("/home/me/train.py")                 # True
    is_user_file("<ipython-input-3-...>")             # True: a notebook cell is the user's
    is_user_file(".../site-packages/transformers/...") # False: an installed library
    is_user_file(".../torch/nn/modules/linear.py")    # False (and is_torch_file: True)
    is_user_file("<string>")                          # False: no file to point at

Asked by the compiler (which callees carve compiles in turn, which functions are torch's own
and traced whole) and by the runtime (which frame of a graph break's stack to name as the
user's line). Not the user's: the standard library, installed packages (site-packages, torch
wherever it is installed), carve itself, and code with no file except notebook cells.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sysconfig
import types

import torch


def _directory(path: str | None) -> str | None:
    return os.path.realpath(path) + os.sep if path else None


TORCH_DIR = os.path.realpath(os.path.dirname(torch.__file__)) + os.sep


def _package_directories(name: str) -> list[str]:
    """The folders of carve's package `name` (its three folders map onto one namespace)."""
    spec = importlib.util.find_spec(name)
    return [os.path.realpath(path) + os.sep for path in (spec.submodule_search_locations or [])] if spec else []


_NOT_USERS = tuple(sorted({directory for directory in (
    *(_directory(sysconfig.get_paths().get(key)) for key in ("stdlib", "platstdlib", "purelib", "platlib")),
    _directory(os.path.dirname(os.__file__)), TORCH_DIR,
    # carve's three folders (a checkout's compiler/, runtime/, rewriters/, or one installed package)
    *(directory for name in ("carve", "carve.runtime", "carve.rewriters") for directory in _package_directories(name)),
) if directory}))


@functools.lru_cache(maxsize=4096)
def is_user_file(filename: str) -> bool:
    """Whether code from `filename` is the user's (see the module docstring)."""
    if filename.startswith("<"):
        return filename.startswith("<ipython-input")
    return not os.path.realpath(filename).startswith(_NOT_USERS)


def is_user_code(code: types.CodeType) -> bool:
    return is_user_file(code.co_filename)


@functools.lru_cache(maxsize=4096)
def is_torch_file(filename: str) -> bool:
    """Whether `filename` is part of torch itself (F.relu, torch's context-manager decorators)."""
    return os.path.realpath(filename).startswith(TORCH_DIR)


__all__ = ["TORCH_DIR", "is_user_file", "is_user_code", "is_torch_file"]
