"""Which torch `carve lint` answers for, and what changed in Dynamo between versions.

    carve lint src/                              # for the installed torch (read from its metadata)
    carve lint src/ --torch-version 2.6          # for another one
    [tool.carve.lint] torch-version = "2.6"      # the same, in pyproject.toml

The installed version is read with `importlib.metadata` (the package's METADATA file): torch is
never imported. Without torch installed and without the option, the version the rules were
checked against (CHECKED_WITH) is assumed.

The rules say what torch.compile does; CHECKED_WITH is the torch their verdicts were checked
against: the accuracy corpora of tests/lint_corpus* are labelled by `torch._dynamo.explain` of
that version (tests/lint_corpus/ground_truth.py), and tests/lint/test_lint_torch_knowledge.py
compares the tables carve copies from Dynamo (its skipped functions and modules) with the
installed torch's. DYNAMO_CHANGES lists the constructs whose verdict depends on the version:
Dynamo traces them from `since` on and breaks on them before. The rules that know one
(rules/crv008_break_in_with.py, rules/crv010_generator.py) report it only for an older torch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

Version = tuple[int, int, int]

CHECKED_WITH: Version = (2, 13, 0)


@dataclass(frozen=True)
class DynamoChange:
    since: Version
    what: str
    # Where the version comes from: carve checks its verdicts on CHECKED_WITH only.
    source: str


DYNAMO_CHANGES = {
    "contextlib-contextmanager": DynamoChange(
        (2, 7, 0), "context managers written with @contextlib.contextmanager are traced (entering one breaks the "
                   "graph before)", "pytorch/pytorch#136033, merged December 2024, first released in 2.7"),
    "generator-call": DynamoChange(
        (2, 7, 0), "calls of generator functions from compiled code are inlined (a break before)",
        "pytorch/pytorch#141055, merged January 2025, first released in 2.7"),
}


def parse_version(text: str) -> Version:
    """(2, 13, 0) for "2.13.0+cpu", "2.13", "2.13.0a0+git..."; ValueError when it is not a version."""
    match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        raise ValueError(f"not a torch version: {text!r} (expected e.g. 2.13 or 2.13.0)")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def installed_torch_version() -> Version | None:
    """The installed torch's version, from its metadata (torch is not imported); None when absent."""
    from importlib import metadata

    try:
        return parse_version(metadata.version("torch"))
    except (metadata.PackageNotFoundError, ValueError):
        return None


def traces(change: str, version: Version | None) -> bool:
    """Whether the torch `version` (None: the checked one) traces the construct `change` names."""
    return (version or CHECKED_WITH) >= DYNAMO_CHANGES[change].since


def describe(version: Version) -> str:
    return ".".join(str(part) for part in version)
