"""Run history: every traced run saved in a SQLite file, listed, loaded back, pruned."""

from nbagents.history._keeping import (
    RunStoreWarning,
    StoreLike,
    delete_runs,
    keep_trace,
    load_run,
    prune_runs,
    reading_store,
    resolve_store,
    run_id_of,
    run_name_of,
    runs,
    save,
    store_path,
)
from nbagents.history._location import ENV_VAR, keep_runs, project_root
from nbagents.history._record import RunInfo
from nbagents.history._store import SCHEMA_VERSION, RunNotFoundError, RunStore, RunStoreError

__all__ = [
    "ENV_VAR",
    "SCHEMA_VERSION",
    "RunInfo",
    "RunNotFoundError",
    "RunStore",
    "RunStoreError",
    "RunStoreWarning",
    "StoreLike",
    "delete_runs",
    "keep_runs",
    "keep_trace",
    "load_run",
    "project_root",
    "prune_runs",
    "reading_store",
    "resolve_store",
    "run_id_of",
    "run_name_of",
    "runs",
    "save",
    "store_path",
]
