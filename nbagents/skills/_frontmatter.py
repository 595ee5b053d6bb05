"""Parsing and validating ``SKILL.md`` frontmatter against the Agent Skills format."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import yaml

from nbagents.skills._records import SkillMetadata

MAX_SKILL_FILE_SIZE = 1_000_000
MAX_FRONTMATTER_BYTES = 16_384
MAX_SKILL_NAME_LENGTH = 64
MAX_SKILL_DESCRIPTION_LENGTH = 1024
MAX_SKILL_COMPATIBILITY_LENGTH = 500
NAME_PATTERN = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
KNOWN_KEYS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)

# The C loader is several times faster, which matters when a thousand skills load at start.
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SkillFormatError(ValueError):
    """A ``SKILL.md`` that cannot be loaded; the message says what to fix."""


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid skill name, or ``None`` when it is."""
    if not isinstance(name, str) or not name:
        return "name must be a non-empty string"
    if len(name) > MAX_SKILL_NAME_LENGTH:
        return f"name {name!r} is {len(name)} characters long; the limit is {MAX_SKILL_NAME_LENGTH}"
    if not NAME_PATTERN.fullmatch(name):
        return (
            f"name {name!r} may hold only lowercase letters, digits and single hyphens, "
            "and may not start or end with a hyphen"
        )
    return None


def split_frontmatter(text: str) -> str:
    """The YAML between the opening and closing ``---`` lines."""
    head, newline, rest = text.removeprefix("\ufeff").partition("\n")
    if not newline or head.rstrip() != "---":
        raise SkillFormatError("SKILL.md must start with a '---' line opening the YAML frontmatter")
    match = re.compile(r"^---[ \t]*\r?$", re.MULTILINE).search(rest, 0, MAX_FRONTMATTER_BYTES + 1)
    if match is None:
        if len(rest) >= MAX_FRONTMATTER_BYTES:
            raise SkillFormatError(
                f"frontmatter is not closed within {MAX_FRONTMATTER_BYTES} characters "
                "(too large, or the closing '---' line is missing)"
            )
        raise SkillFormatError("frontmatter is not closed: add a '---' line after it")
    return rest[: match.start()]


def parse_skill(text: str, *, folder: str, path: str) -> tuple[SkillMetadata, list[str]]:
    """The skill described by ``text`` (a whole ``SKILL.md``) and what was ignored in it.

    Problems with required fields raise :class:`SkillFormatError`; problems with optional ones
    drop the field and are returned as warnings.
    """
    if len(text) > MAX_SKILL_FILE_SIZE:
        raise SkillFormatError(
            f"SKILL.md is {len(text)} characters long; the limit is {MAX_SKILL_FILE_SIZE}"
        )
    try:
        data = yaml.load(split_frontmatter(text), Loader=_Loader)
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (frontmatter line {where.line + 1})" if where is not None else ""
        problem = getattr(error, "problem", None) or str(error)
        raise SkillFormatError(f"frontmatter is not valid YAML{line}: {problem}") from error
    if not isinstance(data, Mapping):
        raise SkillFormatError("frontmatter must be a YAML mapping of keys to values")

    if problem := name_problem(data.get("name")):
        raise SkillFormatError(problem)
    name: str = data["name"]
    if name != folder:
        raise SkillFormatError(f"name {name!r} must equal its folder's name {folder!r}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillFormatError("description must be a non-empty string")
    if len(description) > MAX_SKILL_DESCRIPTION_LENGTH:
        raise SkillFormatError(
            f"description is {len(description)} characters long; the limit is "
            f"{MAX_SKILL_DESCRIPTION_LENGTH}"
        )

    skill: SkillMetadata = {
        "path": path,
        "name": name,
        "description": description.strip(),
        "license": None,
        "compatibility": None,
        "metadata": {},
        "allowed_tools": [],
    }
    warnings: list[str] = []
    unknown = sorted(str(k) for k in data if k not in KNOWN_KEYS)
    if unknown:
        warnings.append(f"unknown frontmatter keys ignored: {', '.join(unknown)}")
    if "license" in data:
        if isinstance(data["license"], str):
            skill["license"] = data["license"]
        else:
            warnings.append("license must be a string; ignored")
    if "compatibility" in data:
        value = data["compatibility"]
        if not isinstance(value, str) or not value.strip():
            warnings.append("compatibility must be a non-empty string; ignored")
        elif len(value) > MAX_SKILL_COMPATIBILITY_LENGTH:
            warnings.append(
                f"compatibility is {len(value)} characters long (limit "
                f"{MAX_SKILL_COMPATIBILITY_LENGTH}); ignored"
            )
        else:
            skill["compatibility"] = value
    if "metadata" in data:
        value = data["metadata"]
        if isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            skill["metadata"] = dict(value)
        else:
            warnings.append(
                "metadata must map strings to strings (quote numbers and dates); ignored"
            )
    if "allowed-tools" in data:
        value = data["allowed-tools"]
        if isinstance(value, str):
            skill["allowed_tools"] = value.split()
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            skill["allowed_tools"] = list(value)
        else:
            warnings.append("allowed-tools must be a space-separated string of tool names; ignored")
    return skill, warnings
