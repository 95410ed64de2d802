"""CRV017: code carve cannot capture.

    y = some_c_extension(x)         # CRV017, at run time: an opaque call on a tensor

Not found in the source: the runtime reports it for a graph break Dynamo meets that no other
rule names (runtime/compat.py, `rule_for_dynamo_reason`), and the compiler when a function
cannot be compiled at all (compiler/api.py). `carve lint` never reports it.
"""

from carve.rewriters.rules._rule import Rule, Strategy

RULE = Rule(
    "CRV017", "untraceable", "code carve cannot trace",
    "Dynamo could not capture this statement in a region's graph, for a reason no other rule names (an "
    "unsupported builtin or C extension, an object it cannot reconstruct). It runs eagerly between two graphs.",
    "Pass the tensor in as an argument, or report the construct as a carve issue.",
    Strategy.REWRITE, breaks_torch_compile=False,
    what="Reports, at run time, a statement Dynamo could not record as graph operations in a region.",
    why="What the trace cannot record cannot be replayed by a cached graph, so the statement runs "
        "eagerly between two graphs.",
    bad_example="y = some_c_extension(x)",
    good_example="y = torch.library.custom_op(...)  # an opaque custom op",
    known_problems="Found only on the inputs a run sees: another input may take a path the trace "
                   "handles, or one it does not.",
    fix_safety="No automatic fix. The compiler runs the statement eagerly between two graphs.",
)
