"""Which functions of a module `carve lint` checks.

    import torch
    from carve import compile as cc

    @torch.compile(fullgraph=False)
    def step(x): return helper(x)       # compiled: decorated (any import spelling)

    def helper(x): print(x)             # reached: called by a compiled function, same module

    @cc
    def other(x): ...                   # compiled

    def plain(x): ...
    fast = torch.compile(plain)         # compiled: passed to torch.compile / carve.compile

    class Net(nn.Module):
        def forward(self, x): ...       # compiled: `torch.compile(Net())`, `torch.compile(net)`
                                        # with `net = Net()`, or `net.compile()`

With `all_functions`, every function that does tensor work
(`carve.rewriters.tensor_functions`) is a target too. Functions marked disable / nonstrict_trace are never
entered: they run eagerly or are traced as opaque calls.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from carve.rewriters.callees import DISABLE_DECORATORS, TRACEABLE_DECORATORS, decorator_name
from carve.rewriters.walk import children, walk
from carve.rewriters.names import ImportTable, dotted_name, module_self_aliases

COMPILE_FUNCTIONS = frozenset({"carve.compile", "torch.compile", "torch.compiler.compile"})
# nn.Module methods that return the module itself: `Net().to(device)` is still a Net.
MODULE_RETURNING_METHODS = frozenset({"to", "cuda", "cpu", "double", "float", "half", "bfloat16", "train", "eval",
                                      "requires_grad_", "to_empty", "apply", "share_memory", "type", "xpu"})


def module_made_by(value: cst.BaseExpression) -> cst.BaseExpression:
    """The constructor call of `Net(...).to(device).eval()`: `Net(...)` (else `value` itself)."""
    while (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
           and value.func.attr.value in MODULE_RETURNING_METHODS and isinstance(value.func.value, cst.Call)):
        value = value.func.value
    return value
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


@dataclass
class ModuleIndex:
    """The definitions of a module, by qualified name (`f`, `Net.forward`, `outer.inner`)."""

    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    owner_class: dict[int, cst.ClassDef] = field(default_factory=dict)
    qualnames: dict[int, str] = field(default_factory=dict)

    @classmethod
    def build(cls, module: cst.Module) -> "ModuleIndex":
        index = cls()
        index._add_block(module, prefix="", owner=None)
        # `d2l.GRU` where `d2l = sys.modules[__name__]`: the module's own definitions under that name too.
        for alias in module_self_aliases(module):
            for name, function in list(index.functions.items()):
                if "." not in name:
                    index.functions.setdefault(f"{alias}.{name}", function)
            for name, class_def in list(index.classes.items()):
                if "." not in name:
                    index.classes.setdefault(f"{alias}.{name}", class_def)
        return index

    def _add_block(self, node: cst.CSTNode, prefix: str, owner: cst.ClassDef | None) -> None:
        for child in children(node):
            if isinstance(child, cst.FunctionDef):
                qualname = prefix + child.name.value
                self.functions.setdefault(qualname, child)
                self.qualnames[id(child)] = qualname
                if owner is not None:
                    self.owner_class[id(child)] = owner
                self._add_block(child.body, qualname + ".", None)
            elif isinstance(child, cst.ClassDef):
                qualname = prefix + child.name.value
                self.classes.setdefault(qualname, child)
                self._add_block(child.body, qualname + ".", child)
            elif isinstance(child, (cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.Finally)):
                self._add_block(child, prefix, owner)

    def method(self, class_def: cst.ClassDef, name: str) -> cst.FunctionDef | None:
        body = class_def.body.body if isinstance(class_def.body, cst.IndentedBlock) else ()
        for statement in body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == name:
                return statement
        return None


def is_module_class(class_def: cst.ClassDef, index: ModuleIndex, imports: ImportTable, seen=()) -> bool:
    """A subclass of torch.nn.Module, directly or through classes of the same module."""
    for base in class_def.bases:
        qualified = imports.resolve(base.value) or ""
        if qualified in MODULE_BASES:
            return True
        local = dotted_name(base.value)
        parent = index.classes.get(local or "")
        if parent is not None and parent is not class_def and local not in seen:
            if is_module_class(parent, index, imports, (*seen, local)):
                return True
    return False


def is_opaque(func: cst.FunctionDef, imports: ImportTable) -> bool:
    """Marked disable or nonstrict_trace/allow_in_graph: its body is not traced, so not linted."""
    names = {decorator_name(d, imports) for d in func.decorators}
    return bool(names & (DISABLE_DECORATORS | TRACEABLE_DECORATORS))


def compiled_functions(
    module: cst.Module, index: ModuleIndex, imports: ImportTable, source_mentions_compile: bool = True,
    imported_names: frozenset[str] = frozenset(), imported_targets: list | None = None,
):
    """The functions of `module` that are compiled, in source order, each once.

    Compiled things that are imported (their head is in `imported_names`) are appended to
    `imported_targets` as (dotted name, what): `("GPT", "instance")` for `torch.compile(GPT(cfg))`
    or `net = GPT(cfg); net.compile()`, `("ops.step", "function")` for `torch.compile(ops.step)`.
    """
    found: dict[int, cst.FunctionDef] = {}
    for func in index.functions.values():
        if any(decorator_name(d, imports) in COMPILE_FUNCTIONS for d in func.decorators):
            found[id(func)] = func
    if source_mentions_compile:
        finder = _CompileCalls(index, imports, imported_names)
        walk(module, finder)
        for func in finder.targets(module):
            found.setdefault(id(func), func)
        if imported_targets is not None:
            for target in finder.imported:
                if target not in imported_targets:
                    imported_targets.append(target)
    return list(found.values())


class _CompileCalls(cst.CSTVisitor):
    """`torch.compile(f)`, `carve.compile(Net())`, `net.compile()` and `x = Net(...)` anywhere in a module."""

    def __init__(self, index: ModuleIndex, imports: ImportTable, imported_names: frozenset[str] = frozenset()) -> None:
        self.index = index
        self.imports = imports
        self.imported_names = imported_names
        # Compiled things defined in other modules: (dotted name, "instance" | "function").
        self.imported: list[tuple[str, str]] = []
        self.compiled_arguments: list[cst.BaseExpression] = []
        self.compiled_receivers: list[str] = []
        self.instances: dict[str, set[str]] = {}  # variable name (or self.attr) -> module class names

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.imports.resolve(node.func)
        if qualified in COMPILE_FUNCTIONS and node.args and node.args[0].keyword is None:
            self.compiled_arguments.append(node.args[0].value)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile" and not node.args:
            receiver = dotted_name(node.func.value)
            if receiver:
                self.compiled_receivers.append(receiver)

    def visit_Assign(self, node: cst.Assign) -> None:
        class_name = self._instantiated_class(node.value)
        if class_name:
            for target in node.targets:
                name = dotted_name(target.target)
                if name:
                    self.instances.setdefault(name, set()).add(class_name)

    def _instantiated_class(self, value: cst.BaseExpression) -> str | None:
        """`Net` for `Net(...)`; an imported callable's name too (`GPT(cfg)`, `GPT.from_pretrained(...)`:
        whether it makes a module is decided where it is defined); `Net(...).to(device)` too."""
        value = module_made_by(value)
        if isinstance(value, cst.Call):
            name = dotted_name(value.func)
            if name in self.index.classes:
                return name
            if name and name.split(".", 1)[0] in self.imported_names and name.split(".", 1)[0] not in self.index.classes:
                return name
        return None

    def targets(self, module: cst.Module):
        for argument in self.compiled_arguments:
            yield from self._functions_of(argument)
        for receiver in self.compiled_receivers:
            for class_name in self.instances.get(receiver, ()):
                yield from self._forward_of(class_name)

    def _functions_of(self, argument: cst.BaseExpression):
        class_name = self._instantiated_class(argument)
        if class_name:
            yield from self._forward_of(class_name)
            return
        name = dotted_name(argument)
        if name is None:
            return
        if name in self.index.functions:
            yield self.index.functions[name]
        elif name.split(".", 1)[0] in self.imported_names and name not in self.instances:
            self._imported(name, "function")
        elif name.endswith(".forward") and name[: -len(".forward")] in self.instances:
            for class_name in self.instances[name[: -len(".forward")]]:
                yield from self._forward_of(class_name)
        for class_name in self.instances.get(name, ()):
            yield from self._forward_of(class_name)

    def _imported(self, name: str, what: str) -> None:
        if (name, what) not in self.imported:
            self.imported.append((name, what))

    def _forward_of(self, class_name: str):
        class_def = self.index.classes.get(class_name)
        if class_def is None:
            if class_name.split(".", 1)[0] in self.imported_names:
                self._imported(class_name, "instance")
            return
        forward = self.index.method(class_def, "forward")
        if forward is not None:
            yield forward
