"""The run history under stress: several processes saving at once, a process killed mid-save,
and every way the file can fail (locked, read-only, full, damaged, newer) — each one warning,
the run and its trace untouched."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.history import RunStore, RunStoreWarning, run_id_of

pytestmark = pytest.mark.slow  # each test saves runs from other processes

WORKER = Path(__file__).parent / "support" / "history_worker.py"


def worker(store: Path, count: int, *args: str, prefix: list[str] | None = None) -> list[str]:
    return [*(prefix or []), sys.executable, str(WORKER), str(store), str(count), *args]


def run_agent_kept_in(store: RunStore | Path) -> tuple[nbagents.Trace, list[str]]:
    """One run saved to ``store``: its trace, and the history's warnings."""
    agent = create_deep_agent(ScriptedChatModel(script={"main": ["done"]}))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RunStoreWarning)
        with nbagents.trace(display=False, store=store) as t:
            result = agent.invoke({"messages": [("user", "go")]})
    assert result["messages"][-1].text == "done"  # the run itself is untouched
    assert t.status == "ok" and t.finished
    return t, [str(w.message) for w in caught if issubclass(w.category, RunStoreWarning)]


def test_two_processes_saving_fifty_runs_each_at_once(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    procs = [
        subprocess.Popen(worker(store, 50, "--label", label), stdout=subprocess.PIPE, text=True)
        for label in ("left", "right")
    ]
    outputs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    saved = [line.split()[1] for out in outputs for line in out.splitlines() if line[:3] == "ok "]
    assert not [line for out in outputs for line in out.splitlines() if line.startswith("warn")]
    history = RunStore(store)
    frame = history.list()
    assert len(frame) == 100 and sorted(frame["run_id"]) == sorted(saved)
    for label in ("left", "right"):
        assert len(history.infos(name=f"{label} *")) == 50
    assert all(len(history.load(run_id)) > 0 for run_id in saved)


def test_a_process_killed_while_saving_leaves_the_history_readable(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    proc = subprocess.Popen(worker(store, 0, "--blob", "400000"), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    for _ in range(3):  # three runs saved, the fourth under way when the kill comes
        assert proc.stdout.readline().startswith("ok ")
    time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    history = RunStore(store)
    ids = list(history.list()["run_id"])
    assert len(ids) >= 3
    assert all(history.load(run_id).finished for run_id in ids)
    _, problems = run_agent_kept_in(store)  # and it takes the next run
    assert problems == [] and len(history) == len(ids) + 1


def test_a_locked_history(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    run_agent_kept_in(store)
    other = sqlite3.connect(store, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        t, problems = run_agent_kept_in(RunStore(store, timeout=0.2))
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert len(problems) == 1 and "is locked by another process (waited 0.2 s)" in problems[0]
    assert len(RunStore(store)) == 1 and run_id_of(t) not in list(RunStore(store).list()["run_id"])


def test_a_damaged_history(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    store.write_bytes(b"these are not the runs you are looking for\n" * 200)
    _, problems = run_agent_kept_in(store)
    assert len(problems) == 1
    assert "is damaged (file is not a database): move it away" in problems[0]


def test_a_history_from_a_newer_nbagents_is_left_alone(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("PRAGMA user_version = 99")
    _, problems = run_agent_kept_in(store)
    assert len(problems) == 1 and "written by a newer nbagents (schema 99" in problems[0]
    with sqlite3.connect(store) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (99,)


def test_a_read_only_history(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    store = folder / "runs.sqlite"
    run_agent_kept_in(store)
    store.chmod(0o444)
    folder.chmod(0o555)
    # Root writes through permissions: drop the capabilities that let it.
    prefix = (
        ["setpriv", "--bounding-set=-dac_override,-dac_read_search"] if os.getuid() == 0 else []
    )
    try:
        done = subprocess.run(
            worker(store, 1, prefix=prefix), capture_output=True, text=True, timeout=120
        )
    finally:
        folder.chmod(0o755)
        store.chmod(0o644)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "done" and lines[-2].startswith("ok ")
    (problem,) = [line for line in lines if line.startswith("warning ")]
    assert "Cannot write to the run store" in problem and "check its permissions" in problem
    assert len(RunStore(store)) == 1


def test_a_full_disk(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    run_agent_kept_in(store)
    done = subprocess.run(
        worker(store, 1, "--blob", "300000", "--file-limit", "200000"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "done" and lines[-2].startswith("ok ")
    (problem,) = [line for line in lines if line.startswith("warning ")]
    assert "the run store" in problem and ("full" in problem or "disk I/O" in problem), problem
    history = RunStore(store)
    assert len(history) == 1 and all(history.load(i) for i in history.list()["run_id"])
