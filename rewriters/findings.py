"""What the analysis reports: one `Finding` per graph-break-prone spot.

The same findings drive the compiler (which statements become eager), the
rewrite CLI (the comments on eager statements), `carve lint` and
`carve.explain`, so each carries everything a message needs: the rule code,
a message specific to the spot, and its position in the user's source. A rule's
check reports a `Violation` (code, message, subject: `carve.rewriters.rules`), which
the analysis positions into a `Finding`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from carve.rewriters.rules import Violation, rule

__all__ = ["Finding", "RuleFacts", "Violation"]


class RuleFacts:
    """`title` and `hint` of anything with a rule `code`, read from the one registry."""

    code: str

    @property
    def title(self) -> str:
        return rule(self.code).title

    @property
    def hint(self) -> str:
        return rule(self.code).hint


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
