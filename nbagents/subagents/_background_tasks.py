"""A background task's record (what the agent state keeps), and what its server says of it now.

Any failure to reach the server becomes a :class:`Refused` naming the server and the cause.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from typing import Any, TypedDict

from nbagents.subagents._remote import RemoteGraphRunnable
from nbagents.subagents._remote_pause import asked_for, waiting_for

__all__ = [
    "DONE",
    "WAITING",
    "BackgroundTask",
    "Refused",
    "cancel_runs",
    "client_of",
    "read_end",
    "settled",
    "waiting_text",
]

WAITING = "waiting"
"""A task whose run ended paused: its thread waits for a person's decision on the server."""
DONE = frozenset({"success", "error", "timeout", "interrupted", "cancelled", WAITING})
RESULT_CHARS = 20_000
_RUNS_LISTED = 100
"""Runs of one task's thread read to find those still to end (the server's default is 10)."""


class BackgroundTask(TypedDict):
    """One task launched in the background, as the agent state keeps it."""

    task_id: str
    """The server's thread id: each task has a thread of its own."""
    subagent: str
    description: str
    run_id: str
    """The latest run on the thread (a follow-up starts a new one)."""
    status: str
    """``pending``/``running`` until the run ends, then ``success``, ``error``, ``timeout``,
    ``interrupted``, ``cancelled``, or ``waiting`` when it paused for a decision (the server
    says ``success`` then; the thread's state says what it waits for)."""


class Refused(Exception):
    """A call the tool answers with an error message (unknown id or sub-agent, server error)."""


@contextmanager
def client_of(server: RemoteGraphRunnable) -> Iterator[Any]:
    """A client of the task's server; any failure of it becomes an error naming the server."""
    client = None
    try:
        client = server._sync_client()
        yield client
    except Refused:
        raise
    except Exception as error:
        raise Refused(str(server._explain(error))) from error
    finally:
        if client is not None:
            with suppress(Exception):
                client.close()


def cancel_runs(client: Any, task_id: str) -> bool:
    """Cancel every run of the task that has not ended; whether there was one.

    A task's thread is its own, so its runs still to end are the task's: the run going and,
    with ``enqueue``, the follow-ups queued behind it. The queued ones go first: ending the run
    ahead of them would start the next.
    """
    active = [
        run
        for run in client.runs.list(task_id, limit=_RUNS_LISTED)
        if run.get("status") in ("pending", "running")
    ]
    active.sort(key=lambda run: run.get("status") != "pending")
    for run in active:
        client.runs.cancel(task_id, str(run["run_id"]), wait=run.get("status") == "running")
    return bool(active)


def settled(
    client: Any, task: BackgroundTask, *, result: bool = True
) -> tuple[BackgroundTask, str | None]:
    """The task's fresh status, and (with ``result``) what it came to: what the sub-agent
    answered, or, for a run that ended paused, what it waits for. A task that ended otherwise
    is not asked about again."""
    if task["status"] == "success":
        return task, last_text(client.threads.get_state(task["task_id"])) if result else None
    if task["status"] == WAITING:
        # Still waiting, or answered on the server since: then its latest run says how it went.
        state = client.threads.get_state(task["task_id"])
        if waiting_for(state):
            return read_end(task, state)
        runs = client.runs.list(task["task_id"], limit=1)
        if not runs:
            return read_end(task, state)
        task = BackgroundTask(**{**task, "run_id": str(runs[0]["run_id"]), "status": "pending"})
    elif task["status"] in DONE:
        return task, None
    run = client.runs.get(task["task_id"], task["run_id"])
    fresh = BackgroundTask(**{**task, "status": str(run.get("status") or task["status"])})
    if fresh["status"] != "success":
        return fresh, None
    return read_end(fresh, client.threads.get_state(task["task_id"]))


def read_end(task: BackgroundTask, state: Mapping[str, Any]) -> tuple[BackgroundTask, str]:
    # A run that stopped at an interrupt ends "success" on the server: only the thread's state
    # tells it from a finished one, and its last message is then no answer at all.
    waiting = waiting_for(state)
    if waiting:
        return BackgroundTask(**{**task, "status": WAITING}), asked_for(waiting)
    return task, last_text(state)


def waiting_text(task: BackgroundTask, asked: str | None) -> str:
    return (
        f"Task {task['task_id']} ({task['subagent']}) is waiting for a person's decision on "
        f"its server ({asked}). It has stopped and will not go on by itself, so its work is "
        "not done: tell the user. Background tasks do not pass their pauses on; a person "
        f"answers it on the server (thread {task['task_id']}), or the job is delegated with "
        "the task tool, whose pauses come here."
    )


def last_text(thread_state: Mapping[str, Any]) -> str:
    values = thread_state.get("values") or {}
    messages = values.get("messages") if isinstance(values, Mapping) else None
    if not messages:
        return "(no messages)"
    last = messages[-1]
    content = last.get("content") if isinstance(last, Mapping) else last
    if isinstance(content, list):
        content = "".join(
            str(b.get("text", "")) if isinstance(b, Mapping) else str(b) for b in content
        )
    text = str(content)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "…"
