"""Invariants of an outlined function, checked in carve's own tests (CARVE_VERIFY=1 makes every
build check them; tests/conftest.py sets it):

    def f(x, n):                         every region is called with one argument per input,
        y = _f_graph_region_0(x, n)      its parameters are its inputs, each input is a local
        print(y)                         of f (never a global read through the call), each
        return _f_graph_region_1(y)      output is bound inside it, region names are unique and
                                         clash with no name of f, and every statement of the
                                         rewritten f and of each region maps to user lines.

`verify(outlined)` returns the problems found, as sentences; [] when it holds.
"""

from __future__ import annotations

import os

import libcst as cst

from carve.rewriters.liveness import bound_names, local_names
from carve.rewriters.outline import OutlinedFunction


class OutlineVerificationError(AssertionError):
    """An outlined function broke one of carve's invariants (a carve bug, never the user's)."""


def check_if_asked(outlined: OutlinedFunction, original: cst.FunctionDef) -> None:
    """Raise OutlineVerificationError when CARVE_VERIFY is set and `outlined` breaks an invariant."""
    if not os.environ.get("CARVE_VERIFY"):
        return
    problems = verify(outlined, original)
    if problems:
        raise OutlineVerificationError(f"outlining {original.name.value}: " + "; ".join(problems))


def verify(outlined: OutlinedFunction, original: cst.FunctionDef | None = None) -> list[str]:
    problems: list[str] = []
    infos = {info.name: info for info in outlined.regions}
    defs = {definition.name.value: definition for definition in outlined.region_defs}
    if len(infos) != len(outlined.regions) or len(defs) != len(outlined.region_defs):
        problems.append("two regions share a name")
    if set(infos) != set(defs):
        problems.append(f"regions without a definition or definitions without a region: {sorted(set(infos) ^ set(defs))}")
    user_names = local_names(original, set()) if original is not None else set()
    # A name the rewritten function does not bind itself may still be the user's local, passed
    # as UNBOUND where no path binds it (`f(x, _carve_unbound)`).
    known_locals = local_names(outlined.function, set()) | user_names
    if outlined.regions_var in user_names:
        problems.append(f"generated name {outlined.regions_var} clashes with a name of the function")
    for name, info in infos.items():
        if name in user_names:
            problems.append(f"generated name {name} clashes with a name of the function")
        definition = defs.get(name)
        if definition is None:
            continue
        params = [param.name.value for param in definition.params.params]
        if params != info.inputs:
            problems.append(f"{name} takes {params} but its inputs are {info.inputs}")
        missing = [n for n in info.inputs if n not in known_locals]
        if missing:
            problems.append(f"{name} receives {missing}, which are not locals of the function")
        bound = bound_names(definition.body) | set(params)
        unbound_outputs = [n for n in info.outputs if n not in bound]
        if unbound_outputs:
            problems.append(f"{name} returns {unbound_outputs}, which it never binds")
    calls = _RegionCalls(set(infos))
    outlined.function.visit(calls)
    for name, arg_count in calls.found:
        if arg_count != len(infos[name].inputs):
            problems.append(f"{name} is called with {arg_count} arguments for {len(infos[name].inputs)} inputs")
    for node in [outlined.function, *outlined.region_defs]:
        unmapped = _unmapped_statements(node, outlined.origins)
        if unmapped:
            problems.append(f"{len(unmapped)} statement(s) of {node.name.value} map to no user line, "
                            f"first: {cst.Module([]).code_for_node(unmapped[0]).strip()[:60]!r}")
    return problems


class _RegionCalls(cst.CSTVisitor):
    def __init__(self, names: set[str]) -> None:
        self.names = names
        self.found: list[tuple[str, int]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        # `region.__wrapped__(...)`: the region run as Python (a name it reads is unbound).
        if isinstance(func, cst.Attribute) and func.attr.value == "__wrapped__":
            func = func.value
        if isinstance(func, cst.Name) and func.value in self.names:
            self.found.append((func.value, len(node.args)))


def _unmapped_statements(function: cst.FunctionDef, origins: dict) -> list[cst.CSTNode]:
    """Statements with no origin of their own nor of an enclosing statement."""

    class Unmapped(cst.CSTVisitor):
        def __init__(self) -> None:
            self.found: list[cst.CSTNode] = []

        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                if id(node) in origins:
                    return False  # mapped, and so is what it contains
                if not isinstance(node, cst.BaseCompoundStatement):
                    self.found.append(node)
                    return False
            return True

    visitor = Unmapped()
    function.body.visit(visitor)
    return visitor.found
