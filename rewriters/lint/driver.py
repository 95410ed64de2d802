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
import tokenize
import io
import traceback
from dataclasses import dataclass, field

import libcst as cst

from carve.rewriters.analysis import FunctionAnalysis, analyze_function
from carve.rewriters.callees import CalleeInfo, CalleeKind
from carve.rewriters.findings import Finding, RuleFacts
from carve.rewriters.lint.config import LintConfig
from carve.rewriters.lint.fixes import Fix, source_lines, where_fixes
from carve.rewriters.lint.modules import ExternalTarget, ProjectLayout
from carve.rewriters.lint.noqa import read_noqa
from carve.rewriters.lint.positions import LintModuleContext
from carve.rewriters.lint.scope import ModuleIndex, compiled_functions, is_opaque
from carve.rewriters.rules import crv000_syntax_error as syntax_error
from carve.rewriters.rules import crv005_data_dependent_branch as data_dependent_branch
from carve.rewriters.rules import crv018_compile_skips_function as compile_skips_function
from carve.rewriters.tensor_functions import TensorFunctions
from carve.rewriters.tensors import TensorInference


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
                if id(func) not in analysed and not is_opaque(func, imports) and func in tensor_functions:
                    analysed.add(id(func))
                    self._lint_function(func, False, reached_from)
        return sorted(self.reported.values(), key=lambda f: (f.line, f.column, f.code))

    def _lint_function(self, func: cst.FunctionDef, compiled: bool, reached_from: dict[int, list[str]]) -> FunctionAnalysis:
        resolver = _MethodResolver(self, func)
        with self.context.within(func):
            analysis = analyze_function(func, self.context, resolver)
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
        for finding in analysis.findings:
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
            if info.name.startswith("self.") and owner is not None:
                method = self.index.method(owner, info.name[len("self."):])
                if method is not None:
                    yield method
            elif info.name in self.index.functions and "." not in info.name:
                yield self.index.functions[info.name]

    def _source_lines(self) -> list[str]:
        if self._lines is None:
            self._lines = source_lines(self.text)
        return self._lines


class _MethodResolver:
    """`self.helper(x)` inside a method: the class's own method, analysed like a same-module function."""

    def __init__(self, linter: _FileLinter, func: cst.FunctionDef) -> None:
        self.linter = linter
        self.owner = linter.index.owner_class.get(id(func))
        self.analysing: set[int] = {id(func)}

    def returns_tensor(self, dotted: str) -> bool | None:
        cross = self.linter.cross
        return cross.returns_tensor(dotted) if cross is not None else None

    def resolve(self, call: cst.Call, dotted: str | None, qualified: str | None) -> CalleeInfo | None:
        if self.owner is None or not dotted or not dotted.startswith("self.") or dotted.count(".") != 1:
            cross = self.linter.cross
            return cross.resolve(call, dotted, qualified) if cross is not None else None
        method = self.linter.index.method(self.owner, dotted[len("self."):])
        if method is None:
            return None
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
            info = CalleeInfo(CalleeKind.USER_FUNCTION, dotted, tuple(findings), self.linter.filename)
        cache[id(method)] = info
        return info
