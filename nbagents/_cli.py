"""The ``nbagents`` command: ``nbagents skills …``, ``nbagents workshop …``, ``--version``."""

from __future__ import annotations

import argparse
import json
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
    commands = parser.add_subparsers(dest="command", metavar="{skills,workshop}")
    add_skills_parser(commands)
    workshop = commands.add_parser(
        "workshop",
        help="write participant and facilitator notebooks from tutorials with tagged solutions",
        description="Write OUT/participant/ (each cell tagged 'solution' replaced by its starter, "
        "no outputs) and OUT/facilitator/ (solutions and outputs kept) from the notebooks in SRC, "
        "with SRC's other files beside them. OUT is replaced.",
    )
    workshop.add_argument("source", metavar="SRC", type=Path, help="the tutorials' folder")
    workshop.add_argument("out", metavar="OUT", type=Path, help="the folder to write")
    workshop.add_argument(
        "--also",
        metavar="PATH",
        type=Path,
        action="append",
        default=[],
        help="a file or folder to copy into OUT, for what a notebook reads through ../ "
        "(repeatable)",
    )
    return parser


def run_workshop(args: argparse.Namespace) -> int:
    from nbagents.exercises import build_workshop, exercise_count

    written = build_workshop(args.source, args.out, also=args.also)
    for audience, paths in written.items():
        print(f"{audience}: {len(paths)} notebooks in {args.out / audience}")
    untagged = [
        p.name
        for p in written["facilitator"]
        if not exercise_count(json.loads(p.read_text(encoding="utf-8")))
    ]
    if untagged:
        print(f"no cell tagged 'solution' in: {', '.join(untagged)}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "workshop":
        return run_workshop(args)
    return run_skills(args)
