"""Each agent's plan as the tracer follows it: the items of its latest ``write_todos`` call
(LangChain's todo list), each with when it was added, started and finished.

An item is known by its text: ``write_todos`` replaces the whole list, so an item that keeps
its text across calls keeps its times, and one that is gone from the newest list is gone from
the plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["PLAN_STATUSES", "loaded_memory", "next_plan"]

PLAN_STATUSES = ("pending", "in_progress", "completed")
"""The statuses of LangChain's todo items, in the order an item goes through them."""


def next_plan(previous: Sequence[Mapping[str, Any]], todos: Any, at: float) -> list[dict[str, Any]]:
    """The plan after a ``write_todos`` call with ``todos`` at ``at`` (seconds since the trace
    began): ``{"content", "status", "added", "started", "finished"}`` per item; a time is
    ``None`` until it happens, and a completed item that is reopened is no longer finished."""
    before = {item.get("content"): item for item in previous}
    plan: list[dict[str, Any]] = []
    for todo in todos if isinstance(todos, list) else ():
        if not isinstance(todo, Mapping) or not isinstance(todo.get("content"), str):
            continue
        status = todo.get("status")
        status = status if status in PLAN_STATUSES else "pending"
        old = before.get(todo["content"], {})
        started = old.get("started")
        if started is None and status != "pending":
            started = at
        finished = (old.get("finished") or at) if status == "completed" else None
        item = {"content": todo["content"], "status": status, "added": old.get("added", at)}
        plan.append(item | {"started": started, "finished": finished})
    return plan


def loaded_memory(update: Mapping[str, Any], key: str) -> dict[str, int] | None:
    """The memory files a state update loaded (path → characters), or ``None`` if it loaded
    none."""
    contents = update.get(key)
    if not isinstance(contents, Mapping):
        return None
    return {str(path): len(text) for path, text in contents.items() if isinstance(text, str)}
