"""Typed records of the skill system: a skill's metadata, a load warning, a source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NotRequired, TypedDict


class SkillMetadata(TypedDict):
    """One skill as the prompt lists it and the state keeps it (``skills_metadata``)."""

    name: str
    description: str
    path: str
    """Path of the ``SKILL.md``: virtual in a backend, a host path from a directory."""
    source: str
    """Label of the source the skill came from (``user``, ``project``, or the source path)."""
    license: NotRequired[str]
    compatibility: NotRequired[str]
    metadata: NotRequired[dict[str, str]]
    allowed_tools: NotRequired[list[str]]
    """The frontmatter's ``allowed-tools``, split into names."""


class SkillWarning(TypedDict):
    """A skill that could not be loaded, or a problem in one that was (``skills_load_warnings``)."""

    path: str
    source: str
    message: str
    skipped: bool
    """Whether the skill was left out (``False``: loaded, with something ignored)."""


@dataclass(frozen=True)
class SkillSource:
    """A directory of skill folders in a backend, and the label shown for it."""

    path: str
    label: str | None = None

    @property
    def name(self) -> str:
        return self.label or self.path


@dataclass(frozen=True)
class SkillsDiscovery:
    """What discovery found, sources merged: later sources override earlier ones by name."""

    skills: list[SkillMetadata] = field(default_factory=list)
    """The winners, sorted by name."""
    warnings: list[SkillWarning] = field(default_factory=list)
    overridden: list[SkillMetadata] = field(default_factory=list)
    """Skills hidden by a later source's skill of the same name."""

    def get(self, name: str) -> SkillMetadata | None:
        return next((s for s in self.skills if s["name"] == name), None)
