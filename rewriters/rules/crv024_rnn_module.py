"""CRV024: a call to an `nn.RNN`, `nn.LSTM` or `nn.GRU` module.

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(28, 64, batch_first=True)
            self.cell = nn.LSTMCell(28, 64)

        def forward(self, x):
            out, _ = self.lstm(x)        # CRV024: Dynamo does not trace RNN modules
            h, c = self.cell(x[:, 0])    # not flagged: the cells are traced
            return out

`check_callee` reports a call whose target the resolver found to be an instance of one of
these classes: `carve lint` reads what a class's methods assign to `self.<name>`
(`self.lstm = nn.LSTM(...)`, any branch: `self.rnn = nn.RNN(...)` in an `else` counts), and what
a module assigns to a global name (rewriters/lint/driver.py). A submodule of the user's own
class that holds one is reported as CRV016 at the call of the submodule.
"""

from __future__ import annotations

from carve.rewriters.callees import CalleeInfo
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV024", "rnn-module", "call to an nn.RNN, nn.LSTM or nn.GRU module",
    "torch.compile does not trace the recurrent modules nn.RNN, nn.LSTM and nn.GRU (\"Attempted to wrap RNN, "
    "GRU, or LSTM\"): it gives up on the frame that calls one, which then runs eagerly, and a module that calls "
    "one from a submodule breaks its graph there.",
    "Compile the layers around the recurrent module instead, unroll it with nn.LSTMCell / nn.GRUCell (traced), "
    "or set torch._dynamo.config.allow_rnn = True (experimental).",
    Strategy.DONT_COMPILE, skips_frame=True,
    what="Flags a call of an `nn.RNN`, `nn.LSTM` or `nn.GRU` instance held in an attribute (`self.lstm(x)`) or a "
         "module-level name, found from what the class's methods or the module assign to it.",
    why="Dynamo refuses to trace these modules unless `torch._dynamo.config.allow_rnn` is set (off in torch "
        "2.13): the function calling one is skipped as a whole, so nothing in it is compiled; a caller that "
        "reaches one through a submodule breaks its graph at that call. The cells (`nn.LSTMCell`, `nn.GRUCell`, "
        "`nn.RNNCell`) are traced.",
    bad_example="self.lstm = nn.LSTM(28, 64, batch_first=True)\n...\nout, _ = self.lstm(x)\nreturn self.fc(out[:, -1])",
    good_example="out, _ = self.lstm(x)          # not compiled\nreturn self.head(out[:, -1])  # compile self.head only",
    known_problems="Only attributes and names assigned a constructor call the source shows are recognised: an "
                   "LSTM made by a factory function, passed in as an argument or chosen with "
                   "`getattr(nn, name)(...)` alone is missed.",
    fix_safety="No automatic fix. The compiler runs the call eagerly and compiles the code around it.",
)

# The recurrent module classes Dynamo 2.13 refuses to trace (torch/_dynamo/variables/nn_module.py,
# "Attempted to wrap RNN, GRU, or LSTM"), by qualified name. Their cells are not among them.
RNN_MODULES = frozenset(
    f"torch.nn{prefix}.{name}" for prefix in ("", ".modules.rnn") for name in ("RNN", "LSTM", "GRU", "RNNBase")
)


def check_callee(callee: CalleeInfo):
    """A call whose target the resolver found to be an instance of one of RNN_MODULES
    (`callee.extra["module_class"]`)."""
    module_class = callee.extra.get("module_class")
    if module_class in RNN_MODULES:
        yield Violation(RULE.code, f"{callee.name} is an {module_class.replace('torch.nn.modules.rnn.', 'nn.').replace('torch.nn.', 'nn.')}: "
                                   f"torch.compile does not trace RNN, LSTM or GRU modules")
