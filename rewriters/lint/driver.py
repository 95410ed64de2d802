"""Linting one file: parse, pick the functions in scope, analyse, filter, attach fixes.

    result = lint_source(source, "model.py", LintConfig())
    for finding in result.findings:
        print(finding.line, finding.code, finding.message)

The analysis is the compiler's (`carve.rewriters.analysis`), so the linter
reports what `carve.compile` would make eager. Nothing is imported or run:
the file is only read. Any failure inside becomes `FileResult.error`, never
an exception out of `lint_source`.

With a `ProjectLayout` (what `carve lint PATH...` passes), calls to imported functions are
followed into the other files of the linted tree and into installed packages
(`carve.rewriters.lint.crossmodule`), and the functions of other linted files that this
one compiles or reaches come back in `FileResult.reached`; `carve.rewriters.lint.project`
lints those files again with them as `extra_targets`.
"""

from __future__ import annotations

import ast
import dataclasses
import tokenize
import io
import traceback
from dataclasses import dataclass, field

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, analyze_function
from carve.rewriters.callees import CalleeInfo, CalleeKind, applied_function
from carve.rewriters.findings import Finding, RuleFacts
from carve.rewriters.lint.config import LintConfig
from carve.rewriters.lint.fixes import Fix, source_lines, where_fixes
from carve.rewriters.checks.tensor_work import does_tensor_work
from carve.rewriters.lint.leading import LeadingBreaks
from carve.rewriters.lint.modules import ExternalTarget, ProjectLayout
from carve.rewriters.lint.noqa import read_noqa
from carve.rewriters.lint.positions import LintModuleContext
from carve.rewriters.lint.torch_version import traces
from carve.rewriters.lint.scope import COMPILE_FUNCTIONS, ModuleIndex, compiled_functions, is_module_class, is_opaque
from carve.rewriters.names import dotted_name
from carve.rewriters.rules import rule
from carve.rewriters.rules import crv000_syntax_error as syntax_error
from carve.rewriters.rules import crv004_tensor_to_python as tensor_to_python
from carve.rewriters.rules import crv005_data_dependent_branch as data_dependent_branch
from carve.rewriters.rules import crv018_compile_skips_function as compile_skips_function
from carve.rewriters.rules import crv010_generator as generator_rule
from carve.rewriters.rules import crv016_callee_graph_break as callee_graph_break
from carve.rewriters.rules import crv024_rnn_module as rnn_module
from carve.rewriters.rules import crv025_parameter_in_compiled_code as parameter_in_compiled_code
from carve.rewriters.rules import crv027_break_before_graph as break_before_graph
from carve.rewriters.tensor_functions import TensorFunctions
from carve.rewriters.tensors import TensorInference
from carve.rewriters.walk import walk


def _skipped_whole(breaks: tuple[Finding, ...] | list[Finding], calls_user_functions: bool | None) -> bool:
    """Dynamo gives up the function's whole frame (a break inside a loop, a try or a with block, an RNN
    module: `breaks`), and the function calls no user function, whose frame Dynamo would trace on its own."""
    return calls_user_functions is False and any(rule(f.code).skips_frame for f in breaks)


@dataclass(frozen=True)
class LintFinding(RuleFacts):
    """One reported problem; lines and columns are 1-based, as editors show them."""

    code: str
    message: str
    filename: str
    line: int
    column: int
    end_line: int
    end_column: int
    fix: Fix | None = None
    # `--fix` applies `fix`: it is safe, or unsafe fixes are enabled (`--unsafe-fixes`).
    fix_enabled: bool = False


@dataclass
class FileResult:
    filename: str
    findings: list[LintFinding] = field(default_factory=list)
    # An internal error (a carve bug): reported on stderr, exit code 2.
    error: str | None = None
    # With fixes requested: the original and the fixed text, when they differ.
    original: str | None = None
    fixed: str | None = None
    encoding: str = "utf-8"
    # Functions of other linted files that this file compiles or reaches from compiled code.
    reached: list[ExternalTarget] = field(default_factory=list)


def lint_file(
    filename: str, config: LintConfig, want_fixes: bool = False,
    project: ProjectLayout | None = None, extra_targets: tuple[ExternalTarget, ...] = (),
) -> FileResult:
    try:
        with open(filename, "rb") as handle:
            data = handle.read()
    except OSError as error:
        return FileResult(filename, error=f"cannot read: {error.strerror or error}")
    return lint_source(data, filename, config, want_fixes, project=project, extra_targets=extra_targets)


def lint_source(
    source: str | bytes, filename: str, config: LintConfig, want_fixes: bool = False, honour_noqa: bool = True,
    project: ProjectLayout | None = None, extra_targets: tuple[ExternalTarget, ...] = (),
) -> FileResult:
    """Lint one file's text; `honour_noqa=False` for hosts that apply noqa themselves (flake8).

    `project`: follow imports into the linted tree and installed packages; `extra_targets`:
    functions of this file compiled or reached from other files of the tree."""
    try:
        return _FileLinter(filename, config, want_fixes, honour_noqa, project, extra_targets).run(source)
    except RecursionError:
        return FileResult(filename, [_file_finding(filename, syntax_error.RULE.code, "the file nests too deeply to be analysed")])
    except Exception as error:  # a carve bug: report it, keep linting the other files
        frames = traceback.extract_tb(error.__traceback__)
        where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
        return FileResult(filename, error=f"internal error: {type(error).__name__}: {error}{where}")


def _file_finding(filename: str, code: str, message: str, line: int = 1, column: int = 1) -> LintFinding:
    return LintFinding(code, message, filename, line, column, line, column)


def decode_source(data: bytes) -> tuple[str, str]:
    """(text, encoding) honouring a PEP 263 coding line; UnicodeDecodeError / SyntaxError when impossible."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    text = data.decode(encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    return text, encoding


class _FileLinter:
    def __init__(
        self, filename: str, config: LintConfig, want_fixes: bool, honour_noqa: bool = True,
        project: ProjectLayout | None = None, extra_targets: tuple[ExternalTarget, ...] = (),
    ) -> None:
        self.honour_noqa = honour_noqa
        self.project = project
        self.extra_targets = tuple(extra_targets)
        self.reached: list[ExternalTarget] = []
        self.filename = filename
        self.config = config
        self.want_fixes = want_fixes
        self.enabled = config.enabled_codes(filename)

    def run(self, source: str | bytes) -> FileResult:
        result = FileResult(self.filename)
        if isinstance(source, bytes):
            try:
                text, result.encoding = decode_source(source)
            except (UnicodeDecodeError, SyntaxError, LookupError) as error:
                return self._unparsable(result, f"cannot decode the file: {error}")
        else:
            text = source
        if not self._may_have_targets(text):
            # Nothing to analyse; still report a file Python cannot parse (ast is fast).
            try:
                ast.parse(text, self.filename)
            except SyntaxError as error:
                return self._unparsable(result, f"syntax error: {error.msg}", error.lineno or 1, (error.offset or 1))
            except (ValueError, RecursionError, MemoryError) as error:
                return self._unparsable(result, f"cannot parse: {error}")
            return result
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError as error:
            try:  # Python's own message and line read better than the parser's
                ast.parse(text, self.filename)
            except SyntaxError as python_error:
                return self._unparsable(result, f"syntax error: {python_error.msg}", python_error.lineno or 1, python_error.offset or 1)
            except Exception:
                pass
            return self._unparsable(result, f"syntax error: {error.message}", error.raw_line or 1, error.raw_column + 1)
        except (RecursionError, MemoryError, ValueError, TypeError) as error:
            return self._unparsable(result, f"cannot parse: {error}")
        findings = self._analyse(module, text)
        result.reached = self.reached
        if findings and self.honour_noqa:
            noqa = read_noqa(text)
            findings = [f for f in findings if not noqa.silences(f.code, f.line)]
        result.findings = findings
        if self.want_fixes:
            fixes = [f.fix for f in findings if f.fix is not None and f.fix_enabled]
            if fixes:
                from carve.rewriters.lint.fixes import apply_fixes

                fixed = apply_fixes(text, fixes)
                if fixed != text:
                    result.original, result.fixed = text, fixed
        return result

    def _unparsable(self, result: FileResult, message: str, line: int = 1, column: int = 1) -> FileResult:
        if syntax_error.RULE.code in self.enabled:
            result.findings = [_file_finding(self.filename, syntax_error.RULE.code, message, line, column)]
        return result

    def _may_have_targets(self, text: str) -> bool:
        """A cheap test before parsing: no `compile` in the text means no compiled function."""
        if self.extra_targets or (self.project is not None and "compile" in text):
            return True  # its own targets, or things it compiles defined in other files
        if "def" not in text:
            return False  # no function at all (most __init__.py files)
        if "compile" in text:
            return True
        return self.config.all_functions and "torch" in text

    # -- analysis ----------------------------------------------------------------------------
    def _analyse(self, module: cst.Module, text: str) -> list[LintFinding]:
        context = LintModuleContext(module, self.filename, text)
        index = ModuleIndex.build(module)
        imports = context.imports
        self.context, self.index, self.text = context, index, text
        self._lines: list[str] | None = None
        self.reported: dict[tuple, LintFinding] = {}
        # id(FunctionDef) -> its analysis, for the leading-break walk of callees.
        self.analyses: dict[int, FunctionAnalysis] = {}
        # (id of the callee's definition, called through nn.Module.apply) -> _callee_is_leading's answer
        self._leading_callees: dict[tuple[int, bool], str | None] = {}
        self.cross = self._cross_module_resolver(context)
        imported_targets: list[tuple[str, str]] | None = [] if self.cross is not None else None
        analysed: set[int] = set()
        # Compiled functions first, then what they call, transitively (breadth first).
        queue: list[tuple[cst.FunctionDef, str | None]] = [
            (func, None) for func in compiled_functions(
                module, index, imports, "compile" in text,
                frozenset(self.cross.bindings) if self.cross is not None else frozenset(), imported_targets)
            if not is_opaque(func, imports)
        ]
        if imported_targets:
            self._compiled_elsewhere(imported_targets)
        reached_from: dict[int, list[str]] = {}
        # Functions of this file compiled in another file of the tree, or reached from one.
        self.compiled_in: dict[int, list[str]] = {}
        locally_compiled = {id(func) for func, _ in queue}
        for target in self.extra_targets:
            func = index.functions.get(target.qualname)
            if func is None or is_opaque(func, imports):
                continue
            if target.compiled:
                if id(func) not in locally_compiled:
                    if id(func) not in self.compiled_in:
                        queue.append((func, None))
                    self.compiled_in.setdefault(id(func), []).append(target.via)
            else:
                queue.append((func, target.via))
        while queue:
            func, caller = queue.pop(0)
            if caller is not None:
                callers = reached_from.setdefault(id(func), [])
                if caller not in callers:
                    callers.append(caller)
            if id(func) in analysed:
                continue
            analysed.add(id(func))
            compiled = caller is None
            analysis = self._lint_function(func, compiled, reached_from)
            root = self.index.qualnames.get(id(func), func.name.value) if caller is None else caller
            for callee in self._user_callees(func, analysis):
                if not is_opaque(callee, imports):
                    queue.append((callee, root))
            self._reached_elsewhere(analysis, root if ":" in root else f"{self.filename}:{root}")
        if self.config.all_functions:
            tensor_functions = TensorFunctions(module, imports)
            for func in index.functions.values():
                if id(func) not in analysed and not is_opaque(func, imports) and (
                        func in tensor_functions or self._module_method(func)):
                    analysed.add(id(func))
                    self._lint_function(func, False, reached_from, as_compiled=True)
        return sorted(self.reported.values(), key=lambda f: (f.line, f.column, f.code))

    def _lint_function(
        self, func: cst.FunctionDef, compiled: bool, reached_from: dict[int, list[str]], as_compiled: bool = False,
    ) -> FunctionAnalysis:
        """`compiled`: a compiled function (else reached from one); `as_compiled`: linted as if compiled
        (`--all`). Either way its own frame is what Dynamo compiles, so its breaks before any tensor
        operation split no graph (CRV027)."""
        resolver = _MethodResolver(self, func)
        fullgraph = (compiled or as_compiled) and _compiled_with_fullgraph(func, self.context.imports)
        with self.context.within(func):
            # Under fullgraph=True torch.compile traces `nonzero` (CRV021); without it, a break (CRV009).
            self.context.dynamic_output_sizes_traced = fullgraph
            try:
                analysis = analyze_function(func, self.context, resolver)
            finally:
                self.context.dynamic_output_sizes_traced = False
            self.analyses[id(func)] = analysis
            fixes: dict[int, Fix] = {}
            if self.want_fixes or data_dependent_branch.RULE.code in self.enabled:
                if any(f.code == data_dependent_branch.RULE.code for f in analysis.findings):
                    tensors = TensorInference(func, self.context.imports)
                    fixes = where_fixes(analysis, self.context, tensors, self._source_lines())
        qualname = self.index.qualnames.get(id(func), func.name.value)
        callers = reached_from.get(id(func), [])
        suffix = f" (in {qualname}(), called from compiled {', '.join(c + '()' for c in callers)})" if callers and not compiled else ""
        if compiled and id(func) in self.compiled_in:
            suffix = f" (in {qualname}(), compiled in {', '.join(self.compiled_in[id(func)])})"
        leading: set[int] = set()
        if (compiled or as_compiled) and not _compiled_with_fullgraph(func, self.context.imports):
            with self.context.within(func):
                leading = {id(f) for f in self._leading_breaks().of(func, analysis)}
        traced_generators = self._traced_generator_calls(analysis)
        inlined_generator = not (compiled or as_compiled) and traces("generator-call", self.config.torch_version)
        for finding in analysis.findings:
            if finding.code == callee_graph_break.RULE.code and finding.message in traced_generators:
                continue  # a generator (or @contextmanager) called from compiled code: traced since 2.7
            if inlined_generator and finding.code == generator_rule.RULE.code:
                continue  # ... and the generator it calls is inlined, not skipped
            if id(finding) in leading:
                for violation in break_before_graph.check_leading_break(finding):
                    self._report(Finding(violation.code, violation.message, finding.line, finding.column,
                                         finding.end_line, finding.end_column, finding.callee_stack), suffix, None)
                continue
            fix = fixes.get(finding.line) if finding.code == data_dependent_branch.RULE.code else None
            self._report(finding, suffix, fix)
        whole = analysis.whole_function
        if compiled and whole is not None:
            for violation in compile_skips_function.check_compiled_function(qualname, whole):
                with self.context.within(func):  # reported on the function's name
                    position = self.context.position_within(func.name, func)
                line = position.start.line if position else whole.line
                self._report(Finding(
                    violation.code, violation.message, line,
                    position.start.column if position else 0, line, position.end.column if position else 0,
                ), "", None)
        return analysis

    def _report(self, finding: Finding, suffix: str, fix: Fix | None) -> None:
        if finding.code not in self.enabled:
            return
        key = (finding.code, finding.line, finding.column)
        if key in self.reported:
            return
        end_line = finding.end_line or finding.line
        self.reported[key] = LintFinding(
            finding.code, finding.message + suffix, self.filename, finding.line, finding.column + 1,
            end_line, (finding.end_column + 1) if finding.end_line else finding.column + 1, fix,
            fix is not None and (fix.safe or self.config.unsafe_fixes),
        )

    # -- other modules ---------------------------------------------------------------------------
    def _cross_module_resolver(self, context: LintModuleContext):
        """Resolves calls to imported functions (None without a project, or in torch's own files)."""
        if self.project is None:
            return None
        from carve.rewriters.lint.crossmodule import CrossModuleState, ImportedCalls, file_key, follow_same_module_callees
        from carve.rewriters.lint.modules import ModuleGraph

        graph = ModuleGraph.for_layout(self.project)
        self.path = file_key(self.filename)
        if not graph.followed(self.path):
            return None
        state = CrossModuleState.for_graph(graph)
        local = {name for name in self.index.functions if "." not in name}
        resolver = ImportedCalls(state, self.path, local, None, context._ast_tree())
        follow_same_module_callees(context, resolver)
        return resolver

    def _compiled_elsewhere(self, imported_targets: list[tuple[str, str]]) -> None:
        """`torch.compile(GPT(cfg))` with GPT imported: GPT.forward, in the file defining it."""
        graph = self.cross.state.graph
        for dotted, what in imported_targets:
            definition = graph.definition(self.path, dotted)
            if definition is None or not graph.layout.in_tree(definition.path):
                continue
            qualname = None
            if what == "instance" and definition.kind in ("class", "classmethod"):
                class_name = definition.qualname.split(".")[0]
                if "forward" in graph.summary(definition.path).classes.get(class_name, {}):
                    qualname = f"{class_name}.forward"
            elif what == "function" and definition.kind == "function":
                qualname = definition.qualname
            if qualname is not None:
                self._reach(ExternalTarget(definition.path, qualname, True, self.filename))

    def _reached_elsewhere(self, analysis: FunctionAnalysis, via: str) -> None:
        """Functions of other linted files called from compiled code here: linted there too."""
        if self.cross is None:
            return
        layout = self.cross.state.graph.layout
        for info in analysis.user_calls.values():
            definition = info.extra.get("definition")
            if definition is not None and layout.in_tree(definition.path) and definition.path != self.path:
                self._reach(ExternalTarget(definition.path, definition.qualname, False, via))

    def _reach(self, target: ExternalTarget) -> None:
        if target not in self.reached:
            self.reached.append(target)

    def _user_callees(self, func: cst.FunctionDef, analysis: FunctionAnalysis):
        owner = self.index.owner_class.get(id(func))
        for info in analysis.user_calls.values():
            function_def = info.extra.get("function_def")
            if function_def is not None and info.filename == self.filename:
                yield function_def  # a method, or the forward of a submodule, resolved by _MethodResolver
            elif info.name.startswith("self.") and owner is not None:
                method = self.index.method(owner, info.name[len("self."):])
                if method is not None:
                    yield method
            elif (name := self.context.imports.local_name(info.name) or "") in self.index.functions and "." not in name:
                yield self.index.functions[name]  # `d2l.accuracy` where `d2l = sys.modules[__name__]`: accuracy

    def _callee_is_leading(self, info: CalleeInfo) -> str | None:
        """Whether every break of the user function `info` calls comes before any tensor work of it:
        "no-work" when it does no tensor work at all, or when Dynamo skips its frame whole (called
        directly, not through `nn.Module.apply`), "work" when it does some after; None when a break of
        it counts, or it cannot be read here (a cycle; of a function of another file only its findings
        are known, which tell whether its frame is skipped)."""
        func = self._callee_definition(info)
        if func is None:
            # a function of another file: only whether Dynamo skips it whole can be told from its findings
            calls_user_functions = info.extra.get("calls_user_functions")
            return "no-work" if not info.extra.get("applied") and _skipped_whole(info.breaks, calls_user_functions) else None
        key = (id(func), bool(info.extra.get("applied")))
        if key in self._leading_callees:
            return self._leading_callees[key]
        self._leading_callees[key] = None  # while it is being decided (recursion)
        analysis = self.analyses.get(id(func))
        with self.context.within(func):
            if analysis is None:
                analysis = analyze_function(func, self.context, _MethodResolver(self, func))
            leading = self._leading_breaks().of(func, analysis)
        answer = None
        if leading and {id(f) for f in leading} == {id(f) for f in analysis.breaks}:
            answer = "work" if does_tensor_work(func, self.context.imports, self._function_work) else "no-work"
        elif _skipped_whole(analysis.breaks, bool(analysis.user_calls)) and not info.extra.get("applied"):
            # Dynamo runs the callee's frame eagerly, tensor work and all: it makes no graph of its own
            # (piq's `_validate_input`, asserts in a loop), so calling it costs only the caller's split.
            answer = "no-work"
        self._leading_callees[key] = answer
        return answer

    def _traced_generator_calls(self, analysis: FunctionAnalysis) -> set[str]:
        """The CRV016 messages of calls whose callee breaks only by being a generator: `sum(gen(x))`,
        `with my_context():` for a `@contextlib.contextmanager`. Dynamo inlines those from torch 2.7 on
        (rewriters/lint/torch_version.py), so for such a torch they are no break."""
        if not traces("generator-call", self.config.torch_version):
            return set()
        found = set()
        for info in analysis.user_calls.values():
            if info.breaks and all(f.code == generator_rule.RULE.code for f in info.breaks):
                found |= {violation.message for violation in callee_graph_break.check_callee(info)}
        return found

    def _module_method(self, func: cst.FunctionDef) -> bool:
        """A method of an nn.Module subclass (not `__init__`): with --all it is linted as compiled, as
        its breaks may hide in the submodules it calls (an LSTM, a transformer given a mask)."""
        owner = self.index.owner_class.get(id(func))
        return (owner is not None and func.name.value != "__init__"
                and is_module_class(owner, self.index, self.context.imports))

    def _leading_breaks(self) -> LeadingBreaks:
        return LeadingBreaks(self.context.imports, self._callee_is_leading, self.context.position_within,
                             self.context.line_offset, self._function_work)

    def _function_work(self, name: str) -> bool | None:
        """Whether the top-level function `name` of this file does tensor work (None: not one)."""
        name = self.context.imports.local_name(name) or name
        func = self.index.functions.get(name)
        if func is None or "." in name:
            return None
        cache = self.__dict__.setdefault("_function_works", {})
        if name not in cache:
            cache[name] = True  # while it is being decided (recursion): assume it does
            cache[name] = does_tensor_work(func, self.context.imports, self._function_work)
        return cache[name]

    def _callee_definition(self, info: CalleeInfo) -> cst.FunctionDef | None:
        function_def = info.extra.get("function_def")  # a method or a submodule's forward, resolved here
        if function_def is not None:
            return function_def
        name = self.context.imports.local_name(info.name) or ""  # `d2l.accuracy`: `accuracy` of this module
        if name in self.index.functions and "." not in name:
            return self.index.functions[name]
        return None

    def attribute_classes(self, owner: cst.ClassDef) -> dict[str, set[str]]:
        """`self.<name>` -> what the methods of `owner` (and of its bases in this module) assign to it:
        the qualified name of a torch class (`torch.nn.LSTM`) or the name of a class of this module."""
        cache = self.__dict__.setdefault("_attribute_classes", {})
        if id(owner) not in cache:
            found: dict[str, set[str]] = {}
            for class_def in self._class_and_local_bases(owner):
                collector = _AttributeConstructors(self.context.imports, self.index)
                walk(class_def.body, collector)
                for name, classes in collector.found.items():
                    found.setdefault(name, set()).update(classes)
                for base in class_def.bases:  # what a torch base class's __init__ assigns
                    for name, module_class in TORCH_MODULE_ATTRIBUTES.get(self.context.imports.resolve(base.value) or "", {}).items():
                        found.setdefault(name, set()).add(module_class)
            cache[id(owner)] = found
        return cache[id(owner)]

    def builds_parameters(self, class_name: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether constructing the module class `class_name` of this file creates parameters: its
        `__init__` (or a base's of this file) builds a torch layer with weights, an nn.Parameter, or
        another such class of this file."""
        class_def = self.index.classes.get(class_name)
        if class_def is None or class_name in seen or not is_module_class(class_def, self.index, self.context.imports):
            return False
        cache = self.__dict__.setdefault("_builds_parameters", {})
        if class_name not in cache:
            cache[class_name] = False  # while it is being decided (recursion)
            built = set()
            for owner in self._class_and_local_bases(class_def):
                init = self.index.method(owner, "__init__")
                if init is not None:
                    calls = _ConstructorCalls(self.context.imports)
                    walk(init.body, calls)
                    built |= calls.found
            cache[class_name] = any(
                parameter_in_compiled_code.builds_parameters(name)
                or self.builds_parameters(name, seen | {class_name}) for name in built)
        return cache[class_name]

    def module_instances(self) -> dict[str, set[str]]:
        """Module-level names assigned a constructor call (`lstm = nn.LSTM(4, 8)`), as attribute_classes."""
        if "_module_instances" not in self.__dict__:
            collector = _AttributeConstructors(self.context.imports, self.index, module_level=True)
            for statement in self.context.module.body:
                if isinstance(statement, cst.SimpleStatementLine):
                    walk(statement, collector)
            self._module_instances = collector.found
        return self._module_instances

    def tensor_attributes(self, owner: cst.ClassDef) -> frozenset[str]:
        """The attributes of `self` that the methods of `owner` (and of its bases in this module) assign only
        tensors (or None): `self.continuous_idx = torch.ones(n, dtype=torch.bool)`, `nn.Parameter(...)`,
        `self.register_buffer("scale", torch.tensor(2.0))`."""
        cache = self.__dict__.setdefault("_tensor_attributes", {})
        if id(owner) not in cache:
            collector = _TensorAttributes(self.context.imports)
            for class_def in self._class_and_local_bases(owner):
                for statement in class_def.body.body:
                    if isinstance(statement, cst.FunctionDef):
                        collector.method(statement)
            cache[id(owner)] = frozenset(collector.tensors - collector.others)
        return cache[id(owner)]

    def bound_functions(self, owner: cst.ClassDef) -> dict[str, str]:
        """`self.<name>` -> the function the methods of `owner` (and of its bases in this module) bind to
        it with `functools.partial` or by name (`_BoundFunctions`)."""
        cache = self.__dict__.setdefault("_bound_functions", {})
        if id(owner) not in cache:
            found: dict[str, str] = {}
            for class_def in self._class_and_local_bases(owner):
                collector = _BoundFunctions(self.context.imports, self.index.functions)
                walk(class_def.body, collector)
                for name, function in collector.found.items():
                    found.setdefault(name, function)
            cache[id(owner)] = found
        return cache[id(owner)]

    def _class_and_local_bases(self, class_def: cst.ClassDef) -> list[cst.ClassDef]:
        found, pending = [], [class_def]
        while pending:
            current = pending.pop(0)
            if current in found:
                continue
            found.append(current)
            for base in current.bases:
                local = self.index.classes.get(dotted_name(base.value) or "")
                if local is not None:
                    pending.append(local)
        return found

    def _source_lines(self) -> list[str]:
        if self._lines is None:
            self._lines = source_lines(self.text)
        return self._lines


# nn.Module methods that return the module itself: `Block(c).to(x)` is still the Block just built.
_RETURNS_SELF = frozenset({"to", "cpu", "cuda", "eval", "train", "float", "double", "half", "bfloat16", "requires_grad_",
                           "type"})


def built_in_place(func: cst.BaseExpression) -> str | None:
    """The class a called expression builds in place: `Block` for `Block(c)(x)` or `Block(c).to(x)(x)`."""
    while (isinstance(func, cst.Call) and isinstance(func.func, cst.Attribute)
           and func.func.attr.value in _RETURNS_SELF):
        func = func.func.value
    if isinstance(func, cst.Call) and isinstance(func.func, cst.Name):
        return func.func.value
    return None


class _MethodResolver:
    """`self.helper(x)` inside a method: the class's own method, analysed like a same-module function;
    `self.lstm(x)` / `self.block(x)`: what the class's methods assign to that attribute (an RNN module,
    or a module class of this file whose `forward` is analysed); `lstm(x)` for a module-level
    `lstm = nn.LSTM(...)` likewise."""

    def __init__(self, linter: _FileLinter, func: cst.FunctionDef, analysing: set[int] | None = None) -> None:
        self.linter = linter
        self.owner = linter.index.owner_class.get(id(func))
        self.analysing: set[int] = set(analysing or ()) | {id(func)}
        self.func = func
        self._loop_variables: dict[str, set[str]] | None = None
        self._local_definitions: dict[str, cst.FunctionDef] | None = None

    @property
    def tensor_attributes(self) -> frozenset[str]:
        """The attributes of `self` that hold tensors (`_FileLinter.tensor_attributes`), for the analysis."""
        return self.linter.tensor_attributes(self.owner) if self.owner is not None else frozenset()

    def loop_variables(self) -> dict[str, set[str]]:
        """`for block in self.blocks:` -> block: the classes of the elements of self.blocks."""
        if self._loop_variables is None:
            self._loop_variables = {}
            if self.owner is not None:
                loops = _ContainerLoops()
                walk(self.func.body, loops)
                attributes = self.linter.attribute_classes(self.owner)
                for name, attribute in loops.found:
                    if attribute + "[]" in attributes:
                        self._loop_variables.setdefault(name, set()).update(attributes[attribute + "[]"])
        return self._loop_variables

    def returns_tensor(self, dotted: str) -> bool | None:
        cross = self.linter.cross
        return cross.returns_tensor(dotted) if cross is not None else None

    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        applied = applied_function(call)
        if applied is not None:
            # model.apply(fn): nn.Module.apply calls fn on each submodule, so fn's breaks are the call's.
            info = self._applied_callee(applied)
            return dataclasses.replace(info, extra={**info.extra, "applied": True}) if info is not None else None
        built = built_in_place(call.func)
        if dotted is None and built is not None and built in self.linter.index.classes:
            # SplitBands(rate, n).to(x)(x): the module built in the expression is called, its forward runs
            return self._instance_callee(call, built, {built})
        if dotted and "." not in dotted and self.linter.builds_parameters(dotted):
            # Block(c): a module class of this file whose __init__ builds layers (CRV025's)
            return CalleeInfo(CalleeKind.TRACEABLE, dotted, extra={"builds_parameters": dotted})
        if dotted and "." not in dotted and (constructor := self._constructor_callee(dotted)) is not None:
            # Block(c): Dynamo runs the class's __init__ inline, so its breaks are the call's
            return constructor
        if dotted and "." not in dotted and dotted in self.linter.module_instances() and dotted not in self.linter.index.functions:
            return self._instance_callee(call, dotted, self.linter.module_instances()[dotted])
        if dotted and "." not in dotted and dotted in self.loop_variables():
            return self._instance_callee(call, dotted, self.loop_variables()[dotted])
        if self.owner is not None and dotted and dotted.startswith("self.") and dotted.count(".") == 2:
            # self.transformer.encoder(x, mask): an attribute of a torch module held in an attribute
            head, attribute = dotted[len("self."):].split(".")
            classes = {TORCH_MODULE_ATTRIBUTES[c][attribute] for c in self.linter.attribute_classes(self.owner).get(head, ())
                       if attribute in TORCH_MODULE_ATTRIBUTES.get(c, {})}
            return self._instance_callee(call, dotted, classes) if classes else None
        if self.owner is None or not dotted or not dotted.startswith("self.") or dotted.count(".") != 1:
            cross = self.linter.cross
            return cross.resolve(call, dotted, qualified) if cross is not None else None
        # the class's own method, or one it inherits from a base class of this file
        method = next((found for owner in self.linter._class_and_local_bases(self.owner)
                       if (found := self.linter.index.method(owner, dotted[len("self."):])) is not None), None)
        if method is None and (bound := self.linter.bound_functions(self.owner).get(dotted[len("self."):])):
            # self.score(x, y) for `self.score = functools.partial(dss, ...)`: a call of dss
            as_called = call.with_changes(func=cst.parse_expression(bound))
            qualified_bound = self.linter.context.imports.resolve(as_called.func)
            return self.resolve(as_called, bound, qualified_bound) or self.linter.context.static_resolver.resolve(
                as_called, bound, qualified_bound)
        if method is None:
            attributes = self.linter.attribute_classes(self.owner)
            classes = set(attributes.get(dotted[len("self."):], ()))
            if classes & CONTAINER_MODULES:  # a Sequential calls each of its elements
                classes |= attributes.get(dotted[len("self."):] + "[]", set())
            return self._instance_callee(call, dotted, classes) if classes else None
        cache = self.linter.__dict__.setdefault("_method_infos", {})
        if id(method) in cache:
            return cache[id(method)]
        imports = self.linter.context.imports
        if is_opaque(method, imports):
            from carve.rewriters.callees import DISABLE_DECORATORS, decorator_name

            disabled = {decorator_name(d, imports) for d in method.decorators} & DISABLE_DECORATORS
            info = CalleeInfo(CalleeKind.DISABLED if disabled else CalleeKind.TRACEABLE, dotted)
        elif id(method) in self.analysing:
            return CalleeInfo(CalleeKind.USER_FUNCTION, dotted)
        else:
            self.analysing.add(id(method))
            try:
                with self.linter.context.within(method):
                    findings = analyze_function(method, self.linter.context, self).findings
            finally:
                self.analysing.discard(id(method))
            info = CalleeInfo(CalleeKind.USER_FUNCTION, dotted, tuple(findings), self.linter.filename,
                              extra={"function_def": method})
        cache[id(method)] = info
        return info

    def _constructor_callee(self, class_name: str) -> CalleeInfo | None:
        """`Block(c)` for a class of this file whose `__init__` (its own, or a base's of this file) has a
        graph break: Dynamo builds the object inside the compiled frame, running `__init__` inline (an
        `.item()` there is a break of the caller). None when `__init__` breaks nowhere, so the call is
        read as before (CRV025's parameters, a module's instance)."""
        class_def = self.linter.index.classes.get(class_name)
        if class_def is None:
            return None
        init = next((found for owner in self.linter._class_and_local_bases(class_def)
                     if (found := self.linter.index.method(owner, "__init__")) is not None), None)
        if init is None or is_opaque(init, self.linter.context.imports):
            return None
        cache = self.linter.__dict__.setdefault("_constructor_infos", {})
        if id(init) not in cache:
            if id(init) in self.analysing:
                return None
            self.analysing.add(id(init))
            try:
                with self.linter.context.within(init):
                    breaks = tuple(analyze_function(init, self.linter.context,
                                                    _MethodResolver(self.linter, init, self.analysing)).breaks)
            finally:
                self.analysing.discard(id(init))
            cache[id(init)] = CalleeInfo(CalleeKind.USER_FUNCTION, class_name, breaks, self.linter.filename,
                                         extra={"function_def": init}) if breaks else None
        return cache[id(init)]

    def _applied_callee(self, function: cst.BaseExpression) -> CalleeInfo | None:
        """What `model.apply(function)` calls: a function defined in the analysed one (`def to_fp16(l): ...`
        then `model.apply(to_fp16)`), a method (`self.apply(self._init_weights)`), or a function of this
        file or of the linted tree, each analysed like a direct call of it."""
        name = dotted_name(function)
        if name is None:
            return None
        if self._local_definitions is None:
            definitions = _LocalDefinitions()
            walk(self.func.body, definitions)
            self._local_definitions = definitions.found
        local = self._local_definitions.get(name)
        if local is None:
            called = cst.Call(func=function)
            qualified = self.linter.context.imports.resolve(function)
            for resolver in (self, self.linter.context.static_resolver):
                info = resolver.resolve(called, name, qualified)
                if info is not None:
                    return info
            return None
        cache = self.linter.__dict__.setdefault("_method_infos", {})
        if id(local) in cache:
            return cache[id(local)]
        if id(local) in self.analysing:
            return CalleeInfo(CalleeKind.USER_FUNCTION, name)
        self.analysing.add(id(local))
        try:
            with self.linter.context.within(local):
                findings = analyze_function(local, self.linter.context, self).findings
        finally:
            self.analysing.discard(id(local))
        info = CalleeInfo(CalleeKind.USER_FUNCTION, name, tuple(findings), self.linter.filename,
                          extra={"function_def": local})
        cache[id(local)] = info
        return info

    def _instance_callee(self, call: cst.Call, dotted: str, classes: set[str]) -> CalleeInfo | None:
        """A call of an object built from one of `classes`: an RNN module (CRV024's), a transformer given
        a mask (CRV004's), or a module class of this file, whose `forward` is analysed like a method
        (its breaks are CRV016 at the call)."""
        for module_class in sorted(classes):
            if module_class in rnn_module.RNN_MODULES:
                return CalleeInfo(CalleeKind.TRACEABLE, dotted, extra={"module_class": module_class})
            if tensor_to_python.reads_attention_mask(module_class, call):
                return CalleeInfo(CalleeKind.TRACEABLE, dotted, extra={"module_class": module_class,
                                                                       "reads_attention_mask": True})
        index = self.linter.index
        found: CalleeInfo | None = None
        for class_name in sorted(classes):
            class_def = index.classes.get(class_name)
            if class_def is None or not is_module_class(class_def, index, self.linter.context.imports):
                continue
            forward = next((index.method(c, "forward") for c in self.linter._class_and_local_bases(class_def)
                            if index.method(c, "forward") is not None), None)
            if forward is None or is_opaque(forward, self.linter.context.imports):
                continue
            info = self._forward_callee(dotted, forward)
            if info.breaks:
                return info
            found = found or info
        return found

    def _forward_callee(self, dotted: str, forward: cst.FunctionDef) -> CalleeInfo:
        cache = self.linter.__dict__.setdefault("_forward_infos", {})
        if (dotted, id(forward)) in cache:
            return cache[(dotted, id(forward))]
        if id(forward) in self.analysing:
            return CalleeInfo(CalleeKind.USER_FUNCTION, dotted)
        self.analysing.add(id(forward))
        try:
            with self.linter.context.within(forward):
                findings = analyze_function(forward, self.linter.context, _MethodResolver(self.linter, forward, self.analysing)).findings
        finally:
            self.analysing.discard(id(forward))
        info = CalleeInfo(CalleeKind.USER_FUNCTION, dotted, tuple(findings), self.linter.filename,
                          extra={"function_def": forward})
        cache[(dotted, id(forward))] = info
        return info


class _ConstructorCalls(cst.CSTVisitor):
    """The names called in an `__init__`, qualified when imported (`torch.nn.Linear`, `Block`)."""

    def __init__(self, imports) -> None:
        self.imports = imports
        self.found: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        name = self.imports.resolve(node.func) or dotted_name(node.func)
        if name:
            self.found.add(name)


class _LocalDefinitions(cst.CSTVisitor):
    """The functions defined in a function's own body (not in nested classes or functions): name -> def."""

    def __init__(self) -> None:
        self.found: dict[str, cst.FunctionDef] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.found[node.name.value] = node
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class _ContainerLoops(cst.CSTVisitor):
    """(loop variable, attribute) of `for block in self.blocks:` loops."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def visit_For(self, node: cst.For) -> None:
        iterated = dotted_name(node.iter) or ""
        if isinstance(node.target, cst.Name) and iterated.startswith("self.") and iterated.count(".") == 1:
            self.found.append((node.target.value, iterated[len("self."):]))


# The submodules torch's own modules build in __init__, where a user's code calls them.
TORCH_MODULE_ATTRIBUTES = {
    "torch.nn.Transformer": {"encoder": "torch.nn.TransformerEncoder", "decoder": "torch.nn.TransformerDecoder"},
}


class _TensorAttributes:
    """What a class's methods assign to attributes of `self`: the names given a tensor (`tensors`) and those
    given something else but None (`others`), each value read with its own method's TensorInference."""

    PARAMETER = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

    def __init__(self, imports) -> None:
        self.imports = imports
        self.tensors: set[str] = set()
        self.others: set[str] = set()

    def method(self, func: cst.FunctionDef) -> None:
        assignments = _SelfAssignments()
        walk(func.body, assignments)
        if not assignments.found:
            return  # most methods assign no attribute: no inference to build
        inference = TensorInference(func, self.imports)
        for name, value in assignments.found:
            if isinstance(value, cst.Name) and value.value == "None":
                continue
            if isinstance(value, cst.Call) and (dotted_name(value.func) or "").startswith("self."):
                # `self.in_channels = self._get_in_channels(input)`: a method's result, whose type the
                # inference's guess for submodule calls (a tensor) does not tell
                continue
            tensor = inference.is_tensor(value) or (
                isinstance(value, cst.Call) and (self.imports.resolve(value.func) or "") in self.PARAMETER)
            (self.tensors if tensor else self.others).add(name)


class _SelfAssignments(cst.CSTVisitor):
    """(name, value) of `self.name = value` and `self.register_buffer("name", value)`."""

    def __init__(self) -> None:
        self.found: list[tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and isinstance(target.target.value, cst.Name) \
                    and target.target.value.value == "self":
                self.found.append((target.target.attr.value, node.value))

    def visit_Call(self, node: cst.Call) -> None:
        if dotted_name(node.func) == "self.register_buffer" and len(node.args) >= 2 \
                and isinstance(node.args[0].value, cst.SimpleString):
            self.found.append((str(node.args[0].value.evaluated_value), node.args[1].value))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False  # a nested function's `self` is not the method's


class _BoundFunctions(cst.CSTVisitor):
    """`self.score = functools.partial(dss, reduction=reduction)` (or `self.score = dss`) in a method:
    "score" -> "dss", so that `self.score(x, y)` calls `dss` (Dynamo inlines a partial's function)."""

    def __init__(self, imports, functions) -> None:
        self.imports = imports
        self.functions = functions
        self.found: dict[str, str] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        if isinstance(value, cst.Call) and self.imports.resolve(value.func) == "functools.partial" and value.args \
                and value.args[0].keyword is None:
            function = dotted_name(value.args[0].value)
        else:
            function = dotted_name(value) if isinstance(value, cst.Name) and value.value in self.functions else None
        if function is None:
            return
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and isinstance(target.target.value, cst.Name) \
                    and target.target.value.value == "self":
                self.found[target.target.attr.value] = function


class _AttributeConstructors(cst.CSTVisitor):
    """`self.lstm = nn.LSTM(...)` (or, at module level, `lstm = nn.LSTM(...)`): name -> the class built,
    qualified when imported (`torch.nn.LSTM`), else a class of the module by its name."""

    def __init__(self, imports, index: ModuleIndex, module_level: bool = False) -> None:
        self.imports = imports
        self.index = index
        self.module_level = module_level
        self.found: dict[str, set[str]] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._record(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._record(node.target, node.value)

    def _record(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if isinstance(value, cst.Call) and (self.imports.resolve(value.func) or "") in COMPILE_FUNCTIONS and value.args:
            value = value.args[0].value  # `self.net = torch.compile(Net())`
        if not isinstance(value, cst.Call):
            return
        if self.module_level:
            name = target.value if isinstance(target, cst.Name) else None
        else:
            name = target.attr.value if (isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name)
                                         and target.value.value == "self") else None
        if name is None:
            return
        classes = self._classes(value)
        if classes:
            self.found.setdefault(name, set()).update(classes)
        if (self.imports.resolve(value.func) or "") in CONTAINER_MODULES:
            # nn.ModuleList([Block(c) for _ in range(n)]), nn.Sequential(nn.Linear(...), Block(...)):
            # the classes of the elements, under "name[]" (called in a loop, or in turn by the Sequential)
            elements = [element for arg in value.args for element in _element_calls(arg.value)]
            for element in elements:
                self.found.setdefault(name + "[]", set()).update(self._classes(element))

    def _classes(self, value: cst.Call) -> set[str]:
        constructor = dotted_name(value.func) or ""
        qualified = self.imports.resolve(value.func) or ""
        if constructor in self.index.classes:
            return {constructor}
        if qualified.startswith("torch."):
            return {qualified}
        return set()


CONTAINER_MODULES = frozenset({"torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.modules.container.ModuleList",
                               "torch.nn.modules.container.Sequential"})


def _element_calls(node: cst.BaseExpression) -> list[cst.Call]:
    """The constructor calls a container is built from: `Block(c)`, `[Block(c) for _ in ...]`, `[A(), B()]`."""
    if isinstance(node, cst.Call):
        return [node]
    if isinstance(node, (cst.ListComp, cst.GeneratorExp)):
        return _element_calls(node.elt)
    if isinstance(node, (cst.List, cst.Tuple)):
        return [call for element in node.elements for call in _element_calls(element.value)]
    return []


def _compiled_with_fullgraph(func: cst.FunctionDef, imports) -> bool:
    """`@torch.compile(fullgraph=True)`: every break is an error there, even before the first tensor operation."""
    for decorator in func.decorators:
        expression = decorator.decorator
        if isinstance(expression, cst.Call) and (imports.resolve(expression.func) or "") in COMPILE_FUNCTIONS:
            for arg in expression.args:
                if arg.keyword is not None and arg.keyword.value == "fullgraph" and isinstance(arg.value, cst.Name):
                    return arg.value.value == "True"
    return False
