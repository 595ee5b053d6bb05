"""Which agent a LangGraph thread last ran, so that a view can resume that thread's pause.

A trace knows a paused run's thread id, not the agent object that must resume it. Agents built
by ``create_deep_agent`` note themselves here each time they run on a thread; the live view's
approval controls look the thread up. Held weakly (a deleted agent is forgotten) and bounded.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableConfig

from nbagents.tracing._pending import THREAD
from nbagents.tracing._recording import active_tracers, recording

if TYPE_CHECKING:
    from nbagents.tracing._tracer import Tracer
    from nbagents.tracing.model import Trace

__all__ = ["AnswerError", "agent_for", "paused_agent", "remember", "run_resumed", "waiting_thread"]

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


class AnswerError(ValueError):
    """Decisions that cannot be applied to a paused run; the message says why."""


def waiting_thread(trace: Trace) -> str | None:
    """The thread of the trace's paused run, if its last run is paused on one."""
    roots = trace.visible_roots()
    if not roots:
        return None
    last = roots[-1]
    if last.status != "interrupted" or last.error is not None:
        return None
    thread = last.attributes.get(THREAD)
    return str(thread) if thread is not None else None


def paused_agent(trace: Trace) -> tuple[Runnable[Any, Any], RunnableConfig]:
    """The agent and config to resume ``trace``'s paused run with, or ``AnswerError``."""
    thread = waiting_thread(trace)
    if thread is None:
        raise AnswerError("The run is not waiting for a decision any more.")
    found = agent_for(thread)
    if found is None:
        raise AnswerError(
            f"The agent that paused on thread {thread!r} is not known here: only agents built "
            "by create_deep_agent can be resumed from the view (or it was deleted). Answer in "
            "code: nbagents.pending_approvals(...)."
        )
    return found


def run_resumed(tracer: Tracer, agent: Any, command: Any, config: Any) -> Any:
    """``agent.invoke(command, config)`` recorded by ``tracer`` (once, even inside its block)."""
    tracer.trace.finished = False
    if any(t is tracer for t in active_tracers()):
        result = agent.invoke(command, config)
        return result
    try:
        with recording(tracer):
            return agent.invoke(command, config)
    finally:
        # A run kept in the history is saved again when it resumes: the same run, one record.
        from nbagents.history import save

        save(tracer.trace)
