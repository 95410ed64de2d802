"""What a call's target is, as far as graph breaks go.

The analysis asks a `CallResolver` about every call. Two resolvers exist:
`ModuleResolver` here (static: functions of the same file, their decorators,
module-level `disallow_in_graph(...)` calls), used by `carve lint` and
`carve rewrite`; and the compiler's live resolver (`carve.resolver`), which
looks the name up in the running program and recognises markers by identity,
so `gb = torch._dynamo.graph_break; gb()` is still a break.

    @torch.compiler.disable
    def helper(x): ...              # helper(x) -> CalleeInfo(DISABLED)

    def noisy(x):
        print(x)                    # noisy(x) -> CalleeInfo(USER_FUNCTION, findings=[CRV003 ...])

What a classification means is each rule's: the analysis hands the `CalleeInfo` to the rule
modules' `check_callee` (rewriters/rules/__init__.py, `CALLEE_CHECKS`), so `helper(x)` above
is reported by crv013_disabled_callee.py and `noisy(x)` by crv016_callee_graph_break.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Protocol

import libcst as cst

from carve.rewriters.names import ImportTable

if TYPE_CHECKING:  # the rule modules' callee checks import this module: findings imports them
    from carve.rewriters.findings import Finding


class CalleeKind(Enum):
    GRAPH_BREAK = "graph_break"
    SKIP_FRAME = "skip_frame"
    DISABLED = "disabled"
    DISALLOWED = "disallowed"
    IO = "io"
    # Traced into the graph as is: torch ops, custom ops, allow_in_graph, nonstrict_trace.
    TRACEABLE = "traceable"
    # A user Python function: traced inline when clean, compiled on its own when not.
    USER_FUNCTION = "user_function"


@dataclass(frozen=True)
class CalleeInfo:
    kind: CalleeKind
    name: str
    # Breaks inside a USER_FUNCTION callee, positioned in the callee's file.
    findings: tuple[Finding, ...] = ()
    filename: str = ""
    extra: dict = field(default_factory=dict, compare=False)
    # Resolved by the compiler against the live program, which must also keep out of its graphs
    # a callee that torch.compile would trace (CRV022); `carve lint` reports torch.compile's breaks.
    for_compiler: bool = False

    @property
    def side_effects(self) -> tuple[Finding, ...]:
        """Python state the callee changes (CRV019) beyond its own local containers."""
        from carve.rewriters.rules import crv019_python_side_effect as side_effect

        return tuple(f for f in self.findings if f.code == side_effect.RULE.code)

    @property
    def breaks(self) -> tuple[Finding, ...]:
        """The callee's graph breaks, the breaking statements first and the loops, try and
        with blocks that contain them (CRV006-CRV008, consequences) after. For the compiler, a
        handler that must see what a graph raises (CRV022) counts too: the callee must not be
        traced into its caller's graph."""
        from carve.rewriters.rules import crv022_handler_misses_graph_error, rule

        kept_out = crv022_handler_misses_graph_error.RULE.code
        breaks = [f for f in self.findings if rule(f.code).lint_default or self.for_compiler and f.code == kept_out]
        # The loops, try and with blocks that contain a break are the rules that skip a frame.
        return tuple(sorted(breaks, key=lambda f: rule(f.code).skips_frame))

    def location(self, finding: Finding) -> str:
        """Where one of the callee's findings is: `helper.py:7`, or `line 7` when its file is unknown."""
        return f"{self.filename}:{finding.line}" if self.filename else f"line {finding.line}"


class CallResolver(Protocol):
    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        """Classify the target of `call`; None when unknown (then it is treated as traceable)."""

    # Optional: `returns_tensor(dotted) -> bool | None`, whether the user function called `dotted`
    # returns a tensor (None: not a function this resolver knows).


DISABLE_DECORATORS = frozenset({"carve.disable", "torch.compiler.disable", "torch._dynamo.disable"})
TRACEABLE_DECORATORS = frozenset({
    "carve.nonstrict_trace", "torch._dynamo.nonstrict_trace", "carve.allow_in_graph",
    "torch.compiler.allow_in_graph", "torch._dynamo.allow_in_graph", "torch.library.custom_op",
    "torch.library.triton_op",
})
DISALLOW_FUNCTIONS = frozenset({"carve.disallow_in_graph", "torch._dynamo.disallow_in_graph"})


def decorator_name(decorator: cst.Decorator, imports: ImportTable) -> str | None:
    expression = decorator.decorator
    if isinstance(expression, cst.Call):
        expression = expression.func
    return imports.resolve(expression)


class ModuleResolver:
    """Static resolution against the functions defined in one module."""

    # Set (True) by carve.rewriters.lint.crossmodule once this module's callees follow imports.
    _carve_cross_module: bool

    def __init__(self, module: cst.Module, imports: ImportTable, filename: str = "<unknown>") -> None:
        self.imports = imports
        self.filename = filename
        self.functions: dict[str, cst.FunctionDef] = {}
        self.disallowed: set[str] = set()
        # Functions defined inside functions, by a name no other definition of the module has:
        # `def to_fp16(l): ...` then `model.apply(to_fp16)` in the same function.
        self.nested_functions: dict[str, cst.FunctionDef] = _nested_functions(module)
        self._analysing: set[str] = set()
        self._cache: dict[str, CalleeInfo | None] = {}
        self._returns: dict[str, bool] = {}
        # set by the analysis (avoids a circular import)
        self.analyse_callee: Callable[[cst.FunctionDef, ModuleResolver], Iterable[Finding]] | None = None
        for statement in module.body:
            if isinstance(statement, cst.FunctionDef):
                self.functions[statement.name.value] = statement
                for alias in imports.self_aliases:  # `d2l.accuracy` where `d2l = sys.modules[__name__]`
                    self.functions[f"{alias}.{statement.name.value}"] = statement
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                        call = small.value
                        if imports.resolve(call.func) in DISALLOW_FUNCTIONS and call.args:
                            target = imports.resolve(call.args[0].value)
                            if target:
                                self.disallowed.add(target)

    def returns_tensor(self, dotted: str) -> bool | None:
        """Whether the function `dotted` of this module returns a tensor; None when it is not one of them."""
        func = self.functions.get(dotted)
        if func is None:
            return None
        if dotted not in self._returns:
            from carve.rewriters.tensors import returns_tensor

            self._returns[dotted] = False  # while it is being computed (recursion)
            self._returns[dotted] = returns_tensor(func, self.imports, self.returns_tensor)
        return self._returns[dotted]

    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        if qualified in self.disallowed or dotted in self.disallowed:
            return CalleeInfo(CalleeKind.DISALLOWED, dotted or "")
        applied = applied_function(call)
        if applied is not None and isinstance(applied, cst.Name):
            # model.apply(fn): nn.Module.apply calls fn on each submodule, so fn's breaks are the call's.
            dotted = applied.value
            func = self.functions.get(dotted) or self.nested_functions.get(dotted)
        else:
            func = self.functions.get(dotted) if dotted is not None else None
        if dotted is None or func is None:
            return None
        if dotted in self._cache:
            return self._cache[dotted]
        info: CalleeInfo | None
        names = {decorator_name(d, self.imports) for d in func.decorators}
        if names & DISABLE_DECORATORS:
            info = CalleeInfo(CalleeKind.DISABLED, dotted)
        elif names & TRACEABLE_DECORATORS:
            info = CalleeInfo(CalleeKind.TRACEABLE, dotted)
        elif dotted in self._analysing or self.analyse_callee is None:
            info = CalleeInfo(CalleeKind.USER_FUNCTION, dotted)
        else:
            self._analysing.add(dotted)
            try:
                findings = tuple(self.analyse_callee(func, self))
            finally:
                self._analysing.discard(dotted)
            info = CalleeInfo(CalleeKind.USER_FUNCTION, dotted, findings, self.filename)
        self._cache[dotted] = info
        return info


def applied_function(call: cst.Call) -> cst.BaseExpression | None:
    """`fn` of `model.apply(fn)`, nn.Module.apply's one argument, when it is a name or an attribute (the
    resolvers then look it up as a function; `Fn.apply(x)` of an autograd Function passes a tensor, which
    they do not know as one)."""
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value == "apply" and len(call.args) == 1):
        return None
    argument = call.args[0]
    if argument.keyword is not None or argument.star or not isinstance(argument.value, (cst.Name, cst.Attribute)):
        return None
    return argument.value


def _nested_functions(module: cst.Module) -> dict[str, cst.FunctionDef]:
    """The functions defined inside the module's functions, by name, for names defined once in the module."""
    found = _Definitions()
    module.visit(found)
    top_level = {statement.name.value for statement in module.body if isinstance(statement, cst.FunctionDef)}
    return {name: defs[0] for name, defs in found.nested.items() if len(defs) == 1 and name not in top_level}


class _Definitions(cst.CSTVisitor):
    def __init__(self) -> None:
        self.depth = 0
        self.nested: dict[str, list[cst.FunctionDef]] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth:
            self.nested.setdefault(node.name.value, []).append(node)
        self.depth += 1

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.depth -= 1
