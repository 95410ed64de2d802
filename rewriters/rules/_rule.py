"""What a rule is (`Rule`, `Strategy`) and what its check reports at one node (`Violation`).

Plain data: no libcst, no torch. Each `crvNNN_*.py` module of this package declares one
`RULE = Rule(...)`; the package's `__init__` collects them into the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple


class Strategy(Enum):
    """The three ways of resolving a graph break (see torch's fullgraph guide)."""

    REWRITE = "rewrite the code so that it has no graph break"
    ESCAPE_HATCH = "wrap a pure function in carve.nonstrict_trace or a custom op"
    DONT_COMPILE = "move the code out of the compiled function or mark it carve.disable"


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    title: str
    # What the compiler, `carve.explain` and `carve lint` print about a finding (with the hint).
    explanation: str
    hint: str
    strategy: Strategy
    # The compiler can outline the statement into an eager helper by itself.
    outlinable: bool = True
    # torch.compile 2.13 breaks the graph (or skips the frame) here.
    breaks_torch_compile: bool = True
    # carve runs the statement eagerly between two of its graphs, so under
    # `fullgraph=True` it is a GraphBreakError even where torch.compile keeps one graph.
    splits_carve_graph: bool = True
    # Reported by `carve lint` by default (mostly the rules that break torch.compile: lint
    # answers "where does torch.compile break?"; --extend-select adds carve's own splits).
    lint_default: bool = True
    # torch.compile skips the whole frame on this: the costliest kind.
    skips_frame: bool = False
    # The tensor work inside such a statement can move into the graph before it, leaving only
    # the Python effect eager (`print(y.mean())`: the mean is computed in the graph).
    hoistable: bool = False
    # Inside a Python-valued branch of a region (`if verbose: print(...)`) a capture resumes
    # after it (Dynamo splits the graph there and carries on): the branch stays in the region.
    resumable_in_branch: bool = False
    # The rule reference (docs/rules.md, `carve lint --explain`), in ruff's sections: what the
    # rule flags, why that matters, an example and what to write instead, the honest limits
    # of the detection, and what `carve lint --fix` or the compiler does about it by itself.
    what: str = ""
    why: str = ""
    bad_example: str = ""
    good_example: str = ""
    known_problems: str = ""
    fix_safety: str = ""


class Violation(NamedTuple):
    """What a check reports at one node, before the analysis gives it a position:

        yield Violation("CRV019", "xs.append() mutates a Python object", subject="xs")

    `subject` names the local object a side effect changes (a plain name), so that a callee's
    change to a container it made itself is not mistaken for one its caller sees. A check of a
    call to a user function names the callee's own finding in `callee_stack` ("file:line: ...",
    outermost first); `frozen_by_tracing` marks Python state a tracer would freeze (the
    finding's fields of the same names, rewriters/findings.py)."""

    code: str
    message: str
    subject: str | None = None
    callee_stack: tuple[str, ...] = ()
    frozen_by_tracing: bool = False


def containment_check(code: str, statements: tuple[type, ...], kind: str) -> Callable[[object], Iterator[Violation]]:
    """The check of a rule reporting a compound statement whose body breaks the graph (a loop,
    a try, a with): the analysis calls it once it knows the body broke.

        check_containment = containment_check("CRV006", (cst.For, cst.While), "a loop")
    """

    def check_containment(statement: object) -> Iterator[Violation]:
        if isinstance(statement, statements):
            yield Violation(code, f"a graph break inside {kind}: torch.compile would skip the whole function")

    return check_containment
