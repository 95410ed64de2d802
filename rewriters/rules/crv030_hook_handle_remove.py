"""CRV030: removing a hook through a handle made outside the compiled frame.

    for hook in self.hooks:
        hook.remove()                   # CRV030: handles registered by an earlier call
    handle.remove()                     # CRV030
    names.remove("x")                   # not flagged: list.remove takes the element

`check_call` flags `.remove()` called with no argument: the `RemovableHandle` that
`register_forward_hook` and the other `register_*_hook` methods return (a list's or set's
`remove` takes the element to remove).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.checks.context import CheckContext, method_name, method_receiver
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV030", "hook-handle-remove", "hook removed through a handle made outside compiled code",
    "Dynamo cannot represent a torch.utils.hooks.RemovableHandle created in another frame (\"Attempted to "
    "represent unregistered RemovableHandle\"): `handle.remove()` breaks the graph.",
    "Remove hooks outside the compiled function (after it returns), or register and remove them in the same "
    "compiled call.",
    Strategy.DONT_COMPILE,
    what="Flags `x.remove()` called without arguments: removing a module hook through the handle "
         "`register_forward_hook` (or another `register_*_hook`) returned.",
    why="Dynamo tracks only the hook handles registered while it traces; a handle kept from an earlier call "
        "(`self.hooks`, a global) is an object it cannot put in a graph, so the call to its `remove` stops the "
        "graph (torch 2.13), and inside a loop over the handles the whole frame is skipped.",
    bad_example="def cleanup(self):\n    for hook in self.hooks:\n        hook.remove()",
    good_example="out = compiled_decode(tokens)\nfor hook in hooks:   # outside compiled code\n    hook.remove()",
    known_problems="The receiver's type is not known from the source: another object with a `remove()` of no "
                   "argument is flagged, and so is a handle registered earlier in the same compiled frame, which "
                   "Dynamo traces.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)


def check_call(call: cst.Call, ctx: CheckContext):
    if method_name(call) != "remove" or call.args:
        return
    if isinstance(method_receiver(call), (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return
    yield Violation(RULE.code, f"{ctx.dotted(call.func) or '.remove'}(): a hook handle made outside the compiled "
                               "frame, which torch.compile cannot represent")
