"""``nbagents skills list|create|info``: managing skill folders from the shell."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nbagents._contract import SKILL_FILE
from nbagents.skills._built_in import skill_template
from nbagents.skills._discovery import discover_skill_dirs
from nbagents.skills._frontmatter import name_problem
from nbagents.skills._records import SkillMetadata, SkillsDiscovery

USER_DIR_ENV = "NBAGENTS_SKILLS_HOME"
"""Environment variable naming the user skills directory (default ``~/.nbagents/skills``)."""
PROJECT_SKILLS = Path(".nbagents") / "skills"

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def user_dir(option: str | None) -> Path:
    if option:
        return Path(option).expanduser()
    env = os.environ.get(USER_DIR_ENV)
    return Path(env).expanduser() if env else Path.home() / ".nbagents" / "skills"


def project_dir(option: str | None) -> Path:
    if option:
        return Path(option).expanduser()
    # The project is the nearest folder holding .git, else the working directory.
    here = Path.cwd()
    root = next((folder for folder in (here, *here.parents) if (folder / ".git").exists()), here)
    return root / PROJECT_SKILLS


def _sources(args: argparse.Namespace) -> list[tuple[str, Path]]:
    sources = []
    if not args.project:
        sources.append(("user", user_dir(args.user_dir)))
    if not args.user:
        sources.append(("project", project_dir(args.project_dir)))
    return sources


def _error(message: str) -> int:
    print(f"nbagents skills: error: {message}", file=sys.stderr)
    return EXIT_FAILED


def _overrides(found: SkillsDiscovery, skill: SkillMetadata) -> list[str]:
    return [found.source_of(s) for s in found.overridden if s["name"] == skill["name"]]


def cmd_list(args: argparse.Namespace) -> int:
    sources = _sources(args)
    found = discover_skill_dirs(sources)
    for label, directory in sources:
        state = "" if directory.is_dir() else " (does not exist)"
        print(f"{label.capitalize()} skills: {directory}{state}")
    print()
    if not found.skills:
        print("No skills found.")
    else:
        width = max(len(s["name"]) for s in found.skills)
        for skill in found.skills:
            description = skill["description"].splitlines()[0]
            if len(description) > 72:
                description = description[:71] + "…"
            overrides = _overrides(found, skill)
            note = f"  [overrides {', '.join(overrides)}]" if overrides else ""
            print(f"{skill['name']:<{width}}  {found.source_of(skill):<7}  {description}{note}")
    for warning in found.warnings:
        skipped = " (skill skipped)" if warning["skipped"] else ""
        print(f"warning: {warning['path']}: {warning['message']}{skipped}", file=sys.stderr)
    return EXIT_OK


def cmd_create(args: argparse.Namespace) -> int:
    if problem := name_problem(args.name):
        return _error(f"invalid skill name: {problem}")
    in_project = args.project or args.project_dir is not None
    base = project_dir(args.project_dir) if in_project else user_dir(args.user_dir)
    target = base / args.name
    if target.exists():
        return _error(f"{target} already exists; choose another name or edit it")
    text = skill_template(args.name)  # read before the folder is made: none is left empty
    target.mkdir(parents=True)
    (target / SKILL_FILE).write_text(text, encoding="utf-8")
    print(f"Created skill {args.name!r} at {target / SKILL_FILE}")
    print(
        "Edit its description and instructions, then check it with: nbagents skills info "
        f"{args.name}" + (" --project" if in_project else "")
    )
    return EXIT_OK


def cmd_info(args: argparse.Namespace) -> int:
    if problem := name_problem(args.name):
        return _error(f"invalid skill name: {problem}")
    sources = _sources(args)
    found = discover_skill_dirs(sources)
    skill = found.get(args.name)
    if skill is None:
        broken = [w for w in found.warnings if Path(w["path"]).parent.name == args.name]
        for warning in broken:
            _error(
                f"skill {args.name!r} at {warning['path']} cannot be loaded: {warning['message']}"
            )
        if not broken:
            looked = ", ".join(str(d) for _, d in sources)
            _error(f"no skill named {args.name!r} (looked in {looked})")
        return EXIT_FAILED
    path = Path(skill["path"])
    overrides = _overrides(found, skill)
    print(f"Name:        {skill['name']}")
    print(
        f"Source:      {found.source_of(skill)}"
        + (f" (overrides {', '.join(overrides)})" if overrides else "")
    )
    print(f"Path:        {path}")
    print(f"Description: {skill['description']}")
    if skill["license"] is not None:
        print(f"License:     {skill['license']}")
    if skill["compatibility"] is not None:
        print(f"Compatibility: {skill['compatibility']}")
    if skill["allowed_tools"]:
        print(f"Tools:       {' '.join(skill['allowed_tools'])}")
    for key, value in skill["metadata"].items():
        print(f"Metadata:    {key} = {value}")
    print("Files:")
    folder = path.parent
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        print(f"  {file.relative_to(folder).as_posix()}")
    for warning in found.warnings:
        if warning["path"] == skill["path"]:
            print(f"Warning:     {warning['message']}")
    print(f"\n--- {SKILL_FILE} ---")
    print(path.read_text(encoding="utf-8", errors="replace"), end="")
    return EXIT_OK


def add_skills_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Registers ``skills`` and its sub-commands on the top-level parser."""
    where = argparse.ArgumentParser(add_help=False)
    group = where.add_argument_group("where skills live")
    scope = group.add_mutually_exclusive_group()
    scope.add_argument(
        "--project",
        action="store_true",
        help="only the project's skills (create: in the project). The project directory is "
        "<root>/.nbagents/skills, root being the nearest ancestor with .git, else the cwd",
    )
    scope.add_argument("--user", action="store_true", help="only the user's skills")
    group.add_argument(
        "--project-dir",
        metavar="PATH",
        help="the project skills directory itself (implies --project for create)",
    )
    group.add_argument(
        "--user-dir",
        metavar="PATH",
        help=f"the user skills directory (default: ${USER_DIR_ENV}, else ~/.nbagents/skills)",
    )

    skills = commands.add_parser(
        "skills",
        help="list, create and inspect skills",
        description="Skills are folders holding a SKILL.md. User skills are read first, then "
        "project skills, which override user skills of the same name.",
    )
    actions = skills.add_subparsers(dest="action", metavar="{list,create,info}")
    listing = actions.add_parser(
        "list",
        parents=[where],
        help="list skills, their source and overrides",
        description="List the skills found, where each comes from and which ones override "
        "another. Skills that cannot be loaded are reported on stderr.",
    )
    listing.set_defaults(run=cmd_list)
    create = actions.add_parser(
        "create",
        parents=[where],
        help="create a skill from a template",
        description="Create <dir>/NAME/SKILL.md from a template, in the user directory unless "
        "--project or --project-dir is given.",
    )
    create.add_argument("name", help="lowercase letters, digits and single hyphens, at most 64")
    create.set_defaults(run=cmd_create)
    info = actions.add_parser(
        "info",
        parents=[where],
        help="show a skill's path, description, files and SKILL.md",
        description="Show the skill that NAME resolves to (project over user): its path, "
        "description, files and the whole SKILL.md.",
    )
    info.add_argument("name")
    info.set_defaults(run=cmd_info)
    skills.set_defaults(parser=skills)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "run", None) is None:
        args.parser.print_help(sys.stderr)
        return EXIT_USAGE
    return int(args.run(args))
