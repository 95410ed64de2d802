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
are rewritten, and those compiled by a call (`train = carve.compile(train)`,
`model = torch.compile(model)` after `model = Net()`: `Net.forward`; the CLI
passes the ones another file of the tree compiles): the call is replaced by
what it compiles (`model = model  # carve rewrite: ...`) and its literal
options go to the function's RegionSet; with `all_functions`, every function that does tensor work
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
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import cast

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from carve.rewriters.analysis import ModuleContext
from carve.rewriters.callees import decorator_name
from carve.rewriters.checks.tensor_work import TensorWork
from carve.rewriters.methods import MethodBodyOutsideClass
from carve.rewriters.lint.scope import module_made_by
from carve.rewriters.names import ImportTable, dotted_name
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
    # Compile calls unwrapped because what they compile is rewritten where it is defined.
    unwrapped_calls: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.functions) or bool(self.unwrapped_calls)


def rewrite_source(
    text: str, filename: str = "<unknown>", *, all_functions: bool = False, select: AbstractSet[str] | None = None,
    compiled_elsewhere: Mapping[str, CompileOptions] | None = None, compiled_here: AbstractSet[str] = frozenset(),
) -> RewriteResult:
    """`compiled_elsewhere`: qualified names of functions of this file that another file of the tree
    compiles by a call (`model = torch.compile(GPT(cfg))` in train.py: "GPT.forward"), with that
    call's options; `compiled_here`: the names this file imports whose compile calls here compile
    such a function (those calls are unwrapped: the function itself is rewritten in its file)."""
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise _syntax_error(text, error) from None
    imports = ImportTable.from_module(module)
    calls = CompileCalls.find(module, imports)
    by_call: dict[str, CompileOptions] = {}
    for site in calls.sites:
        if site.target is None or site.target in by_call:
            continue
        if site.options is None:
            raise RewriteError(
                f"cannot rewrite {site.target}(): the compile call passes an option that is not a literal (or an "
                f"option carve does not take); pass literal options ({', '.join(sorted(COMPILE_KEYWORDS))}) or "
                f"decorate the function", site.line)
        by_call[site.target] = site.options
    for qualname, options in (compiled_elsewhere or {}).items():
        by_call.setdefault(qualname, options)
    targets = _TargetFinder(imports, TensorFunctions(module, imports) if all_functions else None, select, by_call)
    module.visit(targets)
    unwrapped = {id(site.call) for site in calls.sites if site.target is not None and site.target in targets.qualnames
                 or site.imported is not None and site.imported in compiled_here}
    if not targets.found and not unwrapped:
        return RewriteResult(text)
    if unwrapped:
        module = module.visit(_UnwrapCompileCalls(unwrapped))
        if not targets.found:
            return RewriteResult(module.code, [], len(unwrapped))
        # The tree changed: find the targets again in it (the functions themselves are untouched).
        targets = _TargetFinder(imports, TensorFunctions(module, imports) if all_functions else None, select, by_call)
        module.visit(targets)
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
    return RewriteResult(new_module.code, transformer.rewritten, len(unwrapped))


# -- which functions -----------------------------------------------------------------------

# The literal options of a compile call, as (keyword, source text) pairs: `(("backend", '"eager"'),)`.
CompileOptions = tuple[tuple[str, str], ...]
_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


@dataclass
class CompileCallSite:
    """`train = carve.compile(train, backend="eager")`, `model = torch.compile(model)` with `model = Net()`."""

    call: cst.Call
    # What it compiles in this module ("train", "Net.forward"), or None.
    target: str | None
    # The compiled thing, named as written, when it is imported from another module ("GPT", "m.step").
    imported: str | None
    # "function" or "instance" (a module: its forward is compiled).
    what: str
    # The call's options, when all are literals (None when one is not: it cannot move to the definition).
    options: CompileOptions | None
    line: int = 0


class CompileCalls(cst.CSTVisitor):
    """The calls of `carve.compile` / `torch.compile` in a module (anywhere: module level, `main()`,
    `if __name__ == "__main__":`) and what each compiles, resolved the way `carve lint` resolves
    them (rewriters/lint/scope.py): a function of the module, a module class's forward (`Net()`,
    `model` after `model = Net()`, `Net.from_pretrained(...)`), or something imported.

        calls = CompileCalls.find(module, imports)
        [(site.target, site.options) for site in calls.sites]     # [("train", (("backend", '"eager"'),))]
    """

    @classmethod
    def find(cls, module: cst.Module, imports: ImportTable) -> "CompileCalls":
        from carve.rewriters.lint.scope import ModuleIndex

        finder = cls(ModuleIndex.build(module), imports)
        MetadataWrapper(module, unsafe_skip_copy=True).visit(finder)
        for site in finder.sites:
            finder._resolve(site)
        return finder

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, index, imports: ImportTable) -> None:
        self.index = index
        self.imports = imports
        self.sites: list[CompileCallSite] = []
        self.instances: dict[str, set[str]] = {}  # name -> class names (local or imported, as written)
        self._arguments: dict[int, cst.BaseExpression] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        made = self._made_class(node.value)
        if made is not None:
            for target in node.targets:
                name = dotted_name(target.target)
                if name:
                    self.instances.setdefault(name, set()).add(made)

    def visit_Call(self, node: cst.Call) -> None:
        if (self.imports.resolve(node.func) or "") not in COMPILE_DECORATORS or not node.args:
            return
        first = node.args[0]
        if first.keyword is not None or first.star:
            return
        options: list[tuple[str, str]] = []
        literal_options = True
        render = cst.Module(body=[]).code_for_node
        for arg in node.args[1:]:
            keyword = arg.keyword.value if arg.keyword is not None else None
            value = arg.value
            literal = isinstance(value, _LITERALS) or (isinstance(value, cst.Name) and value.value in ("True", "False", "None"))
            if keyword is None or keyword not in COMPILE_KEYWORDS or not literal:
                literal_options = False
                break
            options.append((keyword, render(value)))
        position = self.get_metadata(PositionProvider, node, None)
        self.sites.append(CompileCallSite(node, None, None, "function", tuple(options) if literal_options else None,
                                          position.start.line if position else 0))
        self._arguments[id(node)] = first.value

    def _made_class(self, value: cst.BaseExpression) -> str | None:
        """`Net` for `Net(...)`, `Net().to(device)` or `Net.from_pretrained(...)`, a class of this module or an
        imported name."""
        value = module_made_by(value)
        if not isinstance(value, cst.Call) or (self.imports.resolve(value.func) or "").startswith(("torch.", "carve.")):
            return None
        name = dotted_name(value.func) or ""
        head = name.split(".", 1)[0]
        if name in self.index.classes or head in self.index.classes:
            return name if name in self.index.classes else head
        if head in self.imports.aliases:
            return name
        return None

    def _resolve(self, site: CompileCallSite) -> None:
        argument = self._arguments[id(site.call)]
        made = self._made_class(argument)
        name = dotted_name(argument) or ""
        classes = {made} if made is not None else set(self.instances.get(name, ()))
        if classes:
            site.what = "instance"
            for class_name in sorted(classes):
                if class_name in self.index.classes:
                    if self.index.method(self.index.classes[class_name], "forward") is not None:
                        site.target = f"{class_name}.forward"
                elif class_name.split(".", 1)[0] in self.imports.aliases:
                    site.imported = class_name
            return
        if name in self.index.functions and "." not in name:
            site.target = name
        elif name and name.split(".", 1)[0] in self.imports.aliases and not name.startswith(("torch.", "carve.")):
            site.imported = name


class _UnwrapCompileCalls(cst.CSTTransformer):
    """`model = torch.compile(model)` -> `model = model  # carve rewrite: ...`: the compiled function itself
    is rewritten where it is defined, so compiling it again would compile the rewritten code."""

    COMMENT = "# carve rewrite: compiled where it is defined"

    def __init__(self, calls: set[int]) -> None:
        self.calls = calls
        self.unwrapped_in_line = False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self.unwrapped_in_line = False
        return True

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if id(original) in self.calls:
            self.unwrapped_in_line = True
            return updated.args[0].value.with_changes(
                lpar=[*original.lpar, *updated.args[0].value.lpar], rpar=[*updated.args[0].value.rpar, *original.rpar])
        return updated

    def leave_SimpleStatementLine(self, original, updated):
        if self.unwrapped_in_line and updated.trailing_whitespace.comment is None:
            return updated.with_changes(trailing_whitespace=cst.TrailingWhitespace(
                whitespace=cst.SimpleWhitespace("  "), comment=cst.Comment(self.COMMENT),
                newline=updated.trailing_whitespace.newline))
        return updated


@dataclass(frozen=True)
class _Target:
    qualname: str          # Python's __qualname__: "outer.<locals>.inner", "Model.forward"
    region_prefix: str     # "outer_inner", "Model_forward"
    class_name: str | None  # set for methods: their regions are hoisted out of the class
    # Compiled by a call (`f = carve.compile(f, backend="eager")`): that call's options.
    call_options: CompileOptions | None = None


class _TargetFinder(cst.CSTVisitor):
    """Finds the functions to rewrite, outermost first; nothing inside one of them is a target."""

    def __init__(
        self, imports: ImportTable, tensor_functions: TensorFunctions | None, select: AbstractSet[str] | None,
        compiled_by_call: Mapping[str, CompileOptions] | None = None,
    ) -> None:
        self.imports = imports
        # With all_functions: every function that does tensor work is a target.
        self.tensor_functions = tensor_functions
        self.select = select
        # Qualified name -> the options of the compile call that compiles it (`train = carve.compile(train)`).
        self.compiled_by_call = compiled_by_call or {}
        self.qualnames: set[str] = set()
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
            self.found[id(node)] = _Target(qualname, "_".join(names), self.scope[-1][1] if in_class else None,
                                           self.compiled_by_call.get(qualname))
            self.qualnames.add(qualname)
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
        if qualname in self.compiled_by_call:
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
        self.tensor_work: dict[int, TensorWork] = {}
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
        options = self._compile_arguments(func)
        if not options and target.call_options:
            options = [cst.Arg(cst.parse_expression(value), keyword=cst.Name(keyword),
                               equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
                       for keyword, value in target.call_options]
        regionset = replace_statement(
            "regions = carve.RegionSet(qualname, options)",
            regions=regions_var, qualname=cst.SimpleString(_quoted(target.qualname)),
            options=options,
        )
        region_defs = [
            region_def.with_changes(leading_lines=[cst.EmptyLine(comment=cst.Comment(self._region_comment(func, info)))])
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

    def _region_comment(self, func: cst.FunctionDef, info) -> str:
        """What the region above a region function is: a graph region when its statements do tensor work
        (rewriters/checks/tensor_work.py); otherwise plain Python statements (`model.train()`,
        `total = 0`), which make no graph."""
        lines = f"lines {info.first_line}-{info.last_line}"
        work = self.tensor_work.get(id(func))
        if work is None:
            work = self.tensor_work[id(func)] = TensorWork(func, self.context.imports)
        statements = [statement for statement in _statements(func)
                      if info.first_line <= self.context.line_range(statement)[0]
                      and self.context.line_range(statement)[1] <= info.last_line]
        if not statements or work.does_work(statements):
            return f"# carve: graph region, {lines}, compiled to an FX graph"
        return f"# carve: region, {lines}, no tensor operation (no graph to compile)"

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
    """`import carve` after the leading imports, unless they import it already: the RegionSets use it
    where the rewritten functions are defined, which may be above the module's own `import carve`
    (a script that imports carve at its end, or in `main()`)."""
    for statement in _leading_statements(module):
        for small in statement.body:
            if isinstance(small, cst.Import) and any(
                    dotted_name(alias.name) == "carve" and (alias.asname is None or dotted_name(alias.asname.name) == "carve")
                    for alias in small.names):
                return module
    return _insert_after_imports(module, cst.parse_statement("import carve"))


def _leading_statements(module: cst.Module) -> list[cst.SimpleStatementLine]:
    """The module's leading docstring and import lines."""
    leading = []
    for existing in module.body:
        if isinstance(existing, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.SimpleString))
            for s in existing.body
        ):
            leading.append(existing)
        else:
            break
    return leading


def _statements(func: cst.FunctionDef) -> list[cst.CSTNode]:
    """Every statement of `func`'s body, at any depth (not inside nested definitions)."""
    found: list[cst.CSTNode] = []

    class Statements(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is func

        def visit_ClassDef(self, node: cst.ClassDef) -> bool:
            return False

        def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
            found.append(node)

        def visit_BaseCompoundStatement(self, node: cst.BaseCompoundStatement) -> None:
            if node is not func:
                found.append(node)

    func.visit(Statements())
    return found


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
