"""CRV025: a parameter (or a layer that makes parameters) created inside compiled code.

    def forward(self, x):
        w = nn.Parameter(torch.ones(4))              # CRV025
        return nn.Linear(4, 4)(x) * w                # CRV025: a new layer, new parameters, each call
    def forward(self, x):
        return nn.Softmax(dim=-1)(x)                 # not flagged: no parameters, traced

`check_call` finds `nn.Parameter(...)` and the construction of a `torch.nn` layer whose
constructor creates parameters (`nn.Linear`, the convolutions, norms, embeddings, attention and
recurrent layers: PARAMETERIZED_MODULES, the classes of torch 2.13 that do). `check_callee`
finds the construction of a module class of the user's whose `__init__` builds such layers
(`layers.append(Block(c))` in compiled code), which `carve lint`'s resolver recognises
(rewriters/lint/driver.py, `builds_parameters`).
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.callees import CalleeInfo
from carve.rewriters.checks.context import CheckContext
from carve.rewriters.rules._rule import Rule, Strategy, Violation

RULE = Rule(
    "CRV025", "parameter-in-compiled-code", "parameter created in compiled code",
    "Dynamo does not trace the `torch.nn.Parameter()` constructor (\"Attempted to use `torch.nn.Parameter()` "
    "constructor with Dynamo\"), which every layer with weights calls when it is built: creating one inside "
    "compiled code breaks the graph there.",
    "Create layers and parameters in `__init__` (or once, outside the compiled function) and only call them in "
    "`forward`.",
    Strategy.REWRITE,
    resumable_in_branch=True,
    what="Flags `nn.Parameter(...)` and the construction of `torch.nn` layers that create parameters "
         "(`nn.Linear`, `nn.Conv2d`, `nn.LayerNorm`, `nn.Embedding`, `nn.BatchNorm2d`, ...) in compiled code.",
    why="The graph cannot hold the creation of a new leaf tensor that autograd and the optimizer must see, so "
        "torch.compile ends the graph before it, builds the layer eagerly and starts a new graph. A layer "
        "built on every call also gets fresh random weights on every call, which is rarely what was meant.",
    bad_example="def forward(self, x):\n    return nn.Linear(16, 16)(x)",
    good_example="def __init__(self):\n    super().__init__()\n    self.proj = nn.Linear(16, 16)\n\n"
                 "def forward(self, x):\n    return self.proj(x)",
    known_problems="A user class is recognised only where `carve lint` reads its `__init__` (a module class "
                   "of the same file) and only when called by its name: `block(c)` with the class passed in is "
                   "missed. Before the function's first tensor operation the break costs no graph and is "
                   "reported as CRV027 instead.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)

PARAMETER_CONSTRUCTORS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})
# The torch.nn classes whose constructor creates parameters (torch 2.13, default arguments).
PARAMETERIZED_MODULES = frozenset({
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag", "GRU", "GRUCell", "GroupNorm", "LSTM",
    "LSTMCell", "LayerNorm", "Linear", "LinearCrossEntropyLoss", "MultiheadAttention", "PReLU", "RMSNorm", "RNN", "RNNCell",
    "SyncBatchNorm", "Transformer", "TransformerDecoderLayer", "TransformerEncoderLayer",
})


def builds_parameters(qualified: str) -> bool:
    """`torch.nn.Parameter`, `torch.nn.Linear`: a call that creates parameters."""
    return qualified in PARAMETER_CONSTRUCTORS or (
        qualified.startswith("torch.nn.") and qualified.rsplit(".", 1)[-1] in PARAMETERIZED_MODULES)


def check_call(call: cst.Call, ctx: CheckContext):
    name = ctx.qualified(call.func) or ""
    if name in PARAMETER_CONSTRUCTORS:
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() creates a parameter inside compiled code")
    elif builds_parameters(name):
        yield Violation(RULE.code, f"{ctx.dotted(call.func)}() builds a layer (and its parameters) inside compiled code")


def check_callee(callee: CalleeInfo):
    """A call the resolver found to construct a module class of the user's that builds layers."""
    if callee.extra.get("builds_parameters"):
        yield Violation(RULE.code, f"{callee.name}() builds a module with parameters inside compiled code")
