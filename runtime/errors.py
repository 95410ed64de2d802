"""Graph-break events and the error carve raises for them.

A `BreakEvent` is what carve reports when a trace meets something a graph
cannot hold (an `.item()`, a `print`, a call to a disabled function...): the
rule code, a specific message, and where it happened. `lineno` is the line of
the statement in the *region function's own frame* (the line the compiler
re-splits the region at); `user_stack` goes from that frame down to the
innermost user frame where the break actually happened.

`GraphBreakError` is raised instead of falling back to eager when graph breaks
are errors (`fullgraph=True`, `error_on_graph_break(True)`). Its text reads
the rule's title, explanation, hint and strategy from the one rule registry,
`carve.rewriters.rules`, so it reads the same as the lint and the logs:

    model.py:12: CRV004 tensor converted to a Python value: Tensor.item() converts a tensor to a Python number
        s = x.max().item()
        ^
    `.item()`, `.tolist()` ... read the tensor's data into Python; ...
    hint: Keep the value a tensor ...
    strategy: rewrite the code so that it has no graph break
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass, field

from carve.rewriters.rules import rule

from .compat import DynamoUnsupported

StackEntry = tuple[str, int, str, str]  # (filename, lineno, function name, source line)


@dataclass
class BreakEvent:
    code: str
    message: str
    filename: str
    lineno: int
    user_stack: list[StackEntry] = field(default_factory=list)

    @property
    def location(self) -> tuple[str, int, str]:
        return (self.filename, self.lineno, self.code)

    def format(self) -> str:
        """One readable block: location, rule title, message, explanation, hint."""
        return format_break(self.code, self.message, self.filename, self.lineno, self.user_stack)


def source_line(filename: str, lineno: int) -> str:
    return linecache.getline(filename, lineno).rstrip("\n") if filename and lineno else ""


def format_break(code: str, message: str, filename: str, lineno: int,
                 user_stack: list[StackEntry] | None = None) -> str:
    r = rule(code)
    lines = [f"{filename}:{lineno}: {code} {r.title}: {message}"]
    src = source_line(filename, lineno)
    if src.strip():
        # The statement, then a caret under its first character.
        lines.append("    " + src.strip())
        lines.append("    ^")
    if user_stack and len(user_stack) > 1:
        lines.append("call stack (region frame first):")
        for fname, ln, func, text in user_stack:
            lines.append(f"  {fname}:{ln} in {func}: {text.strip()}")
    lines.append(r.explanation)
    lines.append(f"hint: {r.hint}")
    lines.append(f"strategy: {r.strategy.value}")
    return "\n".join(lines)


class GraphBreakError(DynamoUnsupported):
    """A graph break met where graph breaks are errors (fullgraph / error_on_graph_break).

    A `torch._dynamo.exc.Unsupported` (so a RuntimeError), as torch.compile's refusal is: code
    written for torch.compile that catches one catches the other. It is not counted in Dynamo's
    graph-break statistics (those are Dynamo's own)."""

    # What code reading an Unsupported looks at (Dynamo's __init__ is not run: it would count
    # carve's error among Dynamo's graph breaks).
    skip_frame = False
    category = None
    gb_type = None
    logged = False
    real_stack = None  # type: ignore[assignment]  # Dynamo's StackSummary is made by its __init__
    # What TorchDynamoException's __init__ sets, read by Dynamo if the error crosses a frame it compiles.
    frame_exec_strategy = None
    _torch_dynamo_tracer_output = None

    def __init__(self, event: BreakEvent):
        self.event = event
        self.code = event.code
        self.message = event.message
        self.filename = event.filename
        self.lineno = event.lineno
        self.user_stack = list(event.user_stack)
        self.source_line = source_line(event.filename, event.lineno)
        r = rule(event.code)
        self.hint = r.hint
        self.strategy = r.strategy.value
        self.title = r.title
        self.msg = event.format()
        RuntimeError.__init__(self, self.msg)

    @classmethod
    def from_parts(cls, code: str, message: str, filename: str, lineno: int,
                   user_stack: list[StackEntry] | None = None) -> "GraphBreakError":
        return cls(BreakEvent(code, message, filename, lineno, list(user_stack or [])))

    def __reduce__(self):
        return (GraphBreakError, (self.event,))
