"""Saving each traced run into the history, and the functions a notebook reads it with."""

from __future__ import annotations

import os
import time
import uuid
import warnings
import weakref
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from nbagents.history._location import default_store_path
from nbagents.history._record import RunInfo, describe, git_commit, notebook_path
from nbagents.history._store import RunStore, RunStoreError
from nbagents.tracing.model import Trace

if TYPE_CHECKING:
    import pandas as pd

StoreLike: TypeAlias = "RunStore | str | os.PathLike[str] | bool | None"
"""Where a run is kept: a store, a path, ``None`` for the default, ``False`` for nowhere."""


class RunStoreWarning(UserWarning):
    """The run history could not save a run; the run and its trace are unaffected."""


# The store and the facts known at the start (run id, start, name, tags, notebook, commit) of
# each trace being kept: saved when its run ends, again if it resumes.
_kept: weakref.WeakKeyDictionary[Trace, tuple[RunStore, RunInfo]] = weakref.WeakKeyDictionary()


def resolve_store(store: StoreLike) -> RunStore | None:
    """The store ``store`` names; ``None`` when runs are not to be kept."""
    if store is False:
        return None
    if store is None or store is True:
        path = default_store_path()
        return None if path is None else RunStore(path)
    if isinstance(store, RunStore):
        return store
    if isinstance(store, str | os.PathLike):
        return RunStore(store)
    raise TypeError(
        f"store must be a RunStore, a path, None (the default history) or False (keep no "
        f"history), not {type(store).__name__}"
    )


def keep_trace(
    trace: Trace,
    *,
    store: StoreLike = None,
    name: str = "",
    tags: Sequence[str] = (),
    user_ns: dict[str, Any] | None = None,
) -> str | None:
    """Mark ``trace`` to be saved when its run ends (``save``); its run id, or ``None`` when
    no history is kept."""
    if isinstance(tags, str):
        raise TypeError("tags must be a list of strings, not one string")
    if not all(isinstance(tag, str) for tag in tags):
        raise TypeError(f"tags must be strings: {list(tags)!r}")
    chosen = resolve_store(store)
    if chosen is None:
        return None
    run_id = uuid.uuid4().hex[:12]
    _kept[trace] = (
        chosen,
        RunInfo(
            run_id=run_id,
            started_at=time.time(),
            name=name,
            tags=tuple(tags),
            notebook=notebook_path(user_ns),
            git_commit=git_commit(),
        ),
    )
    return run_id


def run_id_of(trace: Trace) -> str | None:
    """The id ``trace`` is saved under in the history, if it is kept."""
    kept = _kept.get(trace)
    return None if kept is None else kept[1].run_id


def run_name_of(trace: Trace) -> str | None:
    """The name ``trace`` is saved under in the history, if it is kept."""
    kept = _kept.get(trace)
    return None if kept is None else kept[1].name


def save(trace: Trace) -> bool:
    """Save ``trace`` as it stands, if it is kept. Never raises: a store that fails is one
    ``RunStoreWarning``. Whether it was saved."""
    if trace not in _kept:
        return False
    store, head = _kept[trace]
    try:
        store.save(describe(trace, head), trace)
    except Exception as error:  # the history must never cost the user the run
        # A RunStoreError names the store and the cause itself.
        where = (
            "" if isinstance(error, RunStoreError) else f" to {store.path}: {type(error).__name__}"
        )
        warnings.warn(f"The run was not saved{where}: {error}", RunStoreWarning, stacklevel=2)
        return False
    return True


# -- reading, for the notebook ---------------------------------------------------------------------


def reading_store(store: StoreLike) -> RunStore:
    """The store ``store`` names, to read from; an error saying so when no history is kept."""
    chosen = resolve_store(store)
    if chosen is None:
        raise RunStoreError(
            "No run history is kept (keep_runs(False) or NBAGENTS_RUNS=off): pass store= to "
            "read one."
        )
    return chosen


def runs(
    *,
    name: str | None = None,
    tag: str | None = None,
    status: str | None = None,
    since: datetime | str | float | None = None,
    until: datetime | str | float | None = None,
    limit: int | None = None,
    store: StoreLike = None,
) -> pd.DataFrame:
    """The saved runs, newest first, one row each: when, name, tags, status, duration,
    spawns, agent types, models, tokens, cost, notebook and git commit.

    Filter by ``name`` (``*`` matches any text), ``tag``, ``status`` (``ok``, ``error``,
    ``interrupted``), start time ``since``/``until``; ``limit`` the count. ``load_run(run_id)``
    gives back a run's trace.
    """
    return reading_store(store).list(
        name=name, tag=tag, status=status, since=since, until=until, limit=limit
    )


def load_run(run_id: str, *, store: StoreLike = None) -> Trace:
    """The trace of a saved run, as ``Trace.load`` gives it back from a file."""
    return reading_store(store).load(run_id)


def delete_runs(run_ids: str | Sequence[str], *, store: StoreLike = None) -> int:
    """Delete saved runs by id; how many were deleted."""
    return reading_store(store).delete(run_ids)


def prune_runs(
    *,
    older_than: timedelta | float | None = None,
    keep: int | None = None,
    store: StoreLike = None,
) -> int:
    """Delete runs older than ``older_than`` (a ``timedelta``, or days), and all but the
    newest ``keep``; how many were deleted."""
    return reading_store(store).prune(older_than=older_than, keep=keep)


def store_path(store: StoreLike = None) -> Path | None:
    """The file runs are saved to (``None`` when no history is kept)."""
    chosen = resolve_store(store)
    return None if chosen is None else chosen.path
