"""The one registry of carve's graph-break rules: one module per rule.

Every message carve prints about a graph break (compiler errors, logs,
`carve.explain`, `carve lint`, `carve rewrite` comments) reads its title,
explanation and hint from here, so a rule reads the same everywhere.

Each `crvNNN_<name>.py` module declares its `RULE = Rule(...)` (code, title, explanation,
hint, what it means to the compiler, and its reference: what it flags, why, an example,
known problems, fix safety) and the checks that find it, yielding `Violation`s of its own
code only:

    crv003_io.py        RULE = Rule("CRV003", "io", ...)
                        def check_call(call, ctx): ...    # print(y) -> Violation("CRV003", ...)
                        def check_callee(callee): ...     # out(y), out = print -> Violation("CRV003", ...)

The analysis (rewriters/analysis.py) runs the checks of the tuples below on each call,
subscript and conditional expression, and on each call whose target a callee resolver
classified (rewriters/callees.py `CalleeInfo`: a disabled function, a user function with a
break inside). Rules found from the shape of a function (a break inside a loop, a generator)
have their checks in their modules too, which the analysis's walk calls where it knows the
facts; `carve lint` (rewriters/lint/driver.py) reports CRV018 from its module's check, and
CRV000 (a file it cannot parse) itself; rules found while running are reported by carve's
runtime. Each module's docstring says where its rule is found.

Three properties of a rule answer three different questions: does torch.compile
break here (`breaks_torch_compile`), does carve run the statement eagerly between
two graphs (`splits_carve_graph`: what `fullgraph=True` refuses), and does
`carve lint` report it unless asked (`lint_default`). A Python side effect
(CRV019) splits a carve graph but does not break torch.compile's.

This package is plain data and libcst: it never imports torch, so the runtime and the lint
reporters may read it freely. A new rule is a new module here (and its checks in the
tuples below, if the analysis runs them at every call, subscript, conditional expression or
resolved callee).
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
    crv015_disallowed_in_graph,
    crv016_callee_graph_break,
    crv019_python_side_effect,
    crv021_eager_in_carve_only,
    crv023_reads_own_frame,
    crv024_rnn_module,
    crv025_parameter_in_compiled_code,
    crv026_sparse_tensor,
    crv028_legacy_constructor,
    crv029_data_dtype_change,
    crv030_hook_handle_remove,
    crv031_numpy_random_draw,
    crv032_grad_after_inplace_update,
    crv033_inplace_view_of_input,
    crv034_optimizer_step,
    crv036_numpy_untraced,
    crv037_requires_grad_assignment,
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
    crv025_parameter_in_compiled_code.check_call,
    crv026_sparse_tensor.check_call,
    crv028_legacy_constructor.check_call,
    crv030_hook_handle_remove.check_call,
    crv031_numpy_random_draw.check_call,
    crv036_numpy_untraced.check_call,
    crv034_optimizer_step.check_call,
    crv033_inplace_view_of_input.check_call,
    crv012_autograd_in_compiled.check_call,
    crv014_numpy_call.check_call,
    crv023_reads_own_frame.check_call,
)
SUBSCRIPT_CHECKS = (crv009_data_dependent_shape.check_subscript, crv004_tensor_to_python.check_subscript)
IF_EXPRESSION_CHECKS = (crv005_data_dependent_branch.check_conditional,)
# The checks the analysis runs on each small statement (an assignment's target and value together).
# Run in source order, so a check may keep what earlier statements did (CRV032).
STATEMENT_CHECKS = (crv005_data_dependent_branch.check_assert, crv029_data_dtype_change.check_statement,
                    crv032_grad_after_inplace_update.check_statement, crv033_inplace_view_of_input.check_statement,
                    crv037_requires_grad_assignment.check_statement)
# What a `for` header binds, for the statement checks that keep facts in source order: called with the
# loop's target, what it iterates and the function's CheckContext.
LOOP_TARGET_HOOKS = (crv032_grad_after_inplace_update.forget_loop_target, crv033_inplace_view_of_input.bind_loop_target)
# The checks the analysis runs on a call whose target a callee resolver classified (a `CalleeInfo`,
# rewriters/callees.py), after the call checks. A marker or an I/O function the resolver recognised
# under any name (`gb = torch._dynamo.graph_break; gb()`): where a call check already reported the
# rule at the call's line (`torch._dynamo.graph_break()` by its name), the analysis does not
# report it again.
CALLEE_CHECKS = (
    crv001_explicit_graph_break.check_callee,
    crv002_skip_frame.check_callee,
    crv003_io.check_callee,
    crv013_disabled_callee.check_callee,
    crv015_disallowed_in_graph.check_callee,
    crv024_rnn_module.check_callee,
    crv004_tensor_to_python.check_callee,
    crv025_parameter_in_compiled_code.check_callee,
)
# A user function, from what its own analysis found: a graph break inside it, or else a change of
# Python state.
USER_CALLEE_CHECKS = (crv016_callee_graph_break.check_callee, crv019_python_side_effect.check_callee)


def rule(code: str) -> Rule:
    """The rule for `code`; KeyError names the unknown code."""
    try:
        return RULES[code]
    except KeyError:
        raise KeyError(f"unknown carve rule code {code!r}") from None


__all__ = [
    "CALLEE_CHECKS", "CALL_CHECKS", "IF_EXPRESSION_CHECKS", "LOOP_TARGET_HOOKS", "RULES", "STATEMENT_CHECKS",
    "SUBSCRIPT_CHECKS",
    "USER_CALLEE_CHECKS",
    "Rule", "Strategy", "Violation", "rule",
]
