"""The passes of carve's source transformation, in order, in one place.

    def f(x, xs):                       1 analysis        findings: print() CRV003 at line 4
        y = x * 2                       2 partition       GraphRun [y = x * 2; z = y + 1]
        z = y + 1                                         EagerStatement (CRV003): print(z)
        print(z)                                          GraphRun [return z - 1]
        return z - 1                    3 hoisting        tensor work out of eager statements
                                        4 call conversion helper(x) -> _carve_f.compiled(helper)(x)
                                        5 outlining       regions as functions, liveness in/out
                                        6 checkpoints     `_carve_f.graph_break(4, "CRV003")`
                                        7 verification    the outline's invariants (tests)
                                        8 codegen         module text + line table

| pass | module | what it does |
|---|---|---|
| analysis | `analysis.py`, `checks/` | findings (rule code, message, position) for the function |
| dataflow | `dataflow.py` | the function's control-flow graph: per statement reads, writes, live names |
| partition | `partition.py` | graph runs, eager statements, compounds kept as Python |
| hoisting | `hoist.py` | pure tensor work inside an eager statement joins the run before it |
| call conversion | `call_conversion.py` | calls of user functions in Python code compile the callee |
| outlining | `outline.py`, `liveness.py`, `bindings.py` | each run a region function; inputs and outputs (live after it) |
| checkpoints | `checkpoints.py` | comment and `graph_break` call before each eager statement |
| verification | `verify.py` | invariants of the outline (CARVE_VERIFY=1 in carve's tests) |
| codegen | `codegen.py` | one module text, compiled with a line table to the user's lines |

Partition, hoisting, call conversion and checkpoints run inside `outline_function` (each is
its own module, called per item as the outliner walks the partition); they share the
function's one `Dataflow`, built once after the analysis, as they share its `FunctionAnalysis`,
instead of each walking the statements for their names again. `outline` below runs
1-7 and is what both `carve.compile` (compiler/pipeline.py) and `carve rewrite`
(rewriters/rewrite.py) call. Codegen differs between them: a factory module compiled in
memory, or the rewritten file.
"""

from __future__ import annotations

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, ModuleContext, analyze_function
from carve.rewriters.callees import CallResolver
from carve.rewriters.dataflow import Dataflow
from carve.rewriters.naming import Namer
from carve.rewriters.outline import OutlinedFunction, outline_function
from carve.rewriters.verify import check_if_asked


def outline(func: cst.FunctionDef, context: ModuleContext, *, regions_var: str, region_prefix: str,
            resolver: CallResolver | None = None, forced_breaks: dict[int, tuple[str, str]] | None = None,
            namer: Namer | None = None,
            unbound_var: str | None = None) -> tuple[FunctionAnalysis, OutlinedFunction]:
    """Passes 1-7 on one function: its analysis and its outline."""
    analysis = analyze_function(func, context, resolver, forced_breaks)
    dataflow = Dataflow(func)
    outlined = outline_function(func, analysis, context, regions_var=regions_var, region_prefix=region_prefix,
                                namer=namer, unbound_var=unbound_var, dataflow=dataflow)
    check_if_asked(outlined, func)
    return analysis, outlined
