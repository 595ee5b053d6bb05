"""Finding skills: each source's folders, validated, merged with later sources winning."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from pathlib import Path

from nbagents._contract import SKILL_FILE
from nbagents.backends import BackendError, BackendProtocol, DiskBackend, FileMissingError
from nbagents.skills._frontmatter import SkillFormatError, parse_skill
from nbagents.skills._records import SkillMetadata, SkillsDiscovery, SkillSource, SkillWarning


def _as_source(source: str | SkillSource) -> SkillSource:
    return source if isinstance(source, SkillSource) else SkillSource(source)


def _warning(path: str, source: str, message: str, *, skipped: bool = True) -> SkillWarning:
    return {"path": path, "source": source, "message": message, "skipped": skipped}


def load_source(
    backend: BackendProtocol, source: str | SkillSource
) -> tuple[list[SkillMetadata], list[SkillWarning]]:
    """The valid skills of one source, and warnings for the rest. A missing source is empty."""
    source = _as_source(source)
    label = source.name
    try:
        entries = backend.ls(source.path)
    except FileMissingError:
        return [], []
    except (BackendError, OSError) as error:
        return [], [_warning(source.path, label, f"cannot list skills: {error}")]
    skills: list[SkillMetadata] = []
    warnings: list[SkillWarning] = []
    for entry in entries:
        if not entry.is_dir:
            continue
        folder = posixpath.basename(entry.path)
        path = posixpath.join(entry.path, SKILL_FILE)
        try:
            content = backend.read(path)
        except FileMissingError:
            warnings.append(_warning(path, label, f"folder {folder!r} has no {SKILL_FILE}"))
            continue
        except (BackendError, OSError) as error:
            # OSError: an unreadable file on disk must not stop the other skills from loading.
            warnings.append(_warning(path, label, str(error)))
            continue
        if content.is_binary:
            warnings.append(_warning(path, label, f"{SKILL_FILE} is not UTF-8 text"))
            continue
        try:
            skill, notes = parse_skill(content.text, folder=folder, path=path, source=label)
        except SkillFormatError as error:
            warnings.append(_warning(path, label, str(error)))
            continue
        skills.append(skill)
        warnings.extend(_warning(path, label, note, skipped=False) for note in notes)
    return skills, warnings


def merge_sources(
    loaded: Iterable[tuple[list[SkillMetadata], list[SkillWarning]]],
) -> SkillsDiscovery:
    """Sources in order: a skill overrides an earlier source's skill of the same name."""
    winners: dict[str, SkillMetadata] = {}
    overridden: list[SkillMetadata] = []
    warnings: list[SkillWarning] = []
    for skills, source_warnings in loaded:
        warnings.extend(source_warnings)
        for skill in skills:
            previous = winners.get(skill["name"])
            if previous is not None:
                overridden.append(previous)
            winners[skill["name"]] = skill
    return SkillsDiscovery(
        skills=[winners[name] for name in sorted(winners)],
        warnings=warnings,
        overridden=overridden,
    )


def discover_skills(
    backend: BackendProtocol, sources: Sequence[str | SkillSource]
) -> SkillsDiscovery:
    """Skills of ``sources`` (directories in ``backend``), later sources overriding earlier ones."""
    return merge_sources(load_source(backend, source) for source in sources)


def discover_skill_dirs(
    directories: Sequence[tuple[str, str | os.PathLike[str]]],
) -> SkillsDiscovery:
    """Skills of host directories given as ``(label, directory)``, later ones overriding.

    Paths in the result are host paths of the ``SKILL.md`` files. Missing directories are empty.
    """
    loaded = []
    for label, directory in directories:
        root = Path(directory)
        if not root.is_dir():
            continue
        skills, warnings = load_source(DiskBackend(root), SkillSource("/", label))
        for skill in skills:
            skill["path"] = str(root / skill["path"].lstrip("/"))
        for warning in warnings:
            warning["path"] = str(root / warning["path"].lstrip("/"))
        loaded.append((skills, warnings))
    return merge_sources(loaded)
