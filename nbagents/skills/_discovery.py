"""Finding skills: each source's folders, validated, merged with later sources winning."""

from __future__ import annotations

import asyncio
import os
import posixpath
from collections.abc import Generator, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from nbagents._contract import SKILL_FILE
from nbagents.backends import FILE_NOT_FOUND, BackendProtocol, DiskBackend, FileDownloadResponse
from nbagents.skills._frontmatter import SkillFormatError, parse_skill
from nbagents.skills._records import (
    SkillCheck,
    SkillMetadata,
    SkillsDiscovery,
    SkillSource,
    SkillWarning,
)

_T = TypeVar("_T")


def as_source(source: str | SkillSource | tuple[str, str]) -> SkillSource:
    """A source given as a path, a ``SkillSource`` or deepagents' ``(path, label)`` pair."""
    if isinstance(source, SkillSource):
        return source
    if isinstance(source, str):
        return SkillSource(source)
    if isinstance(source, tuple) and len(source) == 2 and all(isinstance(p, str) for p in source):
        return SkillSource(source[0], source[1])
    raise TypeError(
        f"A skill source is a directory path, a (path, label) pair or a SkillSource: expected "
        f"str or (str, str) tuple, not {source!r}."
    )


def _warning(path: str, source: str, message: str, *, skipped: bool = True) -> SkillWarning:
    return {"path": path, "source": source, "message": message, "skipped": skipped}


Loaded = tuple[str, list[SkillMetadata], list[SkillWarning]]
"""One source's label, its valid skills, and warnings for the rest."""

# Discovery is written once, as steps that name the backend call they need (``ls``,
# ``download_files`` or ``read``, with its argument) and receive its answer; ``_drive`` answers
# them with the sync methods and ``_adrive`` with the async twins.
_Steps = Generator[tuple[str, Any], Any, _T]


def _drive(backend: Any, steps: _Steps[_T]) -> _T:
    """Answers ``steps`` with the backend's sync methods."""
    answer = None
    try:
        while True:
            method, argument = steps.send(answer)
            call = _method(backend, method)
            answer = None if call is None else call(argument)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def _adrive(backend: Any, steps: _Steps[_T]) -> _T:
    """Answers ``steps`` with the backend's async methods, else its sync ones in a thread."""
    answer = None
    try:
        while True:
            method, argument = steps.send(answer)
            if callable(twin := getattr(backend, "a" + method, None)):
                answer = await twin(argument)
            elif (call := _method(backend, method)) is not None:
                answer = await asyncio.to_thread(call, argument)
            else:
                answer = None
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _method(backend: Any, method: str) -> Any:
    """The backend's ``method``; ``None`` for a missing ``read``, which only words errors better."""
    call = getattr(backend, method, None)
    if not callable(call) and method != "read":
        raise TypeError(
            f"The skills backend {type(backend).__name__} has no {method}(): skills are found "
            "with ls() and download_files() (als() and adownload_files() in async runs)."
        )
    return call if callable(call) else None


def _source_steps(source: SkillSource) -> _Steps[Loaded]:
    label = source.name
    listing = yield "ls", source.path
    if listing.error is not None or listing.entries is None:
        if (yield from _missing_steps(source.path)):
            return label, [], []
        failed = _warning(source.path, label, str(listing.error or "cannot list it"))
        failed["whole_source"] = True
        return label, [], [failed]
    folders = [e for e in listing.entries if e.get("is_dir")]
    paths = [posixpath.join(e["path"].rstrip("/"), SKILL_FILE) for e in folders]
    # One batch: a store or remote backend answers all the SKILL.md files in one round trip.
    downloads = (yield "download_files", paths) if paths else []
    skills: list[SkillMetadata] = []
    warnings: list[SkillWarning] = []
    for path, download in zip(paths, downloads, strict=True):
        skill, notes = yield from _file_steps(path, download, label)
        if skill is not None:
            skills.append(skill)
        warnings.extend(notes)
    return label, skills, warnings


def _file_steps(
    path: str, download: FileDownloadResponse, label: str
) -> _Steps[tuple[SkillMetadata | None, list[SkillWarning]]]:
    """One downloaded ``SKILL.md`` checked: the skill (``None`` when it cannot be loaded) and
    its warnings. Discovery (hence ``nbagents skills info``) and :func:`check_skill` both judge
    a skill here, so a skill that passes the check is one the next run is offered."""
    folder = posixpath.basename(posixpath.dirname(path))
    if download.content is None:
        if download.error == FILE_NOT_FOUND:
            message = f"folder {folder!r} has no {SKILL_FILE}"
        else:
            # The download's error is a code; a read says what the code stands for.
            read = yield "read", path
            message = (read.error if read is not None else None) or str(download.error)
        return None, [_warning(path, label, message)]
    try:
        if b"\x00" in download.content:
            raise UnicodeDecodeError("utf-8", download.content, 0, 1, "NUL byte")
        text = download.content.decode("utf-8")
    except UnicodeDecodeError:
        return None, [_warning(path, label, f"{SKILL_FILE} is not UTF-8 text")]
    try:
        skill, notes = parse_skill(text, folder=folder, path=path)
    except SkillFormatError as error:
        return None, [_warning(path, label, str(error))]
    return skill, [_warning(path, label, note, skipped=False) for note in notes]


def _skill_file_path(path: str) -> str:
    """The ``SKILL.md`` of a skill given as its folder or as that file (a backend path)."""
    path = path.strip().rstrip("/")
    folder = posixpath.dirname(path) if posixpath.basename(path) == SKILL_FILE else path
    if not folder.startswith("/") or folder == "/" or not posixpath.basename(folder):
        raise ValueError(
            f"{path or '/'!r} is not a skill folder: give the folder's absolute path, such as "
            f"/skills/user/pdf-tools, or its {SKILL_FILE}."
        )
    return posixpath.join(folder, SKILL_FILE)


def _check_steps(path: str) -> _Steps[SkillCheck]:
    label = SkillSource(posixpath.dirname(posixpath.dirname(path))).name
    (download,) = yield "download_files", [path]
    skill, warnings = yield from _file_steps(path, download, label)
    return SkillCheck(path=path, skill=skill, warnings=warnings)


def check_skill(backend: Any, path: str) -> SkillCheck:
    """Whether the skill folder at ``path`` in ``backend`` (or its ``SKILL.md``) loads, judged
    as discovery judges it, and what would be ignored in it.

    ``backend`` needs ``download_files`` (``read`` words some errors better). A ``path`` that
    names no folder raises ``ValueError``.
    """
    return _drive(backend, _check_steps(_skill_file_path(path)))


async def acheck_skill(backend: Any, path: str) -> SkillCheck:
    """``check_skill`` with the backend's async methods."""
    return await _adrive(backend, _check_steps(_skill_file_path(path)))


def _missing_steps(path: str) -> _Steps[bool]:
    """Whether nothing is at ``path``: a missing source has no skills, and is no error."""
    path = path.rstrip("/")
    while path.startswith("/"):
        parent = posixpath.dirname(path)
        listing = yield "ls", parent
        if listing.error is None and listing.entries is not None:
            return path not in {e["path"].rstrip("/") for e in listing.entries}
        if parent == "/":
            return False
        path = parent
    return False


def merge_sources(loaded: Iterable[Loaded]) -> SkillsDiscovery:
    """Sources in order: a skill overrides an earlier source's skill of the same name."""
    winners: dict[str, SkillMetadata] = {}
    overridden: list[SkillMetadata] = []
    warnings: list[SkillWarning] = []
    labels: dict[str, str] = {}
    for label, skills, source_warnings in loaded:
        warnings.extend(source_warnings)
        for skill in skills:
            labels[skill["path"]] = label
            previous = winners.get(skill["name"])
            if previous is not None:
                overridden.append(previous)
            winners[skill["name"]] = skill
    return SkillsDiscovery(
        skills=[winners[name] for name in sorted(winners)],
        warnings=warnings,
        overridden=overridden,
        sources=labels,
    )


def discover_skills(
    backend: BackendProtocol, sources: Sequence[str | SkillSource | tuple[str, str]]
) -> SkillsDiscovery:
    """Skills of ``sources`` (directories in ``backend``), later sources overriding earlier ones."""
    return merge_sources(_drive(backend, _source_steps(as_source(s))) for s in sources)


async def adiscover_skills(
    backend: BackendProtocol, sources: Sequence[str | SkillSource | tuple[str, str]]
) -> SkillsDiscovery:
    """``discover_skills`` with the backend's async methods."""
    return merge_sources([await _adrive(backend, _source_steps(as_source(s))) for s in sources])


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
        label, skills, warnings = _drive(DiskBackend(root), _source_steps(SkillSource("/", label)))
        for record in [*skills, *warnings]:
            record["path"] = str(root / record["path"].lstrip("/"))
        loaded.append((label, skills, warnings))
    return merge_sources(loaded)
