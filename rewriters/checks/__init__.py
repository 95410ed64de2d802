"""The graph-break checks, one rule per module.

Each module exposes `check_call(call, ctx)` and/or `check_statement(stmt, ctx)`
returning `(code, message)` pairs; `carve.rewriters.analysis` positions them
and turns them into findings. `CALL_CHECKS`, `SUBSCRIPT_CHECKS` and `IF_EXPRESSION_CHECKS` list them
in the order their findings are reported.
"""

from carve.rewriters.checks import (
    autograd,
    conditional_expressions,
    conversions,
    dynamic_shapes,
    explicit_breaks,
    io,
    numpy_calls,
    side_effects,
    skipped_calls,
)
from carve.rewriters.checks.context import CheckContext

CALL_CHECKS = (
    explicit_breaks.check_call,
    io.check_call,
    skipped_calls.check_call,
    conversions.check_call,
    dynamic_shapes.check_call,
    autograd.check_call,
    numpy_calls.check_call,
)
SUBSCRIPT_CHECKS = (dynamic_shapes.check_subscript,)
IF_EXPRESSION_CHECKS = (conditional_expressions.check_conditional,)

__all__ = ["CALL_CHECKS", "IF_EXPRESSION_CHECKS", "SUBSCRIPT_CHECKS", "CheckContext", "side_effects"]
