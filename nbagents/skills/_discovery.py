"""Finding skills: each source's folders, validated, merged with later sources winning."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from pathlib import Path

from nbagents._contract import SKILL_FILE
from nbagents.backends import FILE_NOT_FOUND, BackendProtocol, DiskBackend
from nbagents.skills._frontmatter import SkillFormatError, parse_skill
from nbagents.skills._records import SkillMetadata, SkillsDiscovery, SkillSource, SkillWarning


def as_source(source: str | SkillSource | tuple[str, str]) -> SkillSource:
    """A source given as a path, a ``SkillSource`` or deepagents' ``(path, label)`` pair."""
    if isinstance(source, SkillSource):
        return source
    if isinstance(source, str):
        return SkillSource(source)
    if (
        isinstance(source, tuple)
        and len(source) == 2
        and all(isinstance(part, str) for part in source)
    ):
        return SkillSource(source[0], source[1])
    raise TypeError(
        f"A skill source is a directory path, a (path, label) pair or a SkillSource, "
        f"not {source!r}."
    )


def _warning(path: str, source: str, message: str, *, skipped: bool = True) -> SkillWarning:
    return {"path": path, "source": source, "message": message, "skipped": skipped}


def load_source(
    backend: BackendProtocol, source: str | SkillSource | tuple[str, str]
) -> tuple[list[SkillMetadata], list[SkillWarning]]:
    """The valid skills of one source, and warnings for the rest. A missing source is empty."""
    source = as_source(source)
    label = source.name
    listing = backend.ls(source.path)
    if listing.entries is None:
        if _missing(backend, source.path):
            return [], []
        return [], [_warning(source.path, label, f"cannot list skills: {listing.error}")]
    folders = [e for e in listing.entries if e.get("is_dir")]
    paths = [posixpath.join(e["path"].rstrip("/"), SKILL_FILE) for e in folders]
    # One batch: a store or remote backend answers all the SKILL.md files in one round trip.
    downloads = backend.download_files(paths) if paths else []
    skills: list[SkillMetadata] = []
    warnings: list[SkillWarning] = []
    for path, download in zip(paths, downloads, strict=True):
        folder = posixpath.basename(posixpath.dirname(path))
        if download.content is None:
            if download.error == FILE_NOT_FOUND:
                message = f"folder {folder!r} has no {SKILL_FILE}"
            else:
                # The download's error is a code; a read says what the code stands for.
                message = backend.read(path).error or str(download.error)
            warnings.append(_warning(path, label, message))
            continue
        try:
            if b"\x00" in download.content:
                raise UnicodeDecodeError("utf-8", download.content, 0, 1, "NUL byte")
            text = download.content.decode("utf-8")
        except UnicodeDecodeError:
            warnings.append(_warning(path, label, f"{SKILL_FILE} is not UTF-8 text"))
            continue
        try:
            skill, notes = parse_skill(text, folder=folder, path=path, source=label)
        except SkillFormatError as error:
            warnings.append(_warning(path, label, str(error)))
            continue
        skills.append(skill)
        warnings.extend(_warning(path, label, note, skipped=False) for note in notes)
    return skills, warnings


def _missing(backend: BackendProtocol, path: str) -> bool:
    """Whether nothing is at ``path``: a missing source has no skills, and is no error."""
    path = path.rstrip("/")
    if not path.startswith("/"):
        return False
    parent = posixpath.dirname(path)
    listing = backend.ls(parent)
    if listing.entries is not None:
        return path not in {e["path"].rstrip("/") for e in listing.entries}
    return parent != "/" and _missing(backend, parent)


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
    backend: BackendProtocol, sources: Sequence[str | SkillSource | tuple[str, str]]
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
