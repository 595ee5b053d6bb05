"""Every ``nbagents.trace()`` block is kept in the run history: listed, loaded back whole,
filtered, deleted, pruned; saved however the block ends, and again when a paused run resumes."""

from __future__ import annotations

import itertools
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.history import RunNotFoundError, RunStore, RunStoreError, project_root, run_id_of
from nbagents.history._record import git_commit
from nbagents.models import call, delegate, parallel

WRITER = {"name": "writer", "description": "Writes.", "system_prompt": "Write."}
CRITIC = {"name": "critic", "description": "Criticises.", "system_prompt": "Criticise."}
_threads = itertools.count()


def team(script: dict[str, Any], **kwargs: Any) -> Any:
    return create_deep_agent(ScriptedChatModel(script=script), subagents=[WRITER, CRITIC], **kwargs)


TWO_SPAWNS = {
    "main": [parallel(delegate("Draft it.", "writer"), delegate("Judge it.", "critic")), "done"],
    "writer": ["A draft."],
    "critic": ["Fine."],
}


def run_once(store: Path, script: dict[str, Any] = TWO_SPAWNS, **trace_args: Any) -> Any:
    with nbagents.trace(display=False, store=store, **trace_args) as t:
        team(script).invoke({"messages": [("user", "go")]})
    return t


def test_a_run_is_listed_and_loads_back_whole(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    t = run_once(store, name="prompt v1", tags=["baseline", "writer"])
    frame = nbagents.runs(store=store)
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["run_id"] == run_id_of(t)
    assert (row["name"], row["tags"], row["status"]) == ("prompt v1", ["baseline", "writer"], "ok")
    assert (row["spawns"], row["failures"], row["spans"]) == (2, 0, len(t))
    assert row["agent_types"] == ["main", "writer", "critic"]
    assert row["models"] == ["scripted-model"]
    usage = t.total_usage()
    assert (row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (
        usage.input,
        usage.output,
        usage.total,
    )
    assert row["duration"] == pytest.approx(t.duration)
    assert abs(row["started"] - datetime.now(UTC)) < timedelta(minutes=5)
    # Lossless: the same JSON as the trace in the notebook, as Trace.load gives back.
    assert nbagents.load_run(row["run_id"], store=store).to_json() == t.to_json()


def test_the_title_names_the_run_unless_a_name_is_given(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    run_once(store, title="Release check")
    run_once(store, title="Shown", name="Stored")
    assert list(nbagents.runs(store=store)["name"]) == ["Stored", "Release check"]


def test_a_run_that_fails_or_is_interrupted_is_kept(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    broken = {"main": [call("no_such_tool")]}

    @tool
    def explode() -> str:
        """Fail."""
        raise KeyboardInterrupt

    with (
        pytest.raises(ValueError, match="boom"),
        nbagents.trace(display=False, store=store, name="raised"),
    ):
        team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
        raise ValueError("boom")
    with (
        pytest.raises(KeyboardInterrupt),
        nbagents.trace(display=False, store=store, name="ctrl-c"),
    ):
        team({"main": [call("explode")]}, tools=[explode]).invoke({"messages": [("user", "go")]})
    with (
        pytest.raises(Exception),  # noqa: B017 - whatever the model's bad call raises
        nbagents.trace(display=False, store=store, name="agent error"),
    ):
        team(broken, tools=[explode]).invoke({"messages": [("user", "go")]}, {"recursion_limit": 3})
    frame = nbagents.runs(store=store)
    assert dict(zip(frame["name"], frame["status"], strict=True)) == {
        "raised": "ok",
        "ctrl-c": "interrupted",
        "agent error": "error",
    }


def test_filters(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    run_once(store, name="prompt v1", tags=["baseline"])
    run_once(store, name="prompt v2", tags=["candidate"])
    run_once(store, name="other", tags=["candidate", "slow"])
    names = lambda **f: list(nbagents.runs(store=store, **f)["name"])  # noqa: E731
    assert names() == ["other", "prompt v2", "prompt v1"]
    assert names(name="prompt v2") == ["prompt v2"]
    assert names(name="prompt*") == ["prompt v2", "prompt v1"]
    assert names(tag="candidate") == ["other", "prompt v2"]
    assert names(status="error") == []
    assert names(limit=1) == ["other"]
    assert names(since=datetime.now(UTC) - timedelta(hours=1)) == names()
    assert names(until="2000-01-01") == []
    with pytest.raises(ValueError, match="not an ISO date"):
        nbagents.runs(store=store, since="last tuesday")


def test_delete_and_prune(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    ids = [run_id_of(run_once(store, name=f"run {i}")) for i in range(4)]
    assert nbagents.delete_runs(ids[0], store=store) == 1
    assert nbagents.delete_runs([ids[0], "nope"], store=store) == 0
    with pytest.raises(RunNotFoundError, match=ids[0]):
        nbagents.load_run(ids[0], store=store)
    assert nbagents.prune_runs(keep=2, store=store) == 1
    assert list(nbagents.runs(store=store)["name"]) == ["run 3", "run 2"]
    assert nbagents.prune_runs(older_than=timedelta(days=1), store=store) == 0
    assert nbagents.prune_runs(older_than=0, store=store) == 2
    with pytest.raises(ValueError, match="older_than=, keep="):
        nbagents.prune_runs(store=store)


def test_no_history_when_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "runs.sqlite"
    run_once(store, name="kept")
    with nbagents.trace(display=False, store=False) as t:
        team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
    assert run_id_of(t) is None
    monkeypatch.setenv("NBAGENTS_RUNS", "off")
    with nbagents.trace(display=False) as t:
        team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
    assert run_id_of(t) is None
    with pytest.raises(RunStoreError, match="No run history is kept"):
        nbagents.runs()
    monkeypatch.setenv("NBAGENTS_RUNS", str(store))
    nbagents.keep_runs(False)
    try:
        with nbagents.trace(display=False) as t:
            team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
        assert run_id_of(t) is None
    finally:
        nbagents.keep_runs(True)
    assert list(nbagents.runs(store=store)["name"]) == ["kept"]


def test_the_default_store_is_at_the_project_root_and_out_of_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.email=a@b",
            "-c",
            "user.name=a",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "first",
        ],
        check=True,
    )
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    notebooks = repo / "notebooks"
    notebooks.mkdir()
    monkeypatch.chdir(notebooks)
    monkeypatch.delenv("NBAGENTS_RUNS")
    assert project_root() == repo.resolve()
    with nbagents.trace(display=False) as t:
        team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
    store = repo / ".nbagents" / "runs.sqlite"
    assert RunStore(store).info(run_id_of(t) or "").git_commit == head == git_commit()
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert ".nbagents" not in status and status.strip() == ""
    # The notebook's path, where JupyterLab tells the kernel.
    monkeypatch.setenv("JPY_SESSION_NAME", str(notebooks / "14_experimenting.ipynb"))
    with nbagents.trace(display=False) as t:
        team(TWO_SPAWNS).invoke({"messages": [("user", "go")]})
    assert RunStore(store).info(run_id_of(t) or "").notebook == str(
        notebooks / "14_experimenting.ipynb"
    )


@tool
def deploy(target: str) -> str:
    """Deploy to ``target``."""
    return f"deployed to {target}"


def test_a_paused_run_is_saved_again_when_it_resumes(tmp_path: Path) -> None:
    store = tmp_path / "runs.sqlite"
    agent = create_deep_agent(
        ScriptedChatModel(script={"main": [call("deploy", target="prod"), "done"]}),
        [deploy],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"history-{next(_threads)}"}}
    with nbagents.trace(display=False, store=store, name="deploy") as t:
        paused = agent.invoke({"messages": [("user", "ship")]}, config)
    assert list(nbagents.runs(store=store)["status"]) == ["interrupted"]
    requests = nbagents.pending_approvals(paused)
    requests.approve_all()
    nbagents.resume(t, requests)
    frame = nbagents.runs(store=store)
    assert list(frame["status"]) == ["ok"]  # the same record, not a second run
    assert nbagents.load_run(frame["run_id"][0], store=store).to_json() == t.to_json()


def test_bad_arguments_are_refused_before_the_run(tmp_path: Path) -> None:
    with (
        pytest.raises(TypeError, match="tags must be a list"),
        nbagents.trace(display=False, store=tmp_path / "r.sqlite", tags="x"),
    ):
        pass
    with (
        pytest.raises(TypeError, match="store must be a RunStore"),
        nbagents.trace(display=False, store=3),  # type: ignore[arg-type]
    ):
        pass
