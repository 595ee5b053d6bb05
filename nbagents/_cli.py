"""The ``nbagents`` command: ``nbagents skills …`` (see ``nbagents --help``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nbagents.skills._cli import EXIT_USAGE, add_skills_parser
from nbagents.skills._cli import run as run_skills


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nbagents", description="nbagents command line tools.")
    commands = parser.add_subparsers(dest="command", metavar="{skills}")
    add_skills_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    return run_skills(args)
