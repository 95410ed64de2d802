"""Where an imported name is defined, found by path the way Python's import system would,
never by importing or running anything.

    # train.py                                # model.py
    from model import GPT                     class GPT(nn.Module):
    net = torch.compile(GPT(config))              def forward(self, idx): ...

    layout = ProjectLayout.build(["."], ["train.py", "model.py"])
    graph = ModuleGraph.for_layout(layout)
    graph.definition("train.py", "GPT")       # Definition(".../model.py", "GPT", "class")

Absolute imports are searched first in the roots of the linted tree (what `sys.path[0]`
is when a script of the tree runs: the directory above a file's top package), then on the
library path (the running interpreter's `sys.path`, so `PYTHONPATH` counts) with
`importlib.machinery.PathFinder.find_spec`, which looks at the file system only. Relative
imports (`from .model import GPT`, `from .. import utils`) are resolved from the
importing file's directory. A module is read with Python's `ast` to learn what it defines
and what it imports; re-exports (`from .gpt import GPT` in a package's `__init__.py`) are
followed.

Modules whose code Dynamo does not inline as user code are never followed:
torch itself (its functions are graph operations), carve, the standard library, and the
third-party packages Dynamo skips (`torch._dynamo.trace_rules.THIRDPARTY_SKIPLIST`,
copied in `checks/skipped_calls.py`, where calls into them are CRV013).
"""

from __future__ import annotations

import ast
import os
import sys
import uuid
from dataclasses import dataclass, field
from importlib.machinery import PathFinder

from carve.rewriters.rules.crv013_disabled_callee import DYNAMO_THIRDPARTY_SKIPLIST

# Top-level packages whose functions are never followed into (see the module docstring).
NEVER_FOLLOWED = frozenset({"torch", "carve", "functorch", "triton", "torchvision", "torchaudio"})
# Followed only when the file is one of the linted tree (a project's own `test.py` or `trace.py`).
NOT_FOLLOWED_OUTSIDE_THE_TREE = (
    DYNAMO_THIRDPARTY_SKIPLIST | frozenset(getattr(sys, "stdlib_module_names", ())) | {"__future__", "builtins"}
)
# Re-exports followed before giving up (`a/__init__.py` imports from `a.b`, which imports from `a.c`...).
MAX_REEXPORTS = 8


@dataclass(frozen=True)
class ProjectLayout:
    """The linted tree and where its imports may lead; picklable, so worker processes get it."""

    # Directories searched for absolute imports of tree modules, in order.
    roots: tuple[str, ...]
    # Every linted file (real paths): a target defined in one of them is reported there.
    files: frozenset[str]
    # Where installed packages are found (the running interpreter's sys.path by default).
    library_path: tuple[str, ...]
    # Calls followed into a library: 2 = a library function and the library functions it calls.
    library_depth: int = 2
    # Identifies the layout across processes (each worker keeps one ModuleGraph per layout).
    token: str = field(default_factory=lambda: uuid.uuid4().hex)

    @classmethod
    def build(cls, paths, files, library_path=None, library_depth: int = 2) -> "ProjectLayout":
        real_files = [os.path.realpath(f) for f in files]
        roots: list[str] = []
        for file in real_files:
            root = package_root(file)
            if root not in roots:
                roots.append(root)
        for path in paths:
            real = os.path.realpath(path)
            if os.path.isdir(real) and real not in roots:
                roots.append(real)
        if library_path is None:
            # '' is the current directory when carve runs as `python -m carve`: not a library.
            library_path = [p for p in sys.path if p]
        return cls(tuple(roots), frozenset(real_files), tuple(os.path.realpath(p) for p in library_path), library_depth)

    def in_tree(self, path: str) -> bool:
        return path in self.files


def package_root(path: str) -> str:
    """The directory Python must have on sys.path to import `path`: above its top package."""
    directory = os.path.dirname(os.path.realpath(path))
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return directory


def display_path(path: str) -> str:
    """`path` relative to the current directory when it is below it (as linted files are shown)."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


@dataclass(frozen=True, order=True)
class ExternalTarget:
    """A function of one linted file that another linted file compiles, or reaches from compiled code."""

    path: str            # real path of the file defining it
    qualname: str        # "GPT.forward", "helper"
    compiled: bool       # compiled in `via` (else: called from compiled code in `via`)
    via: str             # "train.py" when compiled there; "train.py:step" for the compiled function reaching it


@dataclass(frozen=True)
class Binding:
    """What an import binds a local name to: a module (`import a.b as m`) or a name in one."""

    module: str          # "a.b"; "" for `from . import x`
    level: int = 0       # leading dots of a relative import
    name: str | None = None  # `from module import name`; None when the local name is the module


@dataclass(frozen=True)
class Definition:
    path: str
    qualname: str        # "helper", "GPT", "GPT.from_pretrained"
    kind: str            # "function", "class", "method", "classmethod"


@dataclass
class ModuleSummary:
    """Top-level definitions and imports of one module, read with `ast`."""

    functions: set[str] = field(default_factory=set)
    # class name -> {method name: "method" | "classmethod" | "staticmethod"}
    classes: dict[str, dict[str, str]] = field(default_factory=dict)
    bindings: dict[str, Binding] = field(default_factory=dict)

    @classmethod
    def of_tree(cls, tree: ast.Module) -> "ModuleSummary":
        summary = cls()
        summary._add(tree.body)
        return summary

    def _add(self, statements) -> None:
        for statement in statements:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.add(statement.name)
                self.bindings.pop(statement.name, None)
            elif isinstance(statement, ast.ClassDef):
                methods = {}
                for item in statement.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        decorators = {d.id for d in item.decorator_list if isinstance(d, ast.Name)}
                        kind = next((k for k in ("classmethod", "staticmethod") if k in decorators), "method")
                        methods[item.name] = kind
                self.classes[statement.name] = methods
                self.bindings.pop(statement.name, None)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname:
                        self.bindings[alias.asname] = Binding(alias.name)
                    else:
                        head = alias.name.split(".")[0]
                        self.bindings.setdefault(head, Binding(head))
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    if alias.name == "*":
                        continue
                    local = alias.asname or alias.name
                    if local not in self.functions and local not in self.classes:
                        self.bindings[local] = Binding(statement.module or "", statement.level, alias.name)
            elif isinstance(statement, (ast.If, ast.Try)) or type(statement).__name__ == "TryStar":
                # `try: from fast import f / except ImportError: from slow import f`: the first one wins.
                for block in (statement.body, *(h.body for h in getattr(statement, "handlers", ())),
                              getattr(statement, "orelse", ()), getattr(statement, "finalbody", ())):
                    before = dict(self.bindings)
                    self._add(block)
                    for name, binding in before.items():
                        self.bindings[name] = binding


_SUMMARIES_OF_UNREADABLE = ModuleSummary()


class ModuleGraph:
    """Resolves imported names of the files of one layout to the files defining them (one per process)."""

    _by_token: dict[str, "ModuleGraph"] = {}

    @classmethod
    def for_layout(cls, layout: ProjectLayout) -> "ModuleGraph":
        graph = cls._by_token.get(layout.token)
        if graph is None:
            cls._by_token.clear()  # one layout per run: the previous run's files are not kept
            graph = cls._by_token[layout.token] = cls(layout)
        return graph

    def __init__(self, layout: ProjectLayout) -> None:
        self.layout = layout
        self._summaries: dict[str, ModuleSummary] = {}
        self._found: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self._top_package: dict[str, str] = {}
        self._packages: dict[str, bool] = {}
        self._definitions: dict[tuple[str, str], Definition | None] = {}

    # -- what a module contains -----------------------------------------------------------------
    def summary(self, path: str, tree: ast.Module | None = None) -> ModuleSummary:
        """What the module at `path` defines and imports (a directory: a namespace package, empty)."""
        found = self._summaries.get(path)
        if found is None:
            if tree is None and path.endswith(".py"):
                source = self.source(path)
                tree = source[1] if source is not None else None
            found = ModuleSummary.of_tree(tree) if tree is not None else _SUMMARIES_OF_UNREADABLE
            self._summaries[path] = found
        return found

    def source(self, path: str) -> tuple[str, ast.Module] | None:
        """The text and `ast` of the file at `path`; None when unreadable or not Python. (Not kept:
        a run may read hundreds of modules; what is kept is their summaries.)"""
        try:
            with open(path, "rb") as handle:
                data = handle.read()
            from carve.rewriters.lint.driver import decode_source

            text, _ = decode_source(data)
            return text, ast.parse(text, path)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError, LookupError, UnicodeDecodeError):
            return None

    def followed(self, path: str) -> bool:
        """False for files of packages whose functions are not followed (torch itself, when linting it)."""
        top = self.top_package(path)
        if top in NEVER_FOLLOWED:
            return False
        return top not in NOT_FOLLOWED_OUTSIDE_THE_TREE or path in self.layout.files

    def top_package(self, path: str) -> str:
        """`torch` for .../torch/nn/functional.py: the outermost package holding the file."""
        if os.path.isdir(path):
            directory = path
        else:
            directory = os.path.dirname(path)
            if not self._is_package(directory):
                return os.path.splitext(os.path.basename(path))[0]
        found = self._top_package.get(directory)
        if found is None:
            parent = os.path.dirname(directory)
            found = self.top_package(parent) if parent != directory and self._is_package(parent) else os.path.basename(directory)
            self._top_package[directory] = found
        return found

    def _is_package(self, directory: str) -> bool:
        found = self._packages.get(directory)
        if found is None:
            found = self._packages[directory] = os.path.isfile(os.path.join(directory, "__init__.py"))
        return found

    # -- finding modules ------------------------------------------------------------------------
    def find(self, module: str, level: int, importer: str) -> str | None:
        """The file of `module` (`.py` or `__init__.py`; a directory for a namespace package)."""
        if level:
            directory = os.path.dirname(importer)
            for _ in range(level - 1):
                directory = os.path.dirname(directory)
            if not module:
                init = os.path.join(directory, "__init__.py")
                return init if os.path.isfile(init) else directory
            return self._find_in(module, (directory,))
        top = module.split(".")[0]
        if top in NEVER_FOLLOWED:
            return None
        roots = (package_root(importer),) + self.layout.roots
        found = self._find_in(module, roots)
        if found is None and top not in NOT_FOLLOWED_OUTSIDE_THE_TREE:
            found = self._find_in(module, self.layout.library_path)
        return found

    def _find_in(self, module: str, search: tuple[str, ...]) -> str | None:
        key = (module, search)
        if key in self._found:
            return self._found[key]
        found = None
        parts = module.split(".")
        locations: list[str] | None = list(search)
        origin = None
        for index in range(len(parts)):
            if not locations:
                break
            try:
                spec = PathFinder.find_spec(".".join(parts[: index + 1]), locations)
            except (ImportError, ValueError, OSError):
                spec = None
            if spec is None:
                locations = None
                break
            origin = spec.origin if spec.has_location else None
            locations = list(spec.submodule_search_locations or ())
            if index + 1 == len(parts):
                if origin and origin.endswith(".py"):
                    found = os.path.realpath(origin)
                elif origin is None and locations:
                    found = os.path.realpath(locations[0])  # a namespace package
        self._found[key] = found
        return found

    # -- resolving names --------------------------------------------------------------------------
    def bindings(self, path: str, tree: ast.Module | None = None) -> dict[str, Binding]:
        return self.summary(path, tree).bindings

    def definition(self, importer: str, dotted: str) -> Definition | None:
        """Where `dotted` (`GPT`, `m.helper`, `pkg.model.GPT`), as named in `importer`, is defined."""
        key = (importer, dotted)
        if key not in self._definitions:
            head, *rest = dotted.split(".")
            binding = self.summary(importer).bindings.get(head)
            self._definitions[key] = self._through(binding, importer, rest, 0) if binding is not None else None
        return self._definitions[key]

    def _through(self, binding: Binding, importer: str, rest: list[str], depth: int) -> Definition | None:
        if depth > MAX_REEXPORTS:
            return None
        if binding.level and not self.followed(importer):
            return None
        if binding.name is None:
            path = self.find(binding.module, binding.level, importer)
            return self._attribute(path, rest, depth) if path else None
        path = self.find(binding.module, binding.level, importer)
        if path is None:
            return None
        return self._attribute(path, [binding.name, *rest], depth)

    def _attribute(self, path: str, names: list[str], depth: int) -> Definition | None:
        """`names` looked up in the module at `path`: a definition there, a re-export, or a submodule."""
        if not names or not self.followed(path):
            return None
        name, rest = names[0], names[1:]
        summary = self.summary(path)
        if name in summary.functions:
            return Definition(path, name, "function") if not rest else None
        if name in summary.classes:
            if not rest:
                return Definition(path, name, "class")
            if len(rest) == 1 and rest[0] in summary.classes[name]:
                return Definition(path, f"{name}.{rest[0]}", summary.classes[name][rest[0]])
            return None
        binding = summary.bindings.get(name)
        if binding is not None:
            return self._through(binding, path, rest, depth + 1)
        # A submodule of a package: `import pkg` then `pkg.model.helper` (Python needs it imported
        # somewhere first; a linter can only assume it was).
        if os.path.basename(path) == "__init__.py" or os.path.isdir(path):
            directory = path if os.path.isdir(path) else os.path.dirname(path)
            submodule = self._find_in(name, (directory,))
            if submodule is not None:
                return self._attribute(submodule, rest, depth + 1)
        return None
