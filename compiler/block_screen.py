"""Whether a model's layer can be compiled once as a nested region: nothing in its `forward`,
or in the `forward` of any module inside it, breaks a graph (runtime/repeated_blocks.py).

    class Block(nn.Module):                 # screened: attention, mlp and the block's own
        def forward(self, x):               # forward are read for what breaks torch.compile,
            x = x + self.attn(self.ln_1(x)) # with the helpers they call (CRV016)
            print(x.shape)                  # CRV003: a nested region must be one graph, so
            return x + self.mlp(x)          # this block is compiled inline

torch's own modules are trusted (Dynamo traces them); a forward carve cannot read (no
source, a C function) fails the screen.
"""

from __future__ import annotations

import inspect

from torch import nn

from carve.resolver import LiveResolver, add_module_aliases
from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.rules import rule
from carve.source import SourceUnavailable, function_source

_verdicts: dict = {}


def compiles_as_one_graph(block: nn.Module) -> bool:
    """True when no forward inside `block` has a statement that breaks torch.compile's graph."""
    return all(_forward_has_no_break(module) for module in block.modules()
               if not type(module).__module__.startswith("torch."))


def _forward_has_no_break(module: nn.Module) -> bool:
    forward = inspect.unwrap(type(module).forward)  # type: ignore[attr-defined]
    code = getattr(forward, "__code__", None)
    if code is None:
        return False
    verdict = _verdicts.get(code)
    if verdict is None:
        verdict = _verdicts[code] = _no_break_in(forward, module)
    return verdict


def _no_break_in(forward, module: nn.Module) -> bool:
    """Read as the compiler reads a function it compiles: calls resolved against the live
    program (`self` is `module`), so a break in a helper the forward calls counts (CRV016)."""
    try:
        source = function_source(forward)
    except SourceUnavailable:
        return False
    context = ModuleContext(source.module, source.filename, source.first_line - 1)
    add_module_aliases(context.imports, forward)
    analysis = analyze_function(source.node, context, LiveResolver(forward, module, has_first_arg=True), {})
    return not any(rule(finding.code).breaks_torch_compile for finding in analysis.findings)
