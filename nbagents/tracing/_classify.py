"""Which kind of span a LangChain run becomes, and which agent it belongs to.

These rules follow how LangChain v1 and LangGraph name, tag and nest their runs
(``ls_integration``, ``lc_agent_name``, ``langgraph_node``, ``langgraph_step``): when a release
changes that, this module changes, not the tracer's bookkeeping.

Kinds:

- ``agent``: a root run, or an agent graph started outside a ``task`` call;
- ``subagent``: the run directly under a ``task`` tool run (or a run nbagents tagged as a
  sub-agent spawn);
- ``task``: a tool run named ``task``; ``skill``: a ``read_file`` of a skill's ``SKILL.md`` (the
  agent opening that skill); ``model``: chat model and LLM calls; ``tool``: other tools and
  retrievers;
- ``chain``: LangGraph plumbing (node wrappers, middleware hooks, sequences), kept with
  ``hidden=True`` -- except a graph's own steps: every node of a plain LangGraph graph, and the
  nodes of an agent graph other than ``model``, ``tools`` and middleware hooks (``Name.hook``),
  and upstream's rubric grading passes (:mod:`nbagents.tracing._rubric`), whose grader graph
  is an ``agent``.

A new kind of tool span is decided in :func:`tool_kind`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from nbagents._contract import (
    READ_FILE_TOOL,
    TASK_TOOL,
    LimitReached,
    skill_of_path,
    spawn_call_id,
)
from nbagents.tracing._rubric import is_grading_pass
from nbagents.tracing._runs import AgentFrame, RunFrame
from nbagents.tracing.model import SpanKind, SpanStatus
from nbagents.tracing.span import AGENT_KINDS

__all__ = [
    "agent_of",
    "chain_end_status",
    "classify_chain",
    "error_status",
    "is_visible_node",
    "step_of",
    "tool_kind",
]


def classify_chain(
    name: str, md: Mapping[str, Any], parent: RunFrame | None
) -> tuple[SpanKind, AgentFrame, AgentFrame | None]:
    """The kind of a chain run, the agent it belongs to, and the graph it is a node of."""
    plain = not md.get("ls_integration")
    spawn_id = spawn_call_id(md)
    if parent is None:
        root = AgentFrame(None, str(md.get("lc_agent_name") or name), 0, spawn_id, plain)
        return "agent", root, None
    outer = parent.agent
    kind = parent.span.kind
    if kind == "task" or (spawn_id is not None and spawn_id != outer.spawn_id):
        call_id = parent.span.attributes.get("tool_call_id") if kind == "task" else None
        return "subagent", AgentFrame(None, name, outer.depth + 1, call_id or spawn_id, plain), None
    # An agent graph run as a step or tool, or the grader graph a rubric pass runs: upstream
    # hands that one the agent's own metadata, so only where it starts tells it apart.
    if (md.get("lc_agent_name") == name and name != outer.name and kind in ("tool", "chain")) or (
        kind == "chain" and is_grading_pass(parent.span.attributes)
    ):
        return "agent", AgentFrame(None, name, outer.depth + 1, outer.spawn_id, plain), None
    node_of = outer if parent.span.id == outer.span_id else None
    return "chain", outer, node_of


def is_visible_node(
    kind: SpanKind, name: str, md: Mapping[str, Any], node_of: AgentFrame | None
) -> bool:
    """A chain run that is one of its graph's own steps, shown rather than folded away."""
    return (
        kind == "chain"
        and node_of is not None
        and md.get("langgraph_node") == name
        and (node_of.plain_graph or not _agent_plumbing(name))
    )


def tool_kind(name: str, inputs: Any = None) -> SpanKind:
    """The kind of a tool run called ``name``: reading a skill's ``SKILL.md`` is a skill load."""
    if name == TASK_TOOL:
        return "task"
    path = inputs.get("file_path") if isinstance(inputs, Mapping) else None
    return "skill" if name == READ_FILE_TOOL and skill_of_path(path) is not None else "tool"


def agent_of(md: Mapping[str, Any], name: str, parent: RunFrame | None) -> AgentFrame:
    """The agent a model, tool or retriever run belongs to (a new root agent when it has none)."""
    if parent is not None:
        return parent.agent
    return AgentFrame(None, str(md.get("lc_agent_name") or name), 0)


def step_of(md: Mapping[str, Any], parent: RunFrame | None) -> int:
    """The LangGraph step a run belongs to (its parent's when LangGraph did not say)."""
    step = md.get("langgraph_step")
    if isinstance(step, int):
        return step
    return parent.step if parent is not None else -1


def chain_end_status(run: RunFrame, outputs: Any) -> SpanStatus:
    """An agent graph that ends on an interrupt has paused, not finished."""
    interrupted = isinstance(outputs, Mapping) and bool(outputs.get("__interrupt__"))
    if run.span.kind in AGENT_KINDS and (run.paused_child or interrupted):
        return "interrupted"
    return "ok"


def error_status(error: BaseException) -> SpanStatus:
    names = {cls.__name__ for cls in type(error).__mro__}
    if "ParentCommand" in names:
        return "ok"  # a Command routed to the parent graph: control flow, not a failure
    if "GraphBubbleUp" in names or "GraphInterrupt" in names:
        return "interrupted"
    if isinstance(error, LimitReached):
        return "limit"
    if isinstance(error, KeyboardInterrupt | asyncio.CancelledError):
        return "interrupted"  # stopped from outside (Ctrl-C, a cancelled task), not a failure
    return "error"


def _agent_plumbing(node: str) -> bool:
    """Nodes of a ``create_agent`` graph that only wrap what users see as model and tool calls."""
    return node in ("model", "tools") or "." in node or node.startswith("__")
