"""Finding and processing the Python files a command line is given.

    for path in python_files(["src", "model.py"], exclude=["build"]):   # recursive, excludes honoured
        ...
    results = process_files(paths, work, jobs=None, progress=True)      # parallel, ordered results

Shared by `carve rewrite` and `carve lint`. Directories are walked in sorted
order (deterministic output), skipping hidden directories, virtual
environments, build output, and paths matched by the exclude patterns
(gitignore-style globs: `build/`, `*_pb2.py`, `tests/fixtures/**`) and by the
`.gitignore` files found on the way down.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

DEFAULT_EXCLUDES = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", "node_modules",
    "build", "dist", ".eggs", "*.egg-info", ".mypy_cache", ".pytest_cache", ".ruff_cache",
)

T = TypeVar("T")
R = TypeVar("R")


class InputError(Exception):
    """A path given on the command line cannot be used."""


def _matches(relative: str, name: str, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if not pattern or pattern.startswith("#"):
            continue
        if pattern.startswith("/"):
            if fnmatch.fnmatch(relative, pattern.lstrip("/")):
                return True
        elif fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(relative, f"*/{pattern}"):
            return True
    return False


def _gitignore_patterns(directory: Path) -> list[str]:
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith(("#", "!"))]


def python_files(paths: Iterable[str], exclude: Iterable[str] = (), use_gitignore: bool = True) -> Iterator[Path]:
    """The .py files under `paths`, each once, in a stable order; InputError for a missing path."""
    exclude = list(DEFAULT_EXCLUDES) + list(exclude)
    seen: set[Path] = set()
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise InputError(f"{given}: no such file or directory")
        if root.is_file():
            resolved = root.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield root
            continue
        yield from _walk(root, exclude, use_gitignore, seen)


def _walk(root: Path, exclude: list[str], use_gitignore: bool, seen: set[Path]) -> Iterator[Path]:
    ignore_stack: dict[str, list[str]] = {}
    for directory, subdirectories, filenames in os.walk(root):
        directory_path = Path(directory)
        relative_directory = os.path.relpath(directory, root)
        patterns = list(exclude)
        if use_gitignore:
            ignore_stack[directory] = _gitignore_patterns(directory_path)
            parent = directory
            while True:
                patterns.extend(ignore_stack.get(parent, []))
                if os.path.normpath(parent) == os.path.normpath(str(root)):
                    break
                parent = os.path.dirname(parent)
        subdirectories[:] = sorted(
            d for d in subdirectories
            if not d.startswith(".") and not _matches(os.path.normpath(os.path.join(relative_directory, d)), d, patterns)
        )
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            relative = os.path.normpath(os.path.join(relative_directory, filename))
            if _matches(relative, filename, patterns):
                continue
            path = directory_path / filename
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield path


class Progress:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a TTY."""

    def __init__(self, total: int, label: str, enabled: bool | None = None) -> None:
        self.total = total
        self.label = label
        self.done = 0
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    def advance(self, count: int = 1) -> None:
        self.done += count
        if self.enabled and self.total:
            width = 30
            filled = int(width * self.done / self.total)
            sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}")
            sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.total:
            sys.stderr.write("\r" + " " * (len(self.label) + 50) + "\r")
            sys.stderr.flush()


def process_files(
    items: list[T], work: Callable[[T], R], *, jobs: int | None = None, label: str = "carve", progress: bool | None = None
) -> list[R]:
    """`[work(item) for item in items]`, across processes when there is enough to do; order kept.

    `work` must be a module-level function (it is pickled to the worker processes).
    """
    jobs = jobs or os.cpu_count() or 1
    bar = Progress(len(items), label, progress)
    try:
        if jobs <= 1 or len(items) < 8:
            results = []
            for item in items:
                results.append(work(item))
                bar.advance()
            return results
        chunk = max(1, min(32, len(items) // (jobs * 4)))
        results = []
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for result in pool.map(work, items, chunksize=chunk):
                results.append(result)
                bar.advance()
        return results
    finally:
        bar.close()
