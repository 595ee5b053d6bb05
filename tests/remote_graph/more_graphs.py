"""More graphs the remote tests serve beside ``worker_graph.py``: none needs an API key.

- ``lead``: an nbagents deep agent on the server with a system prompt, whose first turn hands
  two jobs to its own ``worker`` sub-agent (the worker graph, run inside the server's run);
- ``asker``: an agent whose tool stops for a human (LangGraph's ``interrupt``);
- ``approver`` and ``approver_per_call``: agents whose ``deploy`` calls wait for a person's
  approval (``HumanInTheLoopMiddleware``, one interrupt per model turn or one per call): a job
  ``"prod"`` deploys to prod, ``"a and b"`` to both at once, ``"prod twice"`` to prod and then,
  once approved, again;
- ``approving_lead``: ``lead`` with ``approver`` as its worker: both parts wait for approval.
- ``plain``: a plain LangGraph graph, no ``create_agent``: a ``think`` node that calls the model
  itself and an ``act`` node (``ToolNode``) that runs the tool calls it asked for.

Every reply is a function of the conversation (``responder``), never a script position, so
one served graph answers any number of runs the same way.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt
from remote_graph.worker_graph import graph as worker_graph
from remote_graph.worker_graph import work

from nbagents import CompiledSubAgent, create_deep_agent
from nbagents.models import ScriptedChatModel, call, delegate, parallel, say

LEAD_PROMPT = "You lead two workers on the team's server."


def _task(messages: list[BaseMessage]) -> str:
    """The job the agent was given (its first user message; a system prompt may come first)."""
    return next(m.text for m in messages if isinstance(m, HumanMessage))


def _lead(agent: str, messages: list[BaseMessage]) -> Any:
    if not any(isinstance(m, AIMessage) for m in messages):
        jobs = [f"{_task(messages)} part {p}" for p in ("A", "B")]
        return parallel(*(delegate(j, "worker") for j in jobs))
    done = sorted(m.text for m in messages if isinstance(m, ToolMessage))
    return say(f"{agent} says: " + " / ".join(done))


worker: CompiledSubAgent = {
    "name": "worker",
    "description": "Does one job.",
    "runnable": worker_graph,
}
lead = create_deep_agent(
    ScriptedChatModel(responder=_lead, model_name="scripted-lead"),
    system_prompt=LEAD_PROMPT,
    subagents=[worker],
    name="lead",
)


@tool
def risky(action: str) -> str:
    """Do something that needs a human's go-ahead first."""
    answer = interrupt({"question": f"May I {action}?"})
    return f"{action}: {answer}"


def _asker(agent: str, messages: list[BaseMessage]) -> Any:
    if not any(isinstance(m, AIMessage) for m in messages):
        return call("risky", action=_task(messages))
    return say(f"{agent} says: {messages[-1].text}")


asker = create_agent(
    ScriptedChatModel(responder=_asker, model_name="scripted-asker"), tools=[risky], name="asker"
)


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    return f"deployed to {target}"


def _approver(agent: str, messages: list[BaseMessage]) -> Any:
    """Deploys to the target the job names, to both at once for ``"a and b"``; a job ending in
    ``" twice"`` deploys again once the first deploy is over. Then says what the deploys said."""
    job = _task(messages)
    targets = job.removesuffix(" twice").split(" and ")
    turns = sum(isinstance(m, AIMessage) for m in messages)
    if turns == 0:
        return parallel(*(call("deploy", target=t) for t in targets))
    if turns == 1 and job.endswith(" twice"):
        return call("deploy", target=f"{targets[0]} again")
    done = [m.text for m in messages if isinstance(m, ToolMessage)]
    return say(f"{agent} says: " + " / ".join(done))


def _gated(name: str, mode: Any) -> Any:
    return create_agent(
        ScriptedChatModel(responder=_approver, model_name="scripted-approver"),
        tools=[deploy],
        middleware=[HumanInTheLoopMiddleware({"deploy": True}, interrupt_mode=mode)],
        name=name,
    )


approver = _gated("approver", "batched")
approver_per_call = _gated("approver", "per_call")
approving_lead = create_deep_agent(
    ScriptedChatModel(responder=_lead, model_name="scripted-lead"),
    subagents=[{"name": "worker", "description": "Deploys.", "runnable": approver}],
    name="lead",
)


class PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _plain(agent: str, messages: list[BaseMessage]) -> Any:
    if not any(isinstance(m, AIMessage) for m in messages):
        return call("work", job=_task(messages))
    return say(f"plain says: {messages[-1].text}")


_plain_model = ScriptedChatModel(responder=_plain, model_name="scripted-plain").bind_tools([work])


def think(state: PlainState) -> dict[str, Any]:
    return {"messages": [_plain_model.invoke(state["messages"])]}


def _next(state: PlainState) -> str:
    last = state["messages"][-1]
    return "act" if isinstance(last, AIMessage) and last.tool_calls else END


plain = (
    StateGraph(PlainState)
    .add_node("think", think)
    .add_node("act", ToolNode([work]))
    .add_edge(START, "think")
    .add_conditional_edges("think", _next, ["act", END])
    .add_edge("act", "think")
    .compile(name="plain")
)
