"""The agent ``create_deep_agent`` returns: a LangGraph graph that says what input it takes.

``agent.invoke("hello")`` would otherwise fail deep inside LangGraph with
``InvalidUpdateError: Expected dict, got hello``, which does not tell a newcomer that the agent
wants its state, ``{"messages": [...]}``.
"""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from nbagents._resumable import remember
from nbagents.subagents._stop import ctrl_c_stops_subagents
from nbagents.subagents.limits import LimitGuard, Limits, guarded_config

__all__ = ["DeepAgentGraph", "check_input"]

# Each agent's sub-agent registry (for ``nbagents.rerun``) and run-wide limits. Kept beside the
# graph, not in it: LangGraph copies a graph from its constructor arguments.
_extras: weakref.WeakKeyDictionary[DeepAgentGraph, tuple[Any, Limits | None]] = (
    weakref.WeakKeyDictionary()
)

_EXAMPLE = 'agent.invoke({"messages": [("user", "hello")]})'


def check_input(name: str, payload: Any) -> None:
    """Raise ``TypeError`` for the inputs people try first that are not an agent state."""
    if isinstance(payload, str):
        given = f"the string {payload[:60]!r}"
    elif isinstance(payload, BaseMessage):
        given = f"a single {type(payload).__name__}"
    elif isinstance(payload, list | tuple):
        given = f"a {type(payload).__name__} (of messages?)"
    else:
        return
    raise TypeError(
        f"Agent {name!r} takes its state as input, a dict with a 'messages' list, "
        f"e.g. {_EXAMPLE}; it was given {given}."
    )


class DeepAgentGraph(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled agent graph whose ``invoke``/``stream`` (and async forms) check their input.

    A sync ``invoke``/``stream`` on the main thread also stops at once on Ctrl-C instead of
    waiting for running sub-agents (see :mod:`nbagents.subagents._stop`).
    """

    @classmethod
    def of(
        cls,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        registry: Any = None,
        limits: Limits | None = None,
    ) -> DeepAgentGraph:
        # The same construction as ``Pregel.copy``, which also keeps the class through
        # ``with_config`` and friends.
        attrs = {k: v for k, v in graph.__dict__.items() if k != "__orig_class__"}
        made = cls(**attrs)
        _extras[made] = (registry, limits or None)
        return made

    def copy(self, update: dict[str, Any] | None = None) -> DeepAgentGraph:
        # ``with_config`` and friends copy: the copy builds the same sub-agents.
        made = super().copy(update)
        if self in _extras:
            _extras[made] = _extras[self]
        return made

    @property
    def subagent_registry(self) -> Any:
        """The sub-agent types this agent delegates to, as built (``None`` when unknown)."""
        return _extras.get(self, (None, None))[0]

    def stream(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        return _stopping_on_ctrl_c(super().stream(input, self._run_config(input, config), **kwargs))

    def astream(  # type: ignore[override]
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        return super().astream(input, self._run_config(input, config), **kwargs)

    def _run_config(self, input: Any, config: RunnableConfig | None) -> RunnableConfig:
        """Check ``input``; ``config`` naming this agent, with a fresh guard of the run-wide
        limits: each run has its own budget."""
        check_input(self.name, input)
        named = remember(self, config)
        limits = _extras.get(self, (None, None))[1]
        return guarded_config(named, LimitGuard(limits, "the run")) if limits else named


def _stopping_on_ctrl_c(chunks: Iterator[Any]) -> Iterator[Any]:
    with ctrl_c_stops_subagents():
        yield from chunks
