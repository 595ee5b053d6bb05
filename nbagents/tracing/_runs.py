"""What the tracer remembers about each run while it is open: its span, agent and parent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nbagents.tracing.model import Span

__all__ = ["AgentFrame", "RunFrame"]


@dataclass(eq=False, slots=True)
class AgentFrame:
    """What the tracer knows about one running agent (or sub-agent, or root run)."""

    span_id: str | None
    name: str
    depth: int
    spawn_id: str | None = None
    """The tool call id that spawned this sub-agent."""
    plain_graph: bool = False
    """A graph with no ``ls_integration`` metadata (not ``create_agent``/deepagents): all of its
    nodes are shown, not only the ones that are not agent plumbing."""
    state_input: Any = None
    updates: list[tuple[int, Any]] = field(default_factory=list)
    """Node outputs with their LangGraph step: to infer the state a ``task`` call saw."""

    def forget_state(self) -> None:
        """The agent ended: what it tracked to infer state diffs is no longer needed."""
        self.state_input = None
        self.updates = []


@dataclass(eq=False, slots=True)
class RunFrame:
    span: Span
    agent: AgentFrame
    """The agent this run belongs to (for agent and sub-agent spans: their own)."""
    step: int
    node_of: AgentFrame | None = None
    """Set when this run is a LangGraph node of ``node_of``'s graph."""
    subagent: Span | None = None
    """For a ``task`` run: the sub-agent span it spawned."""
    parent: RunFrame | None = None
    paused_child: bool = False
    """A child was interrupted: a graph that then ends normally has paused, not finished."""
