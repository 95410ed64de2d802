"""The `carve` command line: `carve rewrite` and `carve lint`.

Each subcommand lives in its own module (`carve.cli_rewrite`, `carve.cli_lint`)
exposing `register(subparsers)`, which adds its parser and sets `handler`;
only the module of the subcommand being run is imported.
The command line never imports or executes the files it reads, and never
imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# name -> (module, one-line help). Only the module of the subcommand that runs is imported,
# so one subcommand's dependencies (tomli for lint on Python 3.10) never break another.
SUBCOMMANDS = {
    "rewrite": ("carve.cli_rewrite", "write the carve-compiled form of Python files as readable source"),
    "lint": ("carve.cli_lint", "report graph-break-prone code in compiled functions (no torch import, no code run)"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s full subparser; the other subcommands are listed by name
    and help only (enough for `carve --help`)."""
    import carve

    parser = argparse.ArgumentParser(prog="carve", description="carve: a source-to-source compiler for PyTorch")
    parser.add_argument("--version", action="version", version=f"carve {carve.__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    subcommands.required = True
    for name, (module_name, summary) in SUBCOMMANDS.items():
        if name == command:
            importlib.import_module(module_name).register(subcommands)
        else:
            subcommands.add_parser(name, help=summary)
    return parser


def _command(argv: list[str]) -> str | None:
    # The top-level options take no values, so the first positional word is the subcommand.
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    parser = build_parser(_command(argv))
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # argparse reports a subcommand's unknown options from the top-level parser; a
        # subcommand with its own error format (`carve lint: error: ...`) reports them itself.
        subcommand = _subcommand_parser(parser, getattr(args, "command", None))
        reporter = subcommand if subcommand is not None and "error" in vars(subcommand) else parser
        reporter.error(f"unrecognized arguments: {' '.join(unknown)}")
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("carve: interrupted", file=sys.stderr)
        return 130


def _subcommand_parser(parser: argparse.ArgumentParser, command: str | None) -> argparse.ArgumentParser | None:
    if command is None:
        return None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(command)
    return None


if __name__ == "__main__":
    sys.exit(main())
