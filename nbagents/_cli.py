"""The ``nbagents`` command: ``nbagents skills …`` and ``nbagents --version``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from nbagents._distribution import DISTRIBUTION, __version__
from nbagents.skills.cli import EXIT_USAGE, add_skills_parser
from nbagents.skills.cli import run as run_skills


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nbagents", description="nbagents command line tools.")
    # Where it runs from, too: another package may also install a top-level `nbagents`.
    package = Path(__file__).parent
    parser.add_argument(
        "--version",
        action="version",
        # argparse formats the text with %: a % in the path must not be read as a field.
        version=f"nbagents {__version__} ({DISTRIBUTION}) from {package}".replace("%", "%%"),
    )
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
