"""CRV020: a graph region recompiled too often.

    for lr in (0.1, 0.01, 0.001, ...):
        step(x, lr)                 # CRV020, at run time: a new graph per value of lr, then eager

Not found in the source: carve's runtime reports it when Dynamo has compiled a region as many
times as its recompile limit (runtime/dynamo_capture.py). `carve lint` never reports it.
"""

from carve.rewriters.rules._rule import Rule, Strategy

RULE = Rule(
    "CRV020", "recompile-limit", "recompile limit reached",
    "A graph region was recompiled more times than the limit (inputs keep changing shape, dtype or constant "
    "values); it now runs eagerly.",
    "Pass changing Python numbers as tensors, or raise carve's recompile_limit.",
    # Found while running, not in the source: the region stops compiling, nothing splits it.
    Strategy.REWRITE, breaks_torch_compile=False, splits_carve_graph=False, lint_default=False,
    what="Reports, at run time, a graph region whose guards failed on more input variants than the "
         "recompile limit.",
    why="Each new shape, dtype or Python constant costs a compile; past the limit Dynamo stops compiling the "
        "region and runs inputs that match none of its versions eagerly, so the compiled speed is lost for them.",
    bad_example="for lr in learning_rates:\n    step(x, lr)  # lr: a Python float, baked into the graph",
    good_example="for lr in learning_rates:\n    step(x, torch.tensor(lr))  # one graph for every lr",
    known_problems="Found only on the inputs the program passes; the source alone cannot tell how many "
                   "variants a call will see.",
    fix_safety="No automatic fix. Inputs that match no compiled version run eagerly from then on.",
)
