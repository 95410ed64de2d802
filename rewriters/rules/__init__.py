"""The one registry of carve's graph-break rules: one module per rule.

Every message carve prints about a graph break (compiler errors, logs,
`carve.explain`, `carve lint`, `carve rewrite` comments) reads its title,
explanation and hint from here, so a rule reads the same everywhere.

Each `crvNNN_<name>.py` module declares its `RULE = Rule(...)` (code, title, explanation,
hint, what it means to the compiler, and its reference: what it flags, why, an example,
known problems, fix safety) and, where the rule is found at one call, subscript or
conditional expression, the check that finds it, yielding `Violation`s:

    crv003_io.py        RULE = Rule("CRV003", "io", ...)
                        def check_call(call, ctx): ...    # print(y) -> Violation("CRV003", ...)

Rules found from the shape of a function (a break inside a loop, a generator) are detected
in rewriters/analysis.py, and the ones found while running in carve's runtime; their
module's docstring says where.

Three properties of a rule answer three different questions: does torch.compile
break here (`breaks_torch_compile`), does carve run the statement eagerly between
two graphs (`splits_carve_graph`: what `fullgraph=True` refuses), and does
`carve lint` report it unless asked (`lint_default`). A Python side effect
(CRV019) splits a carve graph but does not break torch.compile's.

This package is plain data and libcst: it never imports torch, so the runtime and the lint
reporters may read it freely. A new rule is a new module here (and its checks in the
tuples below, if it has any).
"""

from __future__ import annotations

import importlib
import pkgutil

# The modules whose checks run at calls, subscripts and conditional expressions (below).
from carve.rewriters.rules import (
    crv001_explicit_graph_break,
    crv002_skip_frame,
    crv003_io,
    crv004_tensor_to_python,
    crv005_data_dependent_branch,
    crv009_data_dependent_shape,
    crv012_autograd_in_compiled,
    crv013_disabled_callee,
    crv014_numpy_call,
    crv021_eager_in_carve_only,
)
from carve.rewriters.rules._rule import Rule, Strategy, Violation

# Every rule module of this folder, found by its name: a new rule's file is registered by
# existing (tests/rewriters/test_rule_modules.py checks each defines the RULE its name says).
_RULE_MODULES = tuple(
    importlib.import_module(f"{__name__}.{name}")
    for name in sorted(info.name for info in pkgutil.iter_modules(__path__) if info.name.startswith("crv"))
)

RULES: dict[str, Rule] = {module.RULE.code: module.RULE for module in _RULE_MODULES}

# The checks the analysis runs on each call, subscript and conditional expression, in the order
# their findings are reported. A check that claims a call another rule would also match comes
# first, and that rule's check leaves the call alone (warnings.warn: CRV021, not CRV003).
CALL_CHECKS = (
    crv001_explicit_graph_break.check_call,
    crv002_skip_frame.check_call,
    crv021_eager_in_carve_only.check_traced_warning,
    crv003_io.check_call,
    crv013_disabled_callee.check_call,
    crv021_eager_in_carve_only.check_traced_conversion,
    crv004_tensor_to_python.check_call,
    crv021_eager_in_carve_only.check_unbacked_size,
    crv009_data_dependent_shape.check_call,
    crv012_autograd_in_compiled.check_call,
    crv014_numpy_call.check_call,
)
SUBSCRIPT_CHECKS = (crv009_data_dependent_shape.check_subscript,)
IF_EXPRESSION_CHECKS = (crv005_data_dependent_branch.check_conditional,)


def rule(code: str) -> Rule:
    """The rule for `code`; KeyError names the unknown code."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"unknown carve rule code {code!r}") from None


__all__ = [
    "CALL_CHECKS", "IF_EXPRESSION_CHECKS", "RULES", "SUBSCRIPT_CHECKS", "Rule", "Strategy", "Violation", "rule",
]
