"""One namer for every name carve generates, so no generated name meets a user's name.

    def f(x):                                   @_carve_f.graph(2, 3)
        _carve_t0 = x * 3                       def _f_graph_region_0(x):
        print("mean", x.mean())       ->            _carve_t0 = x * 3
        return _carve_t0                            _carve_t1 = x.mean()   # not _carve_t0: the user's
                                                    return _carve_t0, _carve_t1

As AutoGraph's `naming.py`: the namer first reserves every identifier the
function and its module spell (variables, attributes, imports, keywords of
calls: over-reserving costs nothing), then hands out names that are neither
reserved nor handed out before. Numbered names (`_carve_t0`, `_f_graph_region_0`)
come from a counter per base, so a region's name depends on its place in
the function, not on its line numbers: `carve rewrite --check` output does
not churn when lines above the function change.

One namer serves a whole module in `carve rewrite` (RegionSet variables and
region functions of all functions share the module's namespace); each
function gets a `scope()` of it for its hoisted temporaries, which restarts
the counters but still avoids every name reserved or handed out.
"""

from __future__ import annotations

import libcst as cst

# The decorator path's factory (`carve.rewriters.codegen`): reserved, never handed out.
FACTORY_NAME = "__carve_factory__"
# The function around the factory that makes the user's closure variables free variables of the
# factory, so the compiler can make the factory with the user's own closure cells.
CLOSURE_NAME = "__carve_closure__"
# The name the factory defines the rewritten function under: not the user's, which inside
# the body must keep meaning what it means in the user's module (the global a recursive
# call, a `f.calls += 1` or a method's same-named helper reads). The compiler names the
# function and its code object after the user's afterwards.
COMPILED_FUNCTION_NAME = "__carve_compiled__"
# What the generated code calls `carve.rewriters.unbound.UNBOUND` (when that name is free).
UNBOUND_VAR = "_carve_unbound"
# A template (`carve.rewriters.templates`): `unbound` is the name the import binds.
UNBOUND_IMPORT = "from carve.rewriters.unbound import UNBOUND as unbound"


class Namer:
    def __init__(self, reserved: set[str] | None = None) -> None:
        self.reserved: set[str] = set(reserved or ())
        self._counters: dict[str, int] = {}

    @classmethod
    def for_nodes(cls, *nodes: cst.CSTNode) -> "Namer":
        """A namer that reserves every identifier spelled anywhere in `nodes`."""
        collector = _Identifiers()
        for node in nodes:
            node.visit(collector)
        return cls(collector.names)

    def reserve(self, *names: str) -> None:
        self.reserved.update(names)

    def new(self, base: str) -> str:
        """`base` itself if it is free, else `base_1`, `base_2`, ..."""
        name, suffix = base, 0
        while name in self.reserved:
            suffix += 1
            name = f"{base}_{suffix}"
        self.reserved.add(name)
        return name

    def numbered(self, base: str) -> str:
        """`base0`, `base1`, ...: the next number for `base` whose name is free."""
        while True:
            index = self._counters.get(base, 0)
            self._counters[base] = index + 1
            name = f"{base}{index}"
            if name not in self.reserved:
                self.reserved.add(name)
                return name

    def scope(self) -> "Namer":
        """A namer for one function: fresh counters, the same reserved names (shared, not copied)."""
        child = Namer()
        child.reserved = self.reserved
        return child


class _Identifiers(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)
