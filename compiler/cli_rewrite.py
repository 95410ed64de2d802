"""`carve rewrite`: write out what `@carve.compile` does, as readable, runnable Python.

    $ carve rewrite model.py                   # one file: the rewritten module on stdout
    $ carve rewrite src/ -o build/carved       # a tree: mirrored under build/carved
    $ carve rewrite src/ --diff                # a unified diff; exit 1 when something changes
    $ carve rewrite src/ --check               # CI: list files that would change; exit 1 if any
    $ carve rewrite src/ --in-place            # overwrite the inputs (atomically)

Output modes (exactly one; `--stdout` is the default for a single file, and a
directory or several paths need an explicit mode, as formatters do, so a
stray command never floods the terminal or touches files):

    --stdout      the complete rewritten module (one input file only)
    -o OUTDIR     every input .py file written under OUTDIR, mirroring the tree
                  below the inputs' common directory; unchanged files are copied
                  too, so the output tree imports as a whole. Never overwrites an input.
    --in-place    rewrite the inputs themselves (only the files that change)
    --diff        a unified diff per changed file
    --check       `would rewrite: PATH` per changed file

Exit status: 0 success (nothing would change, for --diff/--check); 1 --diff or
--check found files that would change; 2 usage or input errors (a missing
path, no Python files, a syntax error, undecodable bytes, a function carve
cannot rewrite), reported as `path:line: error: message` on stderr while the
other files are still processed. A summary line ends every run on stderr:
`carve rewrite: 3 files rewritten, 1 unchanged, 1 error`.

Files are read as bytes and never imported or executed; torch is never
imported. Output files are written to a temporary file in the target
directory and renamed into place, so a failure never leaves a partial file.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import tempfile
import tokenize
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

from carve.files import InputError, process_files, python_files

EXIT_OK = 0
EXIT_CHANGES = 1
EXIT_ERROR = 2

MODES = ("stdout", "output_dir", "in_place", "diff", "check")


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "rewrite",
        help="write the carve-compiled form of Python files as readable source",
        description=(
            "Rewrite functions decorated with carve.compile / torch.compile, or compiled by a call of them in any "
            "file of the tree (`train = carve.compile(train)`, `model = torch.compile(model)`: its class's forward), "
            "or, with --all-functions, every function that does tensor work, into the outlined form @carve.compile "
            "runs: compiled graph regions plus plain-Python eager statements. The compile calls of rewritten functions "
            "are replaced by what they compile; everything else in the file is kept byte for byte."
        ),
        epilog=(
            "Exactly one output mode; --stdout is the default for a single file. "
            "Exit status: 0 ok, 1 --diff/--check found changes, 2 usage or input errors."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files or directories (recursed)")
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("-o", "--output-dir", metavar="OUTDIR", help="write every file under OUTDIR, mirroring the input tree")
    modes.add_argument("--stdout", action="store_true", help="print the rewritten module (a single input file only)")
    modes.add_argument("--diff", action="store_true", help="print a unified diff; exit 1 if anything would change")
    modes.add_argument("--check", action="store_true", help="list files that would change; exit 1 if any")
    modes.add_argument("--in-place", action="store_true", help="overwrite the input files")
    parser.add_argument(
        "--select", action="append", metavar="FUNCTIONS",
        help="only these functions (comma-separated names or qualified names such as Model.forward); repeatable",
    )
    parser.add_argument(
        "--all-functions", action="store_true",
        help="rewrite every function that does tensor work (names torch, or computes on tensors), not only the compile-decorated ones",
    )
    parser.add_argument(
        "--exclude", action="append", default=[], metavar="PATTERN",
        help="skip paths matching this gitignore-style pattern (repeatable); .gitignore files are honoured too",
    )
    parser.add_argument("--no-gitignore", action="store_true", help="do not read .gitignore files")
    parser.add_argument("-j", "--jobs", type=int, default=None, metavar="N", help="worker processes (default: all cores)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no summary line and no progress bar")
    parser.set_defaults(handler=run)


# -- one file (runs in worker processes) ------------------------------------------------------

@dataclass(frozen=True)
class FileTask:
    path: str
    all_functions: bool
    select: frozenset[str] | None
    # Functions of this file another file of the tree compiles by a call, with that call's options.
    compiled_elsewhere: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    # Names this file imports whose compile calls here compile a function of another file of the tree.
    compiled_here: frozenset[str] = frozenset()


@dataclass
class FileOutcome:
    path: str
    original: bytes = b""
    rewritten: bytes = b""
    functions: list[str] = field(default_factory=list)
    error: str | None = None
    error_line: int = 0

    @property
    def changed(self) -> bool:
        return self.error is None and self.rewritten != self.original


def rewrite_file(task: FileTask) -> FileOutcome:
    """Read, decode, rewrite and re-encode one file; every failure becomes an error outcome."""
    from carve.rewriters.rewrite import RewriteError, rewrite_source

    outcome = FileOutcome(task.path)
    try:
        outcome.original = Path(task.path).read_bytes()
    except OSError as error:
        outcome.error = f"cannot read: {error.strerror or error}"
        return outcome
    try:
        text, encoding = decode_source(outcome.original)
    except SourceDecodeError as error:
        outcome.error, outcome.error_line = error.message, error.line
        return outcome
    try:
        result = rewrite_source(text, task.path, all_functions=task.all_functions, select=task.select,
                                compiled_elsewhere=dict(task.compiled_elsewhere), compiled_here=task.compiled_here)
    except RewriteError as error:
        outcome.error, outcome.error_line = error.message, error.line
        return outcome
    except RecursionError:
        outcome.error = "the file is nested too deeply for carve to parse"
        return outcome
    except Exception as error:  # a bug in carve: report it against this file and keep going
        outcome.error = f"internal error in carve ({type(error).__name__}: {error}); please report it"
        return outcome
    outcome.functions = [f.qualname for f in result.functions]
    outcome.rewritten = result.text.encode(encoding) if result.changed else outcome.original
    return outcome


class SourceDecodeError(Exception):
    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def decode_source(data: bytes) -> tuple[str, str]:
    """Decode as Python does (BOM, PEP 263 coding cookie, else UTF-8), keeping newlines as they are."""
    try:
        encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    except SyntaxError as error:
        raise SourceDecodeError(f"cannot decode: {error.msg}", error.lineno or 1) from None
    try:
        return data.decode(encoding), encoding
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SourceDecodeError(
            f"cannot decode: byte 0x{data[error.start]:02x} is not valid {encoding} "
            f"(declare the encoding with a '# -*- coding: ... -*-' line)",
            line,
        ) from None


# -- the command --------------------------------------------------------------------------

class UsageError(Exception):
    pass


def run(args: argparse.Namespace) -> int:
    errors: list[str] = []
    try:
        mode = _mode(args)
        select = _parse_select(args.select)
        if args.jobs is not None and args.jobs < 1:
            raise UsageError("--jobs must be at least 1")
    except UsageError as error:
        print(f"carve rewrite: error: {error}", file=sys.stderr)
        return EXIT_ERROR

    if mode == "stdout" and (len(args.paths) != 1 or Path(args.paths[0]).is_dir()):
        print(
            "carve rewrite: error: several files or a directory need an output mode: "
            "-o OUTDIR, --in-place, --diff or --check (--stdout takes a single file)",
            file=sys.stderr,
        )
        return EXIT_ERROR
    files = _collect_files(args, errors)
    if mode == "output_dir":
        output_root = Path(args.output_dir).resolve()
        inputs = [Path(p).resolve() for p in args.paths]
        # Output paths are OUTDIR / (input relative to the common base): the same files iff OUTDIR is that base.
        if output_root == _common_base(args.paths):
            print("carve rewrite: error: OUTDIR is the input directory; use --in-place to overwrite inputs", file=sys.stderr)
            return EXIT_ERROR
        # A rerun must not pick up its own earlier output when OUTDIR lies inside an input tree.
        if not any(output_root == p or output_root in p.parents for p in inputs):
            files = [f for f in files if output_root not in f.resolve().parents]

    plan = compile_calls_across_files(files, args.paths, errors)
    tasks = [FileTask(str(path), args.all_functions, select, *plan.get(os.path.realpath(path), ((), frozenset())))
             for path in files]
    outcomes = process_files(
        tasks, rewrite_file, jobs=args.jobs, label="carve rewrite", progress=False if args.quiet else None
    )

    base = _common_base(args.paths) if mode == "output_dir" else None
    counts = {"changed": 0, "unchanged": 0}
    for outcome in outcomes:
        if outcome.error is not None:
            errors.append(_located(outcome.path, outcome.error_line, outcome.error))
            continue
        try:
            _emit(outcome, mode, args, base)
        except OSError as error:
            errors.append(_located(outcome.path, 0, f"cannot write output: {error.strerror or error}"))
            continue
        counts["changed" if outcome.changed else "unchanged"] += 1

    for message in errors:
        print(message, file=sys.stderr)
    if select:
        matched = {
            name for o in outcomes for q in o.functions
            for name in (q, q.replace(".<locals>", ""), q.rsplit(".", 1)[-1])
        }
        for name in sorted(select - matched):
            print(f"carve rewrite: warning: --select {name}: no such compiled function was rewritten", file=sys.stderr)
    if not args.quiet:
        print(_summary(mode, counts, len(errors)), file=sys.stderr)
    if errors:
        return EXIT_ERROR
    if mode in ("diff", "check") and counts["changed"]:
        return EXIT_CHANGES
    return EXIT_OK


def compile_calls_across_files(files: list[Path], paths: list[str], errors: list[str]):
    """realpath -> (compiled_elsewhere, compiled_here) for the files of the tree that compile, by a call,
    something another file of the tree defines (`model = torch.compile(GPT(cfg))` in train.py with
    `from model import GPT`: GPT.forward is rewritten in model.py, the call unwrapped in train.py). The
    imports are resolved by path as `carve lint` resolves them (rewriters/lint/modules.py); nothing runs."""
    import libcst as cst

    from carve.rewriters.lint.modules import ModuleGraph, ProjectLayout
    from carve.rewriters.names import ImportTable
    from carve.rewriters.rewrite import CompileCalls

    real = {os.path.realpath(path): path for path in files}
    graph = None
    elsewhere: dict[str, dict[str, tuple]] = {}
    here: dict[str, set[str]] = {}
    for path in files:
        try:
            data = path.read_bytes()
            if b"compile" not in data:
                continue
            module = cst.parse_module(decode_source(data)[0])
        except Exception:  # unreadable or unparsable: rewrite_file reports it
            continue
        sites = [site for site in CompileCalls.find(module, ImportTable.from_module(module)).sites if site.imported]
        if not sites:
            continue
        if graph is None:
            graph = ModuleGraph.for_layout(ProjectLayout.build(paths, [str(f) for f in files]))
        importer = os.path.realpath(path)
        for site in sites:
            assert site.imported is not None  # the sites kept above
            definition = graph.definition(importer, site.imported)
            if definition is None or definition.path not in real:
                continue
            qualname = None
            if site.what == "instance" and definition.kind in ("class", "classmethod"):
                class_name = definition.qualname.split(".")[0]
                if "forward" in graph.summary(definition.path).classes.get(class_name, {}):
                    qualname = f"{class_name}.forward"
            elif site.what == "function" and definition.kind == "function":
                qualname = definition.qualname
            if qualname is None:
                continue
            if site.options is None:
                errors.append(_located(str(path), site.line, f"cannot rewrite {qualname}() of {real[definition.path]}: the "
                                       "compile call passes an option that is not a literal; pass literal options"))
                continue
            elsewhere.setdefault(definition.path, {}).setdefault(qualname, site.options)
            here.setdefault(importer, set()).add(site.imported)
    return {path: (tuple(sorted(elsewhere.get(path, {}).items())), frozenset(here.get(path, ())))
            for path in set(elsewhere) | set(here)}


def _mode(args: argparse.Namespace) -> str:
    for mode in MODES:
        if getattr(args, mode):
            return mode
    return "stdout"


def _parse_select(values: list[str] | None) -> frozenset[str] | None:
    if not values:
        return None
    names = frozenset(name.strip() for value in values for name in value.split(",") if name.strip())
    if not names:
        raise UsageError("--select needs at least one function name")
    return names


def _collect_files(args: argparse.Namespace, errors: list[str]) -> list[Path]:
    """Every .py file under the given paths, once each; a bad path is an error, not the end."""
    files: list[Path] = []
    seen: set[Path] = set()
    for given in args.paths:
        try:
            found = list(python_files([given], exclude=args.exclude, use_gitignore=not args.no_gitignore))
        except InputError as error:
            errors.append(f"{error}".replace(": ", ": error: ", 1))
            continue
        if not found:
            errors.append(f"{given}: error: no Python files found (after excludes)")
        for path in found:
            if path.resolve() not in seen:
                seen.add(path.resolve())
                files.append(path)
    return files


def _common_base(paths: list[str]) -> Path:
    """The directory the -o tree mirrors: the deepest directory holding every input."""
    roots = []
    for given in paths:
        path = Path(given).resolve()
        roots.append(str(path if path.is_dir() else path.parent))
    return Path(os.path.commonpath(roots)) if roots else Path.cwd()


def _emit(outcome: FileOutcome, mode: str, args: argparse.Namespace, base: Path | None) -> None:
    if mode == "stdout":
        sys.stdout.flush()
        sys.stdout.buffer.write(outcome.rewritten)
        sys.stdout.buffer.flush()
    elif mode == "check":
        if outcome.changed:
            print(f"would rewrite: {outcome.path}")
    elif mode == "diff":
        if outcome.changed:
            sys.stdout.write(_unified_diff(outcome))
    elif mode == "in_place":
        if outcome.changed:
            write_atomically(Path(outcome.path), outcome.rewritten)
    else:
        assert base is not None  # set in output_dir mode
        source = Path(outcome.path).resolve()
        target = Path(args.output_dir).resolve() / source.relative_to(base)
        if target == source:
            raise OSError(0, f"{target} is the input itself (use --in-place to overwrite inputs)")
        write_atomically(target, outcome.rewritten)


def _unified_diff(outcome: FileOutcome) -> str:
    before = outcome.original.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
    after = outcome.rewritten.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(before, after, fromfile=outcome.path, tofile=outcome.path)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def write_atomically(target: Path, data: bytes) -> None:
    """Temp file in the target's directory, then rename: readers see the old file or the new one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".carve-tmp")
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        if target.exists():
            os.chmod(temporary, target.stat().st_mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _located(path: str, line: int, message: str) -> str:
    return f"{path}:{line}: error: {message}" if line else f"{path}: error: {message}"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _summary(mode: str, counts: dict[str, int], errors: int) -> str:
    verb = "would be rewritten" if mode in ("diff", "check") else "rewritten"
    parts = [f"{_plural(counts['changed'], 'file')} {verb}", f"{counts['unchanged']} unchanged"]
    if errors:
        parts.append(_plural(errors, "error"))
    return "carve rewrite: " + ", ".join(parts)
