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
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print("carve: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
