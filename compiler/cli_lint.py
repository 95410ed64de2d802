"""`carve lint`: find graph-break-prone code from source alone, in CI or a pre-commit hook.

    $ carve lint src/                              # compiled functions and what they call
    $ carve lint --all src/                        # every function that does tensor work
    $ carve lint src/ --select CRV00 --ignore CRV003 --output-format sarif > carve.sarif
    $ carve lint src/ --diff                       # the mechanical fixes, as a diff
    $ carve lint src/ --fix --unsafe-fixes         # also fixes that may change a result
    $ carve lint --explain CRV005

Exit status: 0 nothing found; 1 findings (or, with --diff, changes to make);
2 usage, configuration or internal errors, reported as one line
`carve lint: error: ...` on stderr. `--exit-zero` turns 1 into 0.

The files are read, never imported or run, and torch is never imported.
"""

from __future__ import annotations

import difflib
import gc
import os
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import cast

from carve.files import InputError, process_files, python_files
from carve.rewriters.lint.config import ConfigError, LintConfig, check_prefixes, find_config, load_config
from carve.rewriters.lint.driver import FileResult, lint_file
from carve.rewriters.lint.modules import ProjectLayout
from carve.rewriters.lint.project import WorkItem, lint_tree

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2


class UsageError(Exception):
    pass


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="report graph-break-prone code in compiled functions (no torch import, no code run)",
        description=(
            "Lint functions compiled with carve.compile / torch.compile (and the functions they call, in the linted "
            "tree and, through their source, in installed packages) for code that breaks the graph or makes "
            "torch.compile skip the function. Imports are followed by path, never executed. Configuration: "
            "[tool.carve.lint] in pyproject.toml."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (recursively)")
    parser.add_argument("--select", metavar="CODES", help="comma-separated code prefixes to report (replaces the default)")
    parser.add_argument("--extend-select", metavar="CODES", help="code prefixes to report in addition")
    parser.add_argument("--ignore", metavar="CODES", help="code prefixes not to report")
    parser.add_argument("--exclude", metavar="PATTERNS", help="comma-separated path patterns to skip (added to the config's)")
    parser.add_argument("--all", dest="all_functions", action="store_true", default=None,
                        help="lint every function that does tensor work (names torch, or computes on tensors), not only compiled ones")
    parser.add_argument("--output-format", choices=("text", "json", "github", "sarif", "html"), default="text")
    parser.add_argument("--statistics", action="store_true", help="print the number of findings per code instead of each finding")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    fix_group = parser.add_mutually_exclusive_group()
    fix_group.add_argument("--fix", action="store_true", help="apply the mechanical fixes to the files")
    fix_group.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; exit 1 if there are any")
    parser.add_argument("--unsafe-fixes", dest="unsafe_fixes", action="store_true", default=None,
                        help="let --fix and --diff apply fixes that may change a result (shape, dtype, gradient)")
    parser.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                        help="apply only safe fixes, whatever the configuration says")
    parser.add_argument("--explain", metavar="CODE", help="print the documentation of a rule and exit")
    parser.add_argument("--generate-docs", metavar="FILE", help="write the rule reference (markdown) to FILE ('-' for stdout) and exit")
    parser.add_argument("--config", metavar="PYPROJECT", help="read [tool.carve.lint] from this file (default: the nearest pyproject.toml)")
    parser.add_argument("--torch-version", metavar="VERSION",
                        help="lint for this torch version (default: the installed torch's, read without importing it)")
    parser.add_argument("--jobs", "-j", type=int, metavar="N", help="worker processes (default: one per core)")
    parser.add_argument("--no-progress", action="store_true", help="never show the progress bar")
    parser.error = _usage_error  # one line, no usage dump, exit 2
    parser.set_defaults(handler=run)


def _usage_error(message: str):
    print(f"carve lint: error: {message}", file=sys.stderr)
    sys.exit(EXIT_ERROR)


def _codes(value: str | None, option: str) -> list[str] | None:
    if value is None:
        return None
    return check_prefixes([v for v in value.replace(" ", ",").split(",") if v], option)


def build_config(args) -> LintConfig:
    pyproject = Path(args.config) if args.config else find_config(args.paths or ["."])
    config = load_config(pyproject)
    select = _codes(args.select, "--select")
    if select is not None:
        config.select = select
    config.extend_select += _codes(args.extend_select, "--extend-select") or []
    config.ignore += _codes(args.ignore, "--ignore") or []
    if args.exclude:
        config.exclude += [p for p in args.exclude.split(",") if p]
    if args.all_functions:
        config.all_functions = True
    if args.unsafe_fixes is not None:
        config.unsafe_fixes = args.unsafe_fixes
    from carve.rewriters.lint.torch_version import installed_torch_version, parse_version

    if getattr(args, "torch_version", None):
        try:
            config.torch_version = parse_version(args.torch_version)
        except ValueError as error:
            raise ConfigError(f"--torch-version: {error}") from None
    if config.torch_version is None:
        config.torch_version = installed_torch_version()
    return config


def run(args) -> int:
    try:
        return _run(args)
    except (ConfigError, InputError, UsageError) as error:
        print(f"carve lint: error: {error}", file=sys.stderr)
        return EXIT_ERROR


def _run(args) -> int:
    if args.explain:
        from carve.rewriters.lint.docs import explain

        try:
            sys.stdout.write(explain(args.explain))
        except KeyError:
            raise UsageError(f"--explain: unknown rule code {args.explain!r}") from None
        return EXIT_CLEAN
    if args.generate_docs:
        from carve.rewriters.lint.docs import rules_markdown

        text = rules_markdown()
        if args.generate_docs == "-":
            sys.stdout.write(text)
        else:
            _write_atomically(Path(args.generate_docs), text, "utf-8")
        return EXIT_CLEAN
    if not args.paths:
        raise UsageError("no PATH given (try `carve lint .`)")
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    config = build_config(args)
    files = [str(p) for p in python_files(args.paths, config.exclude)]
    want_fixes = args.fix or args.diff
    progress = False if args.no_progress else None
    # Imports are followed by path into the linted tree and the interpreter's sys.path.
    layout = ProjectLayout.build(args.paths, files)
    results = lint_tree(files, lambda items: _lint_files(items, config, want_fixes, args.jobs, progress, layout))

    findings = [f for r in results for f in r.findings]
    errors = [r for r in results if r.error]
    changed = [r for r in results if r.fixed is not None]
    out = sys.stdout
    if args.diff:
        for r in changed:
            out.writelines(difflib.unified_diff(
                r.original.splitlines(keepends=True), r.fixed.splitlines(keepends=True),
                fromfile=f"a/{r.filename}", tofile=f"b/{r.filename}",
            ))
    elif args.fix:
        for r in changed:
            _write_atomically(Path(r.filename), r.fixed, r.encoding)
        fixed_ids = {id(f) for r in changed for f in r.findings if f.fix_enabled}
        remaining = [f for f in findings if id(f) not in fixed_ids]
        _report(args, remaining, out)
        if changed:
            count = len(fixed_ids)
            print(f"Fixed {count} finding{'s' if count != 1 else ''} in {len(changed)} file{'s' if len(changed) != 1 else ''}.", file=out)
        findings = remaining
    else:
        _report(args, findings, out)
    for r in errors:
        print(f"carve lint: error: {r.filename}: {r.error}", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    if args.exit_zero:
        return EXIT_CLEAN
    if args.diff:
        return EXIT_FINDINGS if changed else EXIT_CLEAN
    return EXIT_FINDINGS if findings else EXIT_CLEAN


def _lint_one(item: WorkItem, config: LintConfig, want_fixes: bool, layout: ProjectLayout | None = None) -> FileResult:
    """One file, with the cyclic garbage collector paused: a parse allocates hundreds of thousands
    of nodes, which sets off collections that find nothing (the trees hold no cycles) and cost a
    fifth of the run. It resumes between files, so memory stays what it was."""
    filename, extra_targets = item
    enabled = gc.isenabled()
    gc.disable()
    try:
        return lint_file(filename, config, want_fixes, layout, extra_targets)
    finally:
        if enabled:
            gc.enable()


def _lint_group(items: list[WorkItem], config: LintConfig, want_fixes: bool, layout: ProjectLayout | None = None) -> list[FileResult]:
    return [_lint_one(item, config, want_fixes, layout) for item in items]


def _lint_files(
    items: list[WorkItem], config: LintConfig, want_fixes: bool, jobs: int | None, progress,
    layout: ProjectLayout | None = None,
) -> list[FileResult]:
    """Lint the files, in their order; across processes in groups of about the same size.

    One large file (torch/nn/functional.py) takes as long as twenty small ones: handing out
    files in list order would leave one worker busy with a big chunk while the others idle.
    The files are packed into groups of similar total size, largest first.
    """
    jobs = jobs or os.cpu_count() or 1
    files = [filename for filename, _ in items]
    if jobs <= 1 or len(files) < 16:
        work = partial(_lint_one, config=config, want_fixes=want_fixes, layout=layout)
        return process_files(items, work, jobs=1, label="carve lint", progress=progress)
    sizes = []
    for filename in files:
        try:
            sizes.append(os.path.getsize(filename))
        except OSError:
            sizes.append(0)
    # Enough groups that process_files hands them out one at a time (chunk size 1).
    count = jobs * 4
    groups: list[list[int]] = [[] for _ in range(count)]
    totals = [0] * count
    for index in sorted(range(len(files)), key=lambda i: -sizes[i]):
        smallest = min(range(count), key=totals.__getitem__)
        groups[smallest].append(index)
        totals[smallest] += sizes[index] + 4096  # a file costs something even when small
    order = [groups[g] for g in sorted(range(count), key=lambda g: -totals[g]) if groups[g]]
    group_work = partial(_lint_group, config=config, want_fixes=want_fixes, layout=layout)
    grouped = process_files(
        [[items[i] for i in group] for group in order], group_work, jobs=jobs, label="carve lint", progress=progress)
    results: list[FileResult | None] = [None] * len(files)
    for group, group_results in zip(order, grouped):
        for index, result in zip(group, group_results):
            results[index] = result
    return cast("list[FileResult]", results)  # every file is in a group: no None is left


def _report(args, findings, out) -> None:
    from carve.rewriters.lint import reporters

    if args.statistics:
        out.write(reporters.statistics(findings))
        return
    import carve

    out.write(reporters.render(findings, args.output_format, carve.__version__))
    if args.output_format == "text":
        out.write(reporters.summary(findings))


def _write_atomically(path: Path, text: str, encoding: str) -> None:
    """Write to a temporary file beside `path`, then rename it over: never a half-written file."""
    directory = path.parent if str(path.parent) else Path(".")
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".carve-tmp", dir=directory)
    try:
        with os.fdopen(descriptor, "w", encoding=encoding, newline="") as handle:
            handle.write(text)
        if path.exists():
            os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
