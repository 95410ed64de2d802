"""`carve rewrite`: the whole-file transformation (the decorator's pipeline, written out).

    import torch, carve                     import torch, carve

    @carve.compile(backend="eager")         _carve_f = carve.RegionSet("f", backend="eager")
    def f(x):                     ->
        y = x.sin()                         # carve: graph region, lines 3-3, compiled to an FX graph
        print(y)                            @_carve_f.graph(3, 3)
        return y.cos()                      def _f_graph_region_0(x):
                                                y = x.sin()
                                                return y
                                            ...
                                            @_carve_f.entry
                                            def f(x):
                                                y = _f_graph_region_0(x)
                                                # carve: eager, CRV003 I/O or logging: print() performs I/O
                                                _carve_f.graph_break(4, "CRV003")
                                                print(y)
                                                return _f_graph_region_1(y)

Functions compiled with `carve.compile` or `torch.compile` (any import
spelling: `@carve.compile`, `@torch.compile(...)`, `@compile` after
`from torch import compile`, `@cc` after `from carve import compile as cc`)
are rewritten; with `all_functions`, every function that does tensor work
(`carve.rewriters.tensor_functions`); `select`
narrows either set to the named functions (`f`, `Model.forward`). The
analysis and outlining are the decorator's own (`carve.rewriters.outline`).

Everything else in the file is kept byte for byte. The regions of a method
are hoisted out of its class (to the module, or to the enclosing function),
so in that method `super()` is spelled `super(Model, self)` and private names
are written mangled (`self.__scale` -> `self._Model__scale`), exactly what
Python does inside the class body. A compiled function nested in another
compiled function is left to the outer one (it stays decorated and compiles
when it runs). The output has no compile decorators left at the rewritten
places, so rewriting it again changes nothing.

Every name it adds to the module (RegionSet variables, region functions,
the `UNBOUND` import, temporaries) comes from one `Namer` that reserves every
name the module spells: a module-level `A_f` and a method `A.f` get
`_carve_A_f` and `_carve_A_f_1`, and nothing overwrites a user's name.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import cast

import libcst as cst

from carve.rewriters.analysis import ModuleContext
from carve.rewriters.callees import decorator_name
from carve.rewriters.methods import MethodBodyOutsideClass
from carve.rewriters.names import ImportTable
from carve.rewriters.naming import FACTORY_NAME, UNBOUND_IMPORT, UNBOUND_VAR, Namer
from carve.rewriters.outline import OutlinedFunction
from carve.rewriters.passes import outline
from carve.rewriters.templates import replace_expression, replace_statement
from carve.rewriters.tensor_functions import TensorFunctions

COMPILE_DECORATORS = frozenset({"carve.compile", "torch.compile", "torch.compiler.compile"})
# Keywords of carve.compile / torch.compile that carve.RegionSet takes as they are.
COMPILE_KEYWORDS = frozenset({"backend", "fullgraph", "dynamic", "options", "mode", "recompile_limit", "disable"})
# Functions carve itself generated: never rewritten again.
GENERATED_DECORATOR_METHODS = frozenset({"graph", "entry"})


class RewriteError(Exception):
    """The input cannot be rewritten; `line` is 1-based (0 when unknown)."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass
class RewrittenFunction:
    qualname: str
    line: int
    outlined: OutlinedFunction


@dataclass
class RewriteResult:
    text: str
    functions: list[RewrittenFunction] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.functions)


def rewrite_source(
    text: str, filename: str = "<unknown>", *, all_functions: bool = False, select: AbstractSet[str] | None = None
) -> RewriteResult:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise _syntax_error(text, error) from None
    imports = ImportTable.from_module(module)
    targets = _TargetFinder(imports, TensorFunctions(module, imports) if all_functions else None, select)
    module.visit(targets)
    if not targets.found:
        return RewriteResult(text)
    # Methods first get the spelling that still works once their regions leave the class.
    # Only expressions inside a line change, so every line number stays the same.
    found = targets.found
    if targets.methods:
        methods = _MethodsOutsideTheirClass(targets.methods, set(found))
        module = module.visit(methods)
        found = {methods.renewed[key]: target for key, target in found.items()}
    # Messages in the emitted comments name the file by its base name: the output must not
    # depend on the directory the file was read from.
    context = ModuleContext(module, os.path.basename(filename))
    namer = Namer.for_nodes(module)
    namer.reserve(FACTORY_NAME)
    transformer = _ModuleRewriter(context, found, namer)
    new_module = module.visit(transformer)
    new_module = _ensure_import_carve(new_module, context)
    if any(f.outlined.uses_unbound for f in transformer.rewritten):
        unbound_import = replace_statement(UNBOUND_IMPORT, unbound=transformer.unbound_var)
        new_module = _insert_after_imports(new_module, unbound_import)
    return RewriteResult(new_module.code, transformer.rewritten)


# -- which functions -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Target:
    qualname: str          # Python's __qualname__: "outer.<locals>.inner", "Model.forward"
    region_prefix: str     # "outer_inner", "Model_forward"
    class_name: str | None  # set for methods: their regions are hoisted out of the class


class _TargetFinder(cst.CSTVisitor):
    """Finds the functions to rewrite, outermost first; nothing inside one of them is a target."""

    def __init__(
        self, imports: ImportTable, tensor_functions: TensorFunctions | None, select: AbstractSet[str] | None
    ) -> None:
        self.imports = imports
        # With all_functions: every function that does tensor work is a target.
        self.tensor_functions = tensor_functions
        self.select = select
        self.found: dict[int, _Target] = {}          # id(FunctionDef) -> target
        self.methods: dict[int, tuple[str, str | None]] = {}  # id(FunctionDef) -> (class, first parameter)
        self.scope: list[tuple[str, str]] = []         # ("class" | "function", name)
        self.entered: set[int] = set()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.scope.append(("class", node.name.value))
        return True

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if any(_is_generated(d) for d in node.decorators):
            return False  # carve's own output, and everything inside it
        names = [name for _, name in self.scope] + [node.name.value]
        qualname = "".join(
            f"{name}.<locals>." if kind == "function" else f"{name}." for kind, name in self.scope
        ) + node.name.value
        if self._is_target(node, names, qualname):
            in_class = bool(self.scope) and self.scope[-1][0] == "class"
            self.found[id(node)] = _Target(qualname, "_".join(names), self.scope[-1][1] if in_class else None)
            if in_class:
                self.methods[id(node)] = (self.scope[-1][1], _first_parameter(node))
            return False  # nested compiled functions stay as they are, compiled when they run
        self.scope.append(("function", node.name.value))
        self.entered.add(id(node))
        return True

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if id(node) in self.entered:
            self.scope.pop()

    def _is_target(self, func: cst.FunctionDef, names: list[str], qualname: str) -> bool:
        if self.select is not None and not self.select & {func.name.value, ".".join(names), qualname}:
            return False
        if any(decorator_name(d, self.imports) in COMPILE_DECORATORS for d in func.decorators):
            return True
        return self.tensor_functions is not None and func in self.tensor_functions


def _first_parameter(func: cst.FunctionDef) -> str | None:
    params = [*func.params.posonly_params, *func.params.params]
    return params[0].name.value if params else None


class _MethodsOutsideTheirClass(cst.CSTTransformer):
    """Applies the decorator path's own `MethodBodyOutsideClass` to each target method.

    `super()` becomes `super(Model, self)`: the rewritten file has no `__class__` cell
    to pass, and the class's name is what it is bound to where the regions run.
    """

    def __init__(self, methods: dict[int, tuple[str, str | None]], targets: set[int]) -> None:
        self.methods = methods
        self.targets = targets
        self.renewed: dict[int, int] = {}  # id(original target) -> id(its node in the new tree)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return id(node) not in self.targets  # a target holds no other target

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        if id(original) in self.methods:
            class_name, first_parameter = self.methods[id(original)]
            # The transformer rewrites the body: the def stays a def.
            updated = cast(cst.FunctionDef, original.visit(
                MethodBodyOutsideClass(class_name, first_parameter, super_class=class_name)))
        if id(original) in self.targets:
            self.renewed[id(original)] = id(updated)
        return updated


# -- the rewrite ---------------------------------------------------------------------------

class _ModuleRewriter(cst.CSTTransformer):
    """Replaces each target by its RegionSet, region functions and rewritten function.

    Regions of a method go before the outermost class around it (class bodies
    are not scopes their methods can see), into the module or the function
    that holds that class, so they still close over that function's names.
    """

    def __init__(self, context: ModuleContext, targets: dict[int, _Target], namer: Namer) -> None:
        self.context = context
        self.targets = targets
        self.namer = namer
        self.unbound_var = namer.new(UNBOUND_VAR)
        self.rewritten: list[RewrittenFunction] = []
        self.scopes: list[str] = []  # "class" / "function", innermost last
        self.hoisted: list[list[cst.BaseStatement]] = []  # one list per enclosing class

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.scopes.append("class")
        self.hoisted.append([])
        return True

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        self.scopes.pop()
        hoisted = self.hoisted.pop()
        if not hoisted:
            return updated
        if self.scopes and self.scopes[-1] == "class":  # a class in a class: carry them further out
            self.hoisted[-1].extend(hoisted)
            return updated
        placed = self._spaced(hoisted, first_leading=updated.leading_lines)
        return cst.FlattenSentinel([*placed, updated.with_changes(leading_lines=self._blank_lines())])

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if id(node) in self.targets:
            return False
        self.scopes.append("function")
        return True

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        target = self.targets.get(id(original))
        if target is None:
            self.scopes.pop()
            return updated
        regionset, region_defs, function = self._rewrite(original, target)
        if target.class_name is not None:
            self.hoisted[-1].extend([regionset, *region_defs])
            return function
        placed = self._spaced([regionset, *region_defs, function], first_leading=original.leading_lines)
        return cst.FlattenSentinel(placed)

    def _rewrite(self, func: cst.FunctionDef, target: _Target):
        _, outlined = outline(
            func, self.context, regions_var=f"_carve_{target.region_prefix}",
            region_prefix=target.region_prefix, namer=self.namer, unbound_var=self.unbound_var,
        )
        regions_var = outlined.regions_var
        self.rewritten.append(RewrittenFunction(target.qualname, self.context.line_of(func), outlined))
        regionset = replace_statement(
            "regions = carve.RegionSet(qualname, options)",
            regions=regions_var, qualname=cst.SimpleString(_quoted(target.qualname)),
            options=self._compile_arguments(func),
        )
        region_defs = [
            region_def.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(
                f"# carve: graph region, lines {info.first_line}-{info.last_line}, compiled to an FX graph"
            ))])
            for region_def, info in zip(outlined.region_defs, outlined.regions)
        ]
        entry = cst.Decorator(replace_expression("regions.entry", regions=regions_var))
        decorators = [entry if self._is_compile_decorator(d) else d for d in outlined.function.decorators]
        if not any(d is entry for d in decorators):
            decorators.append(entry)
        # A method keeps its place (and the comments above it) in the class.
        function = outlined.function.with_changes(
            decorators=decorators, leading_lines=func.leading_lines if target.class_name is not None else ()
        )
        return regionset, region_defs, function

    def _spaced(self, statements: list, first_leading) -> list:
        """The first statement takes the replaced node's own leading lines; PEP 8 blank lines between."""
        placed = [statements[0].with_changes(leading_lines=[*first_leading, *statements[0].leading_lines])]
        for statement in statements[1:]:
            placed.append(statement.with_changes(leading_lines=[*self._blank_lines(), *statement.leading_lines]))
        return placed

    def _blank_lines(self) -> list[cst.EmptyLine]:
        """Two blank lines between top-level definitions, one inside a body (PEP 8)."""
        return [cst.EmptyLine(indent=False)] * (1 if self.scopes else 2)

    def _is_compile_decorator(self, decorator: cst.Decorator) -> bool:
        return decorator_name(decorator, self.context.imports) in COMPILE_DECORATORS

    def _compile_arguments(self, func: cst.FunctionDef) -> list[cst.Arg]:
        """The decorator's keywords, passed on to carve.RegionSet; anything else cannot be."""
        render = cst.Module(body=[]).code_for_node
        for decorator in func.decorators:
            if not (self._is_compile_decorator(decorator) and isinstance(decorator.decorator, cst.Call)):
                continue
            arguments = []
            for arg in decorator.decorator.args:
                keyword = arg.keyword.value if arg.keyword is not None else None
                if keyword is None and arg.star != "**":
                    raise RewriteError(
                        f"cannot rewrite {func.name.value}(): positional argument to "
                        f"{render(decorator.decorator.func)}(); pass options by keyword",
                        self.context.line_of(decorator),
                    )
                if keyword is not None and keyword not in COMPILE_KEYWORDS:
                    raise RewriteError(
                        f"cannot rewrite {func.name.value}(): unsupported option {keyword}= "
                        f"(carve takes {', '.join(sorted(COMPILE_KEYWORDS))})",
                        self.context.line_of(decorator),
                    )
                # As written, without the spacing around it (a decorator may span lines).
                arguments.append(arg.with_changes(
                    comma=cst.MaybeSentinel.DEFAULT, whitespace_after_arg=cst.SimpleWhitespace("")))
            return arguments
        return []


def _syntax_error(text: str, error: cst.ParserSyntaxError) -> RewriteError:
    """Python's own message when it has one (`'(' was never closed`), else libcst's.

    `ast.parse` only parses: nothing in the file runs.
    """
    try:
        ast.parse(text)
    except SyntaxError as python_error:
        return RewriteError(f"syntax error: {python_error.msg}", python_error.lineno or 0)
    except (ValueError, RecursionError):
        pass
    return RewriteError(f"syntax error: {error.message}", error.raw_line)


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _is_generated(decorator: cst.Decorator) -> bool:
    expression = decorator.decorator
    if isinstance(expression, cst.Call):
        expression = expression.func
    return (
        isinstance(expression, cst.Attribute)
        and expression.attr.value in GENERATED_DECORATOR_METHODS
        and isinstance(expression.value, cst.Name)
        and expression.value.value.startswith("_carve_")
    )


def _ensure_import_carve(module: cst.Module, context: ModuleContext) -> cst.Module:
    """`import carve` after the leading imports, unless the module has it already."""
    if context.imports.aliases.get("carve") == "carve":
        return module
    return _insert_after_imports(module, cst.parse_statement("import carve"))


def _insert_after_imports(
    module: cst.Module, statement: cst.SimpleStatementLine | cst.BaseCompoundStatement
) -> cst.Module:
    """`statement` after the module's leading docstring and import lines."""
    body = list(module.body)
    position = 0
    for index, existing in enumerate(body):
        if isinstance(existing, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.SimpleString))
            for s in existing.body
        ):
            position = index + 1
        else:
            break
    body.insert(position, statement)
    return module.with_changes(body=body)
