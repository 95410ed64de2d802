"""carve's loggers, switched on with `CARVE_LOGS` (like `TORCH_LOGS`).

    CARVE_LOGS=graph_breaks,recompiles python train.py
    CARVE_LOGS=all python train.py          # also "+all"

Loggers: `carve.graph_breaks` (each break location once per process, with the
rule's explanation and hint), `carve.recompiles` (a region Dynamo compiled again;
`TORCH_LOGS=recompiles` says which guard failed), `carve.guards` (Dynamo's guards of
a region's newest version, after each compile), `carve.graph_code` (the FX code of
each compiled graph), `carve.dynamic` (graphs whose inputs Dynamo made symbolic: sizes,
numbers), `carve.perf` (a region kept as Python because its compiled call was slower).
The environment variable is read once, at import.
"""

from __future__ import annotations

import logging
import os
import sys

from .errors import BreakEvent

GRAPH_BREAKS = "carve.graph_breaks"
RECOMPILES = "carve.recompiles"
DYNAMIC = "carve.dynamic"
GUARDS = "carve.guards"
GRAPH_CODE = "carve.graph_code"
PERF = "carve.perf"
ARTIFACTS = {"graph_breaks": GRAPH_BREAKS, "recompiles": RECOMPILES, "guards": GUARDS, "graph_code": GRAPH_CODE,
             "dynamic": DYNAMIC, "perf": PERF}

graph_breaks_log = logging.getLogger(GRAPH_BREAKS)
recompiles_log = logging.getLogger(RECOMPILES)
dynamic_log = logging.getLogger(DYNAMIC)
guards_log = logging.getLogger(GUARDS)
graph_code_log = logging.getLogger(GRAPH_CODE)
perf_log = logging.getLogger(PERF)
# Backend failures and other things the user should hear about without asking.
warnings_log = logging.getLogger("carve")

_logged_breaks: set[tuple[str, int, str]] = set()
_logged_once: set[object] = set()


def parse_carve_logs(value: str) -> set[str]:
    """The logger names that a CARVE_LOGS value turns on; ValueError names unknown entries."""
    names: set[str] = set()
    for part in value.split(","):
        part = part.strip().lstrip("+")
        if not part:
            continue
        if part == "all":
            names.update(ARTIFACTS.values())
        elif part in ARTIFACTS:
            names.add(ARTIFACTS[part])
        else:
            raise ValueError(f"CARVE_LOGS: unknown entry {part!r}; known: all, {', '.join(sorted(ARTIFACTS))}")
    return names


def enable(names) -> None:
    """Route the named loggers to stderr at DEBUG level (what CARVE_LOGS does)."""
    for name in names:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        if not any(getattr(h, "_carve", False) for h in logger.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(logging.Formatter("[%(name)s] %(message)s"))
            handler._carve = True  # type: ignore[attr-defined]
            logger.addHandler(handler)


def _configure_from_env() -> None:
    value = os.environ.get("CARVE_LOGS", "")
    if value:
        try:
            enable(parse_carve_logs(value))
        except ValueError as e:
            print(f"carve: {e}", file=sys.stderr)


_configure_from_env()


def log_graph_break(event: BreakEvent) -> bool:
    """Log `event` at carve.graph_breaks once per (file, line, code); True if it was logged now."""
    key = event.location
    if key in _logged_breaks:
        return False
    _logged_breaks.add(key)
    graph_breaks_log.info("%s", event.format())
    return True


def log_once(key: object, logger: logging.Logger, level: int, msg: str, *args) -> bool:
    """Log a message once per process for `key`."""
    if key in _logged_once:
        return False
    _logged_once.add(key)
    logger.log(level, msg, *args)
    return True


def reset() -> None:
    """Forget which locations were logged (for tests)."""
    _logged_breaks.clear()
    _logged_once.clear()
