"""The one registry of carve's graph-break rules.

Every message carve prints about a graph break (compiler errors, logs,
`carve.explain`, `carve lint`, `carve rewrite` comments) reads its title,
explanation and hint from here, so a rule reads the same everywhere.

Three properties of a rule answer three different questions: does torch.compile
break here (`breaks_torch_compile`), does carve run the statement eagerly between
two graphs (`splits_carve_graph`: what `fullgraph=True` refuses), and does
`carve lint` report it unless asked (`lint_default`). A Python side effect
(CRV019) splits a carve graph but does not break torch.compile's.

This module is plain data: it imports neither libcst nor torch, so the runtime
and the lint reporters may read it freely.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


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
    # torch.compile skips the whole frame on this (seed 004): the costliest kind.
    skips_frame: bool = False
    # The tensor work inside such a statement can move into the graph before it, leaving only
    # the Python effect eager (`print(y.mean())`: the mean is computed in the graph).
    hoistable: bool = False
    # Inside a Python-valued branch of a region (`if verbose: print(...)`) a capture resumes
    # after it (Dynamo splits the graph there and carries on): the branch stays in the region.
    resumable_in_branch: bool = False
    bad_example: str = ""
    good_example: str = ""


_RULES = [
    Rule(
        "CRV000", "syntax-error", "file cannot be parsed",
        "carve could not read the file as Python source (a syntax error, or bytes that are not valid in the "
        "file's encoding), so nothing in it was checked. Reported by `carve lint` only.",
        "Fix the syntax error or the encoding (add a `# -*- coding: ... -*-` line), or exclude the file.",
        Strategy.REWRITE, outlinable=False, breaks_torch_compile=False, splits_carve_graph=False,
        bad_example="def f(x)\n    return x",
        good_example="def f(x):\n    return x",
    ),
    Rule(
        "CRV001", "explicit-graph-break", "explicit graph break",
        "The code asks for a graph break (carve.graph_break() or torch._dynamo.graph_break()). "
        "The statement runs eagerly; code before and after it is compiled separately.",
        "Remove the call if it is left over from debugging; use carve.disable for code that must not be compiled.",
        Strategy.DONT_COMPILE,
        bad_example="y = x.sin()\ntorch._dynamo.graph_break()\nreturn y.cos()",
        good_example="y = x.sin()\nreturn y.cos()",
        resumable_in_branch=True,
    ),
    Rule(
        "CRV002", "skip-frame", "frame skipped on request",
        "carve.skip_frame() / torch._dynamo.skip_frame() gives up compiling the current function: it runs eagerly. "
        "Functions it calls are still compiled.",
        "Move the code that needs skipping into a small helper function and call skip_frame there.",
        Strategy.DONT_COMPILE, outlinable=False,
        bad_example="x = inner1(x)\ntorch._dynamo.skip_frame()\nx = inner2(x)",
        good_example="x = inner1(x)\nproblematic_code()  # calls skip_frame itself\nx = inner2(x)",
    ),
    Rule(
        "CRV003", "io", "I/O or logging",
        "Printing, logging, file and console I/O have Python side effects that a tensor graph cannot hold. "
        "The statement runs eagerly, in the same order and number as without compilation.",
        "Log less often, collect values and print them after the compiled function returns, or move I/O out.",
        Strategy.DONT_COMPILE,
        bad_example="y = x * 2\nprint('y', y)\nreturn y + 1",
        good_example="y = x * 2\nreturn y + 1  # print at the call site",
        hoistable=True, resumable_in_branch=True,
    ),
    Rule(
        "CRV004", "tensor-to-python", "tensor converted to a Python value",
        "`.item()`, `.tolist()`, `.numpy()` and `int()/float()/bool()` of a tensor read the tensor's data into Python; "
        "a graph cannot return a Python value in the middle of its computation.",
        "Keep the value a tensor (use torch ops on it) or move the conversion after the tensor work.",
        Strategy.REWRITE,
        bad_example="scale = x.max().item()\nreturn x / scale",
        good_example="scale = x.max()\nreturn x / scale",
        hoistable=True, resumable_in_branch=True,
    ),
    Rule(
        "CRV005", "data-dependent-branch", "control flow on a tensor's value",
        "An `if`/`while` (or `and`/`or`/conditional expression) whose condition depends on a tensor's data "
        "cannot be decided when the graph is built.",
        "Compute both sides and select with torch.where, or use torch.cond for larger branches.",
        Strategy.REWRITE,
        bad_example="if x.sum() > 0:\n    y = x * 2\nelse:\n    y = -x",
        good_example="y = torch.where(x.sum() > 0, x * 2, -x)",
        hoistable=True,
    ),
    Rule(
        "CRV006", "break-in-loop", "graph break inside a loop",
        "torch.compile cannot resume after a graph break inside a loop and skips the whole function. "
        "carve keeps the loop in Python and compiles the tensor work around the breaking statement.",
        "Move the breaking statement out of the loop, or unroll the loop, to get one graph.",
        Strategy.REWRITE, skips_frame=True,
        bad_example="for i in range(5):\n    x = x + 1\n    print(i)",
        good_example="for i in range(5):\n    x = x + 1\nprint(list(range(5)))",
    ),
    Rule(
        "CRV007", "break-in-try", "graph break inside a try block",
        "torch.compile cannot resume after a graph break inside a try block and skips the whole function. "
        "carve keeps the try in Python and compiles the tensor work in its body.",
        "Move the breaking statement out of the try block.",
        Strategy.REWRITE, skips_frame=True,
        bad_example="try:\n    x = x + 1\n    print(x)\nexcept ValueError:\n    pass",
        good_example="try:\n    x = x + 1\nexcept ValueError:\n    pass\nprint(x)",
    ),
    Rule(
        "CRV008", "break-in-with", "graph break inside a context manager",
        "torch.compile cannot resume after a graph break inside most `with` blocks and skips the whole function. "
        "carve keeps the `with` in Python and compiles the tensor work in its body. Not reported for torch's "
        "own grad-mode, autocast, saved-tensor-hook and profiler managers: there both compilers resume after "
        "the break, inside the block.",
        "Move the breaking statement out of the `with` block.",
        Strategy.REWRITE, skips_frame=True,
        bad_example="with ctx():\n    x = x + 1\n    print(x)",
        good_example="with ctx():\n    x = x + 1\nprint(x)",
    ),
    Rule(
        "CRV009", "data-dependent-shape", "output shape depends on tensor data",
        "`nonzero`, `unique`, `masked_select`, boolean-mask indexing and similar ops produce tensors whose "
        "shape depends on the data; torch.compile breaks the graph there unless capture_dynamic_output_shape_ops is set.",
        "Use a fixed-shape formulation (torch.where, multiplication by a mask) where possible.",
        Strategy.REWRITE,
        bad_example="idx = x.nonzero()\nreturn x[x > 0].sum()",
        good_example="return torch.where(x > 0, x, 0).sum()",
    ),
    Rule(
        "CRV010", "generator", "generator function",
        "A function containing `yield` is a generator: each `next()` resumes a Python frame, which a graph cannot do. "
        "carve runs generator functions eagerly.",
        "Return a list or tensor instead of yielding, or compile the per-item function instead.",
        Strategy.DONT_COMPILE, outlinable=False,
        bad_example="def f(xs):\n    for x in xs:\n        yield x * 2",
        good_example="def f(xs):\n    return [x * 2 for x in xs]",
    ),
    Rule(
        "CRV011", "async", "async code",
        "`async def`, `await`, `async for` and `async with` need an event loop; carve runs them eagerly.",
        "Compile the synchronous tensor function that the coroutine calls.",
        Strategy.DONT_COMPILE, outlinable=False,
        bad_example="async def f(x):\n    await asyncio.sleep(0)\n    return x + 1",
        good_example="def f(x):\n    return x + 1",
    ),
    Rule(
        "CRV012", "autograd-in-compiled", "backward pass inside compiled code",
        "`.backward()` and `torch.autograd.grad` inside a compiled function run the autograd engine, "
        "which torch.compile does not trace (compiled autograd aside).",
        "Compile the forward computation and call .backward() outside it.",
        Strategy.DONT_COMPILE,
        bad_example="loss = model(x).sum()\nloss.backward()",
        good_example="loss = compiled_model(x).sum()\nloss.backward()  # outside",
    ),
    Rule(
        "CRV013", "disabled-callee", "call to a disabled or skipped function",
        "The callee is marked carve.disable / torch.compiler.disable, or torch.compile's own rules skip it "
        "(the time module's clocks, torch.optim.lr_scheduler, progress bars and the other third-party packages "
        "on Dynamo's skip list): it runs eagerly, so the graph breaks at the call.",
        "If the callee is pure tensor code, remove the marker or use carve.nonstrict_trace; move clock reads, "
        "scheduler steps and progress-bar updates out of the compiled function.",
        Strategy.ESCAPE_HATCH,
        bad_example="@torch.compiler.disable\ndef helper(x): ...\n\ny = helper(x)",
        good_example="@torch._dynamo.nonstrict_trace\ndef helper(x): ...\n\ny = helper(x)",
        resumable_in_branch=True,
    ),
    Rule(
        "CRV014", "numpy-call", "NumPy call on tensor data",
        "A NumPy function called on a tensor converts it to an array. torch.compile 2.13 traces NumPy calls "
        "(torch._dynamo.config.trace_numpy), so this is not a graph break there; carve runs the call eagerly.",
        "Use the torch equivalent (torch.sum, torch.exp, ...).",
        Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
        bad_example="y = np.exp(x)",
        good_example="y = torch.exp(x)",
        resumable_in_branch=True,
    ),
    Rule(
        "CRV015", "disallowed-in-graph", "call to a function disallowed in graphs",
        "The callee was marked carve.disallow_in_graph / torch._dynamo.disallow_in_graph: every call breaks the graph "
        "and runs eagerly.",
        "Call carve.allow_in_graph on it again if the marking was only for debugging.",
        Strategy.DONT_COMPILE,
        bad_example="torch._dynamo.disallow_in_graph(torch.sub)\ny = torch.sub(x, 1)",
        good_example="y = torch.sub(x, 1)",
        resumable_in_branch=True,
    ),
    Rule(
        "CRV016", "callee-graph-break", "graph break inside a called function",
        "A function called here contains a graph break (shown in the call stack). The call runs eagerly, "
        "and carve compiles the callee on its own, as torch.compile compiles nested frames.",
        "Fix the break in the callee, or mark the callee carve.nonstrict_trace if it is pure tensor code.",
        Strategy.ESCAPE_HATCH,
        bad_example="def helper(x):\n    print(x)\n    return x * 2\n\ny = helper(x)",
        good_example="def helper(x):\n    return x * 2\n\ny = helper(x)\nprint(x)",
        resumable_in_branch=True,
    ),
    Rule(
        "CRV017", "untraceable", "code carve cannot trace",
        "carve could not capture this statement in a graph (for example it reads a tensor that is not an input, "
        "or produced a value of a type a graph cannot return). It runs eagerly.",
        "Pass the tensor in as an argument, or report the construct as a carve issue.",
        Strategy.REWRITE, breaks_torch_compile=False,
        bad_example="y = some_c_extension(x)",
        good_example="y = torch.library.custom_op(...)  # an opaque custom op",
    ),
    Rule(
        "CRV018", "compile-skips-function", "compiled function would be skipped whole",
        "torch.compile gives up on this whole function (a generator, async code, or skip_frame at top level), "
        "so decorating it gains nothing.",
        "Compile the functions it calls instead.",
        Strategy.DONT_COMPILE, outlinable=False,
        bad_example="@torch.compile\ndef f(xs):\n    yield from xs",
        good_example="@torch.compile\ndef step(x):\n    return x * 2",
    ),
    Rule(
        "CRV019", "python-side-effect", "Python side effect",
        "Attribute and item stores, container mutation and global/nonlocal writes must happen on every call; "
        "a cached graph replays only tensor operations, so carve runs these statements eagerly. "
        "This is not a graph break for torch.compile, which replays such effects itself.",
        "Nothing to do for torch.compile; for carve, move such statements next to each other to keep graphs large "
        "(under fullgraph=True, out of the compiled function).",
        Strategy.REWRITE, breaks_torch_compile=False, lint_default=False,
        hoistable=True, resumable_in_branch=True,
    ),
    Rule(
        "CRV020", "recompile-limit", "recompile limit reached",
        "A graph region was recompiled more times than the limit (inputs keep changing shape, dtype or constant "
        "values); it now runs eagerly.",
        "Pass changing Python numbers as tensors, or raise carve's recompile_limit.",
        # Found while running, not in the source: the region stops compiling, nothing splits it.
        Strategy.REWRITE, breaks_torch_compile=False, splits_carve_graph=False, lint_default=False,
    ),
]

_RULES.append(Rule(
    "CRV021", "eager-in-carve-only", "run eagerly by carve, traced by torch.compile",
    "torch.compile 2.13 traces this without a graph break (`.numpy()` through trace_numpy, "
    "`nonzero`/`argwhere`/`repeat_interleave` with unbacked sizes, `warnings.warn`), but carve's graphs "
    "cannot hold it: carve runs the statement eagerly and compiles the code around it.",
    "Nothing to do for torch.compile; for carve, keep such statements together or move them out of hot loops "
    "(under fullgraph=True, out of the compiled function).",
    Strategy.REWRITE, breaks_torch_compile=False, lint_default=False, resumable_in_branch=True,
    bad_example="values = x.numpy()\nidx = x.nonzero()",
    good_example="values = x  # keep tensors\nmask = x != 0",
))

RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}


def rule(code: str) -> Rule:
    """The rule for `code`; KeyError names the unknown code."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"unknown carve rule code {code!r}") from None
