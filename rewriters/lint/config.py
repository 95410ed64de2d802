"""Which rules `carve lint` reports, from `pyproject.toml` and the command line.

    [tool.carve.lint]
    select = ["CRV"]                    # code prefixes; default: the rules marked lint_default
    ignore = ["CRV019"]
    extend-select = ["CRV019"]
    exclude = ["build/", "*_pb2.py"]
    all = false                         # lint every function that does tensor work, not only compiled ones
    unsafe-fixes = false                # let --fix apply fixes that may change a result (torch.where)
    torch-version = "2.13"              # lint for this torch (default: the installed one)
    [tool.carve.lint.per-file-ignores]
    "tests/*" = ["CRV003"]

Selection follows ruff: the longest prefix that matches a code decides, and
an ignore beats a select of the same length (`--select CRV0 --ignore CRV00`
leaves CRV010 and up).
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass, field
from pathlib import Path

from carve.rewriters.rules import RULES


class ConfigError(Exception):
    """A bad option or configuration value (exit code 2)."""


def check_prefixes(prefixes, option: str) -> list[str]:
    """Upper-cased prefixes; ConfigError when one matches no rule (a typo would silently select nothing)."""
    checked = []
    for prefix in prefixes:
        prefix = str(prefix).strip().upper()
        if not prefix:
            continue
        if prefix != "ALL" and not any(code.startswith(prefix) for code in RULES):
            raise ConfigError(f"{option}: {prefix!r} matches no carve rule code (CRV000-{max(RULES)})")
        checked.append(prefix)
    return checked


def _selected(code: str, select: list[str], ignore: list[str], default: bool) -> bool:
    # The default selection (rules marked lint_default) is the least specific of all.
    best_length, best_selects = (0, True) if default and RULES[code].lint_default else (-1, False)
    for prefixes, selects in ((select, True), (ignore, False)):
        for prefix in prefixes:
            matched_length = 0 if prefix == "ALL" else len(prefix)
            if (prefix == "ALL" or code.startswith(prefix)) and (
                matched_length > best_length or (matched_length == best_length and not selects)
            ):
                best_length, best_selects = matched_length, selects
    return best_selects


@dataclass
class LintConfig:
    # None: the default selection, the rules marked lint_default.
    select: list[str] | None = None
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    all_functions: bool = False
    # `--fix` also applies unsafe fixes (ones that may change a shape, dtype or result).
    unsafe_fixes: bool = False
    # Directory that per-file-ignores patterns are relative to.
    root: str = "."
    # The torch whose Dynamo the findings are for (rewriters/lint/torch_version.py); None: the
    # installed one, else the one the rules were checked against.
    torch_version: tuple[int, int, int] | None = None

    def enabled_codes(self, filename: str | None = None) -> frozenset[str]:
        ignore = list(self.ignore)
        if filename is not None:
            ignore += self.ignored_for(filename)
        select = (self.select or []) + self.extend_select
        default = self.select is None
        return frozenset(code for code in RULES if _selected(code, select, ignore, default))

    def ignored_for(self, filename: str) -> list[str]:
        if not self.per_file_ignores:
            return []
        path = os.path.abspath(filename)
        relative = os.path.relpath(path, os.path.abspath(self.root)).replace(os.sep, "/")
        name = os.path.basename(path)
        ignored: list[str] = []
        for pattern, codes in self.per_file_ignores.items():
            if fnmatch.fnmatch(relative, pattern) or fnmatch.fnmatch(name, pattern) or fnmatch.fnmatch(relative, pattern.rstrip("/") + "/*"):
                ignored.extend(codes)
        return ignored


def find_config(start_paths: list[str]) -> Path | None:
    """The nearest pyproject.toml with a [tool.carve.lint] table, above the first path, else above the cwd."""
    starts = [Path(p).resolve() for p in start_paths[:1]] + [Path.cwd()]
    for start in starts:
        directory = start if start.is_dir() else start.parent
        for candidate in [directory, *directory.parents]:
            pyproject = candidate / "pyproject.toml"
            if pyproject.is_file() and _lint_table(pyproject, strict=False) is not None:
                return pyproject
    return None


def _lint_table(pyproject: Path, strict: bool = True) -> dict | None:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10: the `tomli` dependency
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        if strict:
            raise ConfigError(f"{pyproject}: {error}") from None
        return None
    table = data.get("tool", {}).get("carve", {}).get("lint")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.carve.lint] must be a table")
    return table


def load_config(pyproject: Path | None) -> LintConfig:
    """The configuration in `pyproject` (defaults when None or when it has no [tool.carve.lint])."""
    config = LintConfig()
    if pyproject is None:
        return config
    if not pyproject.is_file():
        raise ConfigError(f"{pyproject}: no such configuration file")
    table = _lint_table(pyproject) or {}
    config.root = str(pyproject.parent)
    known = {"select", "ignore", "extend-select", "per-file-ignores", "exclude", "all", "extend-exclude", "unsafe-fixes",
             "torch-version"}
    for key, value in table.items():
        normalized = key.replace("_", "-")
        if normalized not in known:
            raise ConfigError(f"{pyproject}: unknown option {key!r} in [tool.carve.lint] (known: {', '.join(sorted(known))})")
        if normalized in ("all", "unsafe-fixes"):
            if not isinstance(value, bool):
                raise ConfigError(f"{pyproject}: `{key}` must be true or false")
            setattr(config, "all_functions" if normalized == "all" else "unsafe_fixes", value)
        elif normalized == "torch-version":
            from carve.rewriters.lint.torch_version import parse_version

            try:
                config.torch_version = parse_version(str(value))
            except ValueError as error:
                raise ConfigError(f"{pyproject}: torch-version: {error}") from None
        elif normalized == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{pyproject}: per-file-ignores must be a table of pattern = [codes]")
            config.per_file_ignores = {
                pattern: check_prefixes(_string_list(codes, pyproject, key), f"{pyproject}: per-file-ignores")
                for pattern, codes in value.items()
            }
        else:
            values = _string_list(value, pyproject, key)
            if normalized in ("exclude", "extend-exclude"):
                config.exclude.extend(values)
            else:
                setattr(config, normalized.replace("-", "_"), check_prefixes(values, f"{pyproject}: {key}"))
    return config


def _string_list(value, pyproject: Path, key: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{pyproject}: {key} must be a list of strings")
    return value
