"""What the analysis reports: one `Finding` per graph-break-prone spot.

The same findings drive the compiler (which statements become eager), the
rewrite CLI (the comments on eager statements), `carve lint` and
`carve.explain`, so each carries everything a message needs: the rule code,
a message specific to the spot, and its position in the user's source.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from carve.rewriters.rules import rule


class RuleFacts:
    """`title` and `hint` of anything with a rule `code`, read from the one registry."""

    code: str

    @property
    def title(self) -> str:
        return rule(self.code).title

    @property
    def hint(self) -> str:
        return rule(self.code).hint


class Violation(NamedTuple):
    """What a check reports at one node, before the analysis gives it a position:

        yield Violation("CRV019", "xs.append() mutates a Python object", subject="xs")

    `subject` names the local object a side effect changes (a plain name), so that a callee's
    change to a container it made itself is not mistaken for one its caller sees."""

    code: str
    message: str
    subject: str | None = None


@dataclass(frozen=True)
class Finding(RuleFacts):
    code: str
    message: str
    line: int
    column: int = 0
    end_line: int = 0
    end_column: int = 0
    # For breaks found inside a callee: "file:line: message" entries, outermost first.
    callee_stack: tuple[str, ...] = field(default=(), compare=False)
    # Python state a tracer would freeze even where torch.compile traces it without a break
    # (an lru_cache helper, a random.Random draw): carve keeps it eager, and the function is
    # not handed whole to Dynamo.
    frozen_by_tracing: bool = field(default=False, compare=False)
    # The local name a side effect (CRV019) changes, when it is a plain name (`xs.append(y)`).
    subject: str | None = field(default=None, compare=False)


    def describe(self) -> str:
        return f"{self.code} {self.title}: {self.message}"
