"""Typed records of the skill system: a skill's metadata, a load warning, a source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict


class SkillMetadata(TypedDict):
    """One skill as the prompt lists it and the state keeps it (``skills_metadata``).

    The same keys as deepagents' record: optional frontmatter fields that are absent or were
    ignored are ``None``, ``{}`` or ``[]``.
    """

    path: str
    """Path of the ``SKILL.md``: virtual in a backend, a host path from a directory."""
    name: str
    description: str
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    allowed_tools: list[str]
    """The frontmatter's ``allowed-tools``, split into names."""


class SkillWarning(TypedDict):
    """A skill that could not be loaded, a problem in one that was, or a source that could not
    be listed. The middleware keeps each as one line in ``skills_load_errors``."""

    path: str
    """The ``SKILL.md``, or the source directory when ``whole_source``."""
    source: str
    message: str
    skipped: bool
    """Whether the skill was left out (``False``: loaded, with something ignored)."""
    whole_source: NotRequired[bool]
    """The source itself failed (it could not be listed): none of its skills were loaded."""


@dataclass(frozen=True)
class SkillSource:
    """A directory of skill folders in a backend, and the label shown for it."""

    path: str
    label: str | None = None

    @property
    def name(self) -> str:
        """The label, or one made from the path: ``/skills/user`` is ``User``."""
        return self.label if self.label is not None else label_for_path(self.path)


def label_for_path(path: str) -> str:
    """A display label for a source given as a path alone, as deepagents derives it.

    The last folder, capitalized; a last folder named ``skills`` says nothing, so its parent
    names the source (``~/.claude/skills`` is ``Claude``); ``built_in_skills`` is ``Built-in``.
    """
    parts = [part for part in path.replace("\\", "/").split("/") if part]
    if not parts:
        return "Unnamed"
    leaf = parts[-1]
    if leaf.lower() == "built_in_skills":
        return "Built-in"
    if leaf.lower() == "skills" and len(parts) > 1:
        parent = parts[-2].lstrip(".")
        if parent:
            return parent.replace("_", " ").replace("-", " ").title()
    return leaf.capitalize()


@dataclass(frozen=True)
class SkillsDiscovery:
    """What discovery found, sources merged: later sources override earlier ones by name."""

    skills: list[SkillMetadata] = field(default_factory=list)
    """The winners, sorted by name."""
    warnings: list[SkillWarning] = field(default_factory=list)
    overridden: list[SkillMetadata] = field(default_factory=list)
    """Skills hidden by a later source's skill of the same name."""
    sources: dict[str, str] = field(default_factory=dict)
    """Label of the source each skill came from, by the path of its ``SKILL.md``."""

    def source_of(self, skill: SkillMetadata) -> str:
        """Label of the source ``skill`` (a winner or an overridden one) came from."""
        return self.sources[skill["path"]]

    def get(self, name: str) -> SkillMetadata | None:
        return next((s for s in self.skills if s["name"] == name), None)


@dataclass(frozen=True)
class SkillCheck:
    """One skill folder judged as discovery judges it (``check_skill``)."""

    path: str
    """The ``SKILL.md`` checked."""
    skill: SkillMetadata | None
    """What the prompt would list, or ``None`` when the skill cannot be loaded."""
    warnings: list[SkillWarning] = field(default_factory=list)
    """Why it cannot be loaded, or what is ignored in it (``skipped`` says which)."""

    @property
    def ok(self) -> bool:
        """Whether the skill loads (it may still have warnings)."""
        return self.skill is not None
