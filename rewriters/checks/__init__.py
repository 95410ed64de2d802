"""What the rules' checks share: `CheckContext` (imports, tensor inference) and call shapes.

The checks themselves live with their rule, one module per rule, in `carve.rewriters.rules`,
which also lists them (`CALL_CHECKS`, `SUBSCRIPT_CHECKS`, `IF_EXPRESSION_CHECKS`) in the order
their findings are reported.
"""

from carve.rewriters.checks.context import CheckContext

__all__ = ["CheckContext"]
