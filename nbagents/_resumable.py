"""Which agent ran a paused run, so that the run can be resumed from its trace.

A trace knows a paused run's thread id, not the agent object that must resume it, and one thread
id is often shared: notebooks pass ``{"thread_id": "1"}`` to every agent they build. So each agent
built by ``create_deep_agent`` gets a key of its own (``main-3``), puts it in the metadata of every
run it starts (:data:`AGENT_REF`, which the tracer copies onto the root span), and notes itself
here under (thread, key) each time it runs. :mod:`nbagents.approvals` looks the pair up. Held
weakly (a deleted agent is forgotten) and bounded. The sub-agent system writes it and knows
nothing of tracing, so it depends on LangChain alone.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final, cast

from langchain_core.runnables import Runnable, RunnableConfig

__all__ = ["AGENT_REF", "agent_for", "remember"]

AGENT_REF: Final = "nbagents_agent"
"""Run metadata: the key of the agent object that started the run (see :func:`remember`)."""

_KEPT = 256
_lock = threading.Lock()
_refs: weakref.WeakKeyDictionary[Runnable[Any, Any], str] = weakref.WeakKeyDictionary()
_numbers = itertools.count(1)
_by_run: OrderedDict[tuple[str, str], tuple[weakref.ref[Runnable[Any, Any]], RunnableConfig]] = (
    OrderedDict()
)


def remember(agent: Runnable[Any, Any], config: Mapping[str, Any] | None) -> RunnableConfig:
    """Note that ``agent`` runs on the thread ``config`` names (if it names one); returns the
    config to run with, whose metadata names the agent (:data:`AGENT_REF`)."""
    with _lock:
        ref = _refs.get(agent)
        if ref is None:
            ref = _refs[agent] = f"{agent.get_name()}-{next(_numbers)}"
    given = dict(config or {})
    named = cast(
        RunnableConfig, {**given, "metadata": {**(given.get("metadata") or {}), AGENT_REF: ref}}
    )
    thread = (given.get("configurable") or {}).get("thread_id")
    if thread in (None, ""):
        return named
    # Callbacks belong to the run that passed them; a resumption brings its own.
    kept = RunnableConfig(**{k: v for k, v in given.items() if k != "callbacks"})  # type: ignore[typeddict-item]
    with _lock:
        _by_run[(str(thread), ref)] = (weakref.ref(agent), kept)
        _by_run.move_to_end((str(thread), ref))
        while len(_by_run) > _KEPT:
            _by_run.popitem(last=False)
    return named


def agent_for(thread: str, ref: str) -> tuple[Runnable[Any, Any], RunnableConfig] | None:
    """The agent named ``ref`` that ran on ``thread`` and the config it ran with, if still
    alive."""
    with _lock:
        found = _by_run.get((thread, ref))
    if found is None:
        return None
    agent = found[0]()
    return None if agent is None else (agent, found[1])
