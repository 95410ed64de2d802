"""A compiled function whose every region runs as Python runs as written.

Once carve has weighed a function's regions, some functions keep none compiled: every region
was not worth a compile, was faster as Python, or calls a model that is itself all Python
(pytorch/examples' regression fit: a one-layer Linear trained by hand, 60 us a step). The
rewritten function then runs the user's statements through carve's region calls and checkpoints
for nothing, a few microseconds a step. From then on the function's own code runs:

    before (settled)                                   after
    def main():                                        def main():              # the user's code
        for batch_idx in count(1):                         for batch_idx in count(1):
            batch_x, batch_y = _carve_f.compiled(              batch_x, batch_y = get_batch()
                get_batch)()                                   fc.zero_grad()
            output = _main_graph_region_0(...)  # Python       output = F.smooth_l1_loss(...)
            _carve_f.graph_break(88, "CRV004")                 loss = output.item()
            loss = output.item()                               ...
            ...

Settled means, checked on the function's calls 2, 3, 5, 9, 17, 33 and 65, then every 128th
(`CHECK_CALLS`, `CHECK_EVERY`):
- every region of the function runs as Python for good (a region still priced, weighed or
  compiled keeps the rewritten function), and every model it runs compiled runs only as Python
  too (its compiled forward settled, or torch's own module's whole-call capture decided Python);
- every callee compiled on its own (`_carve_f.compiled(helper)`) has been reached, so none is
  first met after the switch, and every carve function the rewritten code handed out is settled;
- no whole-call weighing is under way and no fullgraph.

Some functions never switch (`may_run_as_written`, decided once per build): generators and
coroutines (their body runs after the call, under whatever break policy is in force then), a
function that hands out functions it defines compiled (`compiled_definition`: a definition that
leaves the function keeps its own checkpoints), and a function that sets the graph-break policy
itself, by name or through what its global names hold (an alias of torch's or carve's setter,
a user context manager or function whose code sets it).

A call while a graph break must raise (fullgraph scope, error_on_graph_break) or during
`carve.explain` takes the rewritten function, whose checkpoints raise and report.
Both ways run the user's statements in the user's order, so results are the same; what the
switch gives up is what only the rewritten function does: logging a graph break the first time a
statement never reached before runs (carve.explain and `carve lint` report every break
before the run), and compiling a callee rebound after the switch (it runs as written).
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable
from typing import Any

from carve.explain_session import fresh_tables
from carve.rewriters.rules import crv016_callee_graph_break
from carve.runtime.capture_policy import break_raises

# Calls of a compiled function (counted from its first) after which carve checks whether it
# has settled, then every CHECK_EVERY calls: regions settle on their first calls (pricing, the
# cost check's timed calls), callees and models on theirs.
CHECK_CALLS = (2, 3, 5, 9, 17, 33, 65)
CHECK_EVERY = 128
CALLEE_BREAK = crv016_callee_graph_break.RULE.code

# Names whose use inside a function changes how its graph breaks are treated while it runs.
_BREAK_POLICY_NAMES = frozenset({"error_on_graph_break", "set_fullgraph", "fullgraph_scope",
                                 "error_on_graph_break_scope", "push_error_on_graph_break", "push_fullgraph"})
# Generators and coroutines run their body after the call returns: a break policy checked at the
# call would not be the one in force when the body runs.
_SUSPENDABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE
# How deep the user functions and classes a function names are read for a break-policy setting.
_POLICY_DEPTH = 3


def calls_until_next_check(calls: int) -> int:
    """After `calls` calls of a function: how many more until the next settle check."""
    for at in CHECK_CALLS:
        if at > calls:
            return at - calls
    return CHECK_EVERY


def may_run_as_written(fn: types.FunctionType, rewritten: types.FunctionType) -> bool:
    """Whether `fn` may ever run as written in place of `rewritten` (decided once per build): not a
    generator or coroutine, no break-policy setting in its code or in the user functions and
    classes it names (`changes_break_policy`), and no function it defines handed out compiled
    (`compiled_definition`: a definition that leaves the function keeps its own checkpoints)."""
    code = fn.__code__
    if code.co_flags & _SUSPENDABLE:
        return False
    if "compiled_definition" in _names_in(rewritten.__code__)[0]:
        return False
    return not changes_break_policy(code, fn.__globals__)


def changes_break_policy(code: types.CodeType, namespace: dict | None = None, depth: int = _POLICY_DEPTH) -> bool:
    """Whether `code` (or a function, lambda or comprehension it defines) sets the graph-break
    policy: by name (a call, an attribute, a keyword: `config.patch(error_on_graph_break=True)`),
    or through what a global name of it holds: torch's or carve's setter under another name
    (`strict = torch._dynamo.error_on_graph_break`), or a user function or class (a context
    manager of the user's) whose code sets it, read `depth` calls deep."""
    names, keywords = _names_in(code)
    if not _BREAK_POLICY_NAMES.isdisjoint(names | keywords):
        return True
    if namespace is None or depth == 0:
        return False
    setters = _policy_setters()
    for name in names:
        value = namespace.get(name)
        if value is None:
            continue
        if any(value is setter for setter in setters):
            return True
        for function in _user_code_of(value):
            if changes_break_policy(function.__code__, function.__globals__, depth - 1):
                return True
    return False


def _names_in(code: types.CodeType) -> tuple[set[str], set[str]]:
    """The names `code` and the code it defines use (`co_names`), and the keyword names its calls
    pass (string tuples among the constants)."""
    names, keywords = set(code.co_names), set()
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner_names, inner_keywords = _names_in(const)
            names |= inner_names
            keywords |= inner_keywords
        elif isinstance(const, tuple):
            keywords.update(c for c in const if isinstance(c, str))
    return names, keywords


def _policy_setters() -> tuple:
    import torch._dynamo

    from carve.runtime import markers

    return (torch._dynamo.error_on_graph_break, markers.error_on_graph_break)


def _user_code_of(value: Any) -> list:
    """The user functions a global name's value runs when called or entered: a function (through
    `functools.wraps` wrappers such as `contextlib.contextmanager`'s), or a class's methods."""
    from carve.runtime.user_code import is_user_code

    functions = []
    if isinstance(value, type):
        candidates = [member for member in vars(value).values() if isinstance(member, types.FunctionType)]
    else:
        candidates = [value]
        wrapped = getattr(value, "__wrapped__", None)
        if wrapped is not None:
            candidates.append(wrapped)
    for candidate in candidates:
        if isinstance(candidate, types.FunctionType) and is_user_code(candidate.__code__):
            functions.append(candidate)
    return functions


def settled(regionset: Any, seen: set) -> bool:
    """Whether every region of `regionset` runs as Python for good (the models it runs compiled
    included), every call of a callee compiled on its own has run (a callee first reached later
    must be compiled then), and every carve function it handed out (callees, definitions) is
    settled. `seen`: functions already asked (recursion)."""
    for region in regionset.regions:
        if not region.eager:
            return False
        for view in region.compiled_models:
            if not _model_settled(view, seen):
                return False
    calls = regionset.eager_calls
    if any(finding.code == CALLEE_BREAK and (line, CALLEE_BREAK) not in calls
           for line, finding in regionset.findings.items()):
        return False
    try:
        handed_out = [*regionset.callees(), *regionset.definitions.values()]
    except RuntimeError:  # another thread added a callee meanwhile: asked again later
        return False
    from carve.api import compiled_function_of

    for function in handed_out:
        compiled = compiled_function_of(function)
        if compiled is not None and not compiled.settled_as_written(seen):
            return False
    return True


def _model_settled(view: Any, seen: set) -> bool:
    """A model a region runs compiled: its compiled forward (a carve function, or a whole-call
    capture for torch's own modules) runs only as Python."""
    from carve.api import WholeCall, compiled_function_of

    forward = getattr(type(view).forward, "__carve_version__", None)  # what carve made of it
    if not isinstance(forward, WholeCall):
        compiled = compiled_function_of(forward)  # through a decorator's wrapper (transformers')
        return compiled is not None and compiled.settled_as_written(seen)
    # A whole-call capture (torch's own modules) has a region for positional calls and one for
    # calls with keywords: those the model's calls have used must run as Python.
    used = [region for region in (forward.positional, forward.region) if region is not None and region.called]
    return bool(used) and all(region.eager for region in used)


def call_as_written(fn: Callable[..., Any], rewritten: Callable[..., Any]) -> Callable[..., Any]:
    """What a settled function's calls run: `fn` itself, or `rewritten` while a graph break must
    raise or carve.explain runs."""

    def as_written(*args: Any, **kwargs: Any) -> Any:
        if break_raises() or fresh_tables() is not None:
            return rewritten(*args, **kwargs)
        return fn(*args, **kwargs)

    as_written.__wrapped__ = fn  # type: ignore[attr-defined]
    return as_written


__all__ = ["CHECK_CALLS", "CHECK_EVERY", "calls_until_next_check", "may_run_as_written", "changes_break_policy",
           "settled", "call_as_written"]
