"""The skills shipped inside the package (``skill-creator``), and the template new skills start
from, which ``nbagents skills create`` and ``skill-creator`` both read from one file."""

from __future__ import annotations

from pathlib import Path

from nbagents.backends import AccessRule, DiskBackend
from nbagents.skills._frontmatter import name_problem

BUILT_IN_SKILLS_DIR = Path(__file__).resolve().parent / "built_in_skills"
"""The host directory of the built-in skills' folders (package data of the installed package)."""

BUILT_IN_SKILLS_SOURCE = "/skills/built-in/"
"""Where to mount :func:`built_in_skills_backend` in a ``CompositeBackend``, and the skills
source to list: its label is ``Built-in``, as deepagents labels its own built-in skills."""

SKILL_CREATOR = "skill-creator"
"""The name of the built-in skill that walks an agent through making a new skill."""

SKILL_TEMPLATE_FILE = BUILT_IN_SKILLS_DIR / SKILL_CREATOR / "assets" / "skill-template.md"
"""The template of a new ``SKILL.md``, with ``{name}`` and ``{title}`` to fill in. It lives in
``skill-creator``'s folder so that an agent reads, with ``read_file``, the very text the CLI
writes."""


def skill_template(name: str) -> str:
    """The ``SKILL.md`` that ``nbagents skills create NAME`` writes, for a valid ``name``."""
    problem = name_problem(name)
    if problem:
        raise ValueError(f"invalid skill name: {problem}")
    template = SKILL_TEMPLATE_FILE.read_text(encoding="utf-8")
    # Plain replacement, not str.format: it is what skill-creator tells an agent to do, so the
    # two cannot differ, and braces elsewhere in the template would not break it. The title of
    # ``pdf-tools`` is ``Pdf tools``.
    title = name.replace("-", " ").capitalize()
    return template.replace("{name}", name).replace("{title}", title)


def built_in_skills_backend() -> DiskBackend:
    """A read-only backend over :data:`BUILT_IN_SKILLS_DIR`, to mount at
    :data:`BUILT_IN_SKILLS_SOURCE`. Writes are refused: the folder belongs to the installed
    package, and every agent given it shares it."""
    return DiskBackend(BUILT_IN_SKILLS_DIR, rules=[AccessRule.deny("/**", "write")])
