"""`carve rewrite`: the whole-file transformation (the decorator's pipeline, written out).

    import torch, carve                     import torch, carve

    @carve.compile(backend="eager")         _carve_f = carve.RegionSet("f", backend="eager")
    def f(x):                     ->
        y = x.sin()                         @_carve_f.graph(3, 3)
        print(y)                            def _f_graph_region_0_lines_3_3(x):
        return y.cos()                          y = x.sin()
                                                return y
                                            ...
                                            @_carve_f.entry
                                            def f(x):
                                                y = _f_graph_region_0_lines_3_3(x)
                                                # carve: eager, CRV003 I/O or logging: print() performs I/O
                                                _carve_f.graph_break(4, "CRV003")
                                                print(y)
                                                return _f_graph_region_1_lines_5_5(y)

Functions compiled with `carve.compile` or `torch.compile` (any import
spelling) are rewritten; with `all_functions`, every function that uses torch.
Everything else in the file is kept byte for byte. The output has no compile
decorators left, so rewriting it again changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.helpers import parse_template_statement

from carve.rewriters.analysis import ModuleContext, analyze_function
from carve.rewriters.callees import decorator_name
from carve.rewriters.outline import OutlinedFunction, outline_function

COMPILE_DECORATORS = frozenset({"carve.compile", "torch.compile", "torch.compiler.compile"})
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
    text: str, filename: str = "<unknown>", *, all_functions: bool = False, select: set[str] | None = None
) -> RewriteResult:
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        raise RewriteError(f"syntax error: {error.message}", error.raw_line) from None
    context = ModuleContext(module, filename)
    transformer = _ModuleRewriter(context, all_functions, select)
    new_module = module.visit(transformer)
    if not transformer.rewritten:
        return RewriteResult(text)
    new_module = _ensure_import_carve(new_module, context)
    return RewriteResult(new_module.code, transformer.rewritten)


class _ModuleRewriter(cst.CSTTransformer):
    """Rewrites target functions of module level, of classes, and of function bodies."""

    def __init__(self, context: ModuleContext, all_functions: bool, select: set[str] | None) -> None:
        self.context = context
        self.all_functions = all_functions
        self.select = select
        self.rewritten: list[RewrittenFunction] = []
        self.scope: list[str] = []

    # Track qualified names; rewrite bodies bottom-up, block by block.
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(node.name.value)

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef):
        self.scope.pop()
        return updated

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scope.append(node.name.value)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef):
        self.scope.pop()
        return updated

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        return updated.with_changes(body=self._rewrite_block(original.body, updated.body, prefix=""))

    def leave_IndentedBlock(self, original: cst.IndentedBlock, updated: cst.IndentedBlock) -> cst.IndentedBlock:
        prefix = "_".join(self.scope)
        return updated.with_changes(body=self._rewrite_block(original.body, updated.body, prefix))

    def _rewrite_block(self, originals, updateds, prefix: str) -> list:
        out: list = []
        for original, updated in zip(originals, updateds):
            if isinstance(original, cst.FunctionDef) and self._is_target(original):
                out.extend(self._rewrite_function(original, prefix))
            elif isinstance(original, cst.ClassDef):
                hoisted, new_class = self._rewrite_methods(original, updated, prefix)
                out.extend(hoisted)
                out.append(new_class)
            else:
                out.append(updated)
        return out

    def _is_target(self, func: cst.FunctionDef) -> bool:
        names = {decorator_name(d, self.context.imports) for d in func.decorators}
        if any(_is_generated(d) for d in func.decorators):
            return False
        qualname = ".".join([*self.scope, func.name.value]) if self.scope else func.name.value
        if self.select is not None and func.name.value not in self.select and qualname not in self.select:
            return False
        if names & COMPILE_DECORATORS:
            return True
        return self.all_functions and _uses_torch(func, self.context)

    def _rewrite_function(self, func: cst.FunctionDef, prefix: str, class_name: str | None = None) -> list:
        qualname = ".".join(filter(None, [*self.scope, class_name, func.name.value]))
        region_prefix = "_".join(filter(None, [prefix, class_name, func.name.value]))
        regions_var = f"_carve_{region_prefix}"
        analysis = analyze_function(func, self.context)
        outlined = outline_function(func, analysis, self.context, regions_var=regions_var, region_prefix=region_prefix)
        self.rewritten.append(RewrittenFunction(qualname, self.context.line_of(func), outlined))
        compile_args = self._compile_arguments(func)
        regionset = parse_template_statement(
            "{var} = carve.RegionSet({name}" + "".join(", " + a for a in compile_args) + ")",
            var=cst.Name(regions_var), name=cst.SimpleString(repr(qualname)),
        ).with_changes(leading_lines=func.leading_lines)
        entry = cst.Decorator(cst.Attribute(cst.Name(regions_var), cst.Name("entry")))
        decorators = [entry if self._is_compile_decorator(d) else d for d in outlined.function.decorators]
        if not any(d is entry for d in decorators):
            decorators.append(entry)
        new_func = outlined.function.with_changes(decorators=decorators, leading_lines=[cst.EmptyLine(indent=False)])
        return [regionset, *outlined.region_defs, new_func]

    def _is_compile_decorator(self, decorator: cst.Decorator) -> bool:
        return decorator_name(decorator, self.context.imports) in COMPILE_DECORATORS

    def _compile_arguments(self, func: cst.FunctionDef) -> list[str]:
        for decorator in func.decorators:
            if self._is_compile_decorator(decorator) and isinstance(decorator.decorator, cst.Call):
                return [
                    cst.Module(body=[]).code_for_node(arg).rstrip(", ").strip()
                    for arg in decorator.decorator.args if arg.keyword is not None
                ]
        return []

    def _rewrite_methods(self, original: cst.ClassDef, updated: cst.ClassDef, prefix: str):
        hoisted: list = []
        if not isinstance(updated.body, cst.IndentedBlock):
            return hoisted, updated
        new_body: list = []
        self.scope.append(original.name.value)
        try:
            for original_statement, statement in zip(original.body.body, updated.body.body):
                if isinstance(original_statement, cst.FunctionDef) and self._is_target(original_statement):
                    self.scope.pop()
                    parts = self._rewrite_function(original_statement, prefix, class_name=original.name.value)
                    self.scope.append(original.name.value)
                    hoisted.extend(parts[:-1])
                    new_body.append(parts[-1])
                else:
                    new_body.append(statement)
        finally:
            self.scope.pop()
        if hoisted:
            hoisted[0] = hoisted[0].with_changes(leading_lines=updated.leading_lines)
            updated = updated.with_changes(body=updated.body.with_changes(body=new_body), leading_lines=[cst.EmptyLine(indent=False)])
        return hoisted, updated


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


class _TorchUse(cst.CSTVisitor):
    def __init__(self, context: ModuleContext) -> None:
        self.context = context
        self.found = False

    def visit_Name(self, node: cst.Name) -> None:
        if not self.found:
            qualified = self.context.imports.qualify(node.value) or ""
            self.found = qualified == "torch" or qualified.startswith("torch.")


def _uses_torch(func: cst.FunctionDef, context: ModuleContext) -> bool:
    visitor = _TorchUse(context)
    func.body.visit(visitor)
    return visitor.found


def _ensure_import_carve(module: cst.Module, context: ModuleContext) -> cst.Module:
    if context.imports.aliases.get("carve") == "carve":
        return module
    body = list(module.body)
    position = 0
    for index, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) or (isinstance(s, cst.Expr) and isinstance(s.value, cst.SimpleString))
            for s in statement.body
        ):
            position = index + 1
        else:
            break
    body.insert(position, cst.parse_statement("import carve"))
    return module.with_changes(body=body)
