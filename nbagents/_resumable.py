"""Which agent a LangGraph thread last ran, so that a paused run on that thread can be resumed.

A trace knows a paused run's thread id, not the agent object that must resume it. Agents built
by ``create_deep_agent`` note themselves here each time they run on a thread, and
:mod:`nbagents.approvals` looks the thread up. Held weakly (a deleted agent is forgotten) and
bounded. The sub-agent system writes it and knows nothing of tracing, so it depends on
LangChain alone.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig

__all__ = ["agent_for", "remember"]

_KEPT = 256
_lock = threading.Lock()
_by_thread: OrderedDict[str, tuple[weakref.ref[Runnable[Any, Any]], RunnableConfig]] = OrderedDict()


def remember(agent: Runnable[Any, Any], config: Mapping[str, Any] | None) -> None:
    """Note that ``agent`` runs on the thread ``config`` names (if it names one)."""
    configurable = (config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread in (None, ""):
        return
    # Callbacks belong to the run that passed them; a resumption brings its own.
    kept = RunnableConfig(**{k: v for k, v in (config or {}).items() if k != "callbacks"})  # type: ignore[typeddict-item]
    with _lock:
        _by_thread[str(thread)] = (weakref.ref(agent), kept)
        _by_thread.move_to_end(str(thread))
        while len(_by_thread) > _KEPT:
            _by_thread.popitem(last=False)


def agent_for(thread: str) -> tuple[Runnable[Any, Any], RunnableConfig] | None:
    """The agent that last ran on ``thread`` and the config it ran with, if still alive."""
    with _lock:
        found = _by_thread.get(thread)
    if found is None:
        return None
    agent = found[0]()
    return None if agent is None else (agent, found[1])
