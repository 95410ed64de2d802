"""The `carve` command line: `carve rewrite` and `carve lint`.

Each subcommand lives in its own module (`carve.cli_rewrite`, `carve.cli_lint`)
exposing `register(subparsers)`, which adds its parser and sets `handler`.
The command line never imports or executes the files it reads, and never
imports torch.
"""

from __future__ import annotations

import argparse
import importlib
import sys

SUBCOMMAND_MODULES = ("carve.cli_rewrite", "carve.cli_lint")


def build_parser() -> argparse.ArgumentParser:
    import carve

    parser = argparse.ArgumentParser(prog="carve", description="carve: a source-to-source compiler for PyTorch")
    parser.add_argument("--version", action="version", version=f"carve {carve.__version__}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    subcommands.required = True
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name != module_name:
                raise
            continue
        module.register(subcommands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
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
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(command)
    return None


if __name__ == "__main__":
    sys.exit(main())
