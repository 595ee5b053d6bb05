"""Where nbagents now behaves as upstream deepagents does (issue: upstream parity).

- the caller's tags and metadata reach every sub-agent, also one that is not a LangGraph graph;
- sub-agent runs are marked in metadata (``ls_agent_type="subagent"``, LangSmith's filter), and
  no internal tag is added to what the user's tools and callbacks see as ``tags``;
- a structured response keeps the field order of its schema;
- ``SubAgentMiddleware.system_prompt`` is the section it adds to the main agent's prompt.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from pydantic import BaseModel

from nbagents import (
    ScriptedChatModel,
    SubAgentMiddleware,
    create_deep_agent,
    create_sub_agent,
    pending_approvals,
)
from nbagents.models import call, delegate, say
from nbagents.tracing import recording

CALLER = {"tags": ["team-a"], "metadata": {"customer_id": "c-42"}}


def test_a_plain_runnable_subagent_sees_the_callers_tags_and_metadata() -> None:
    seen: list[RunnableConfig] = []

    def child(state: dict[str, Any], config: RunnableConfig) -> dict[str, Any]:
        seen.append(config)
        return {"messages": [*state["messages"], AIMessage("done")]}

    spec = {"name": "child", "description": "d", "runnable": RunnableLambda(child)}
    model = ScriptedChatModel(script={"main": [delegate("Brief.", "child"), say("ok")]})
    agent = create_deep_agent(model, subagents=[spec])
    agent.invoke({"messages": [("user", "go")]}, CALLER)

    (config,) = seen
    assert config["metadata"]["customer_id"] == "c-42"
    assert "team-a" in config["tags"]
    assert config["metadata"]["ls_agent_type"] == "subagent"
    assert config["metadata"]["lc_agent_name"] == "child"


class TagSpy(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tool_tags: dict[str, list[str]] = {}
        self.tool_metadata: dict[str, dict[str, Any]] = {}

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = serialized.get("name", "")
        self.tool_tags[name] = list(tags or [])
        self.tool_metadata[name] = dict(metadata or {})


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"found {query}"


def test_subagent_runs_are_marked_in_metadata_not_in_the_users_tags() -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Find it.", "researcher"), say("ok")],
            "researcher": [call("lookup", query="x"), say("found")],
        }
    )
    researcher = {"name": "researcher", "description": "Finds.", "system_prompt": "Find."}
    agent = create_deep_agent(model, [lookup], subagents=[researcher])
    spy = TagSpy()
    with recording() as tracer:  # the tracer still finds the sub-agent without a tag
        agent.invoke({"messages": [("user", "go")]}, {**CALLER, "callbacks": [spy]})

    assert spy.tool_tags["lookup"].count("team-a") == 1  # passed on once, not duplicated
    assert not any(t.startswith("nbagents") for t in spy.tool_tags["lookup"])
    assert spy.tool_metadata["lookup"]["ls_agent_type"] == "subagent"
    assert spy.tool_metadata["lookup"]["customer_id"] == "c-42"
    assert "ls_agent_type" not in spy.tool_metadata["task"]  # the main agent's own call
    (record,) = tracer.trace.subagents
    assert (record.type, record.depth) == ("researcher", 1)
    lookup_span = next(s for s in tracer.trace.spans if s.name == "lookup")
    assert lookup_span.agent == "researcher"


class Verdict(BaseModel):
    verdict: str
    confidence: float
    alternatives: list[str]


def test_a_structured_response_keeps_the_schema_field_order() -> None:
    judge = {
        "name": "judge",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "response_format": Verdict,
    }
    model = ScriptedChatModel(
        script={
            "main": [delegate("Judge it.", "judge"), say("ok")],
            "judge": [
                call("Verdict", verdict="yes", confidence=0.9, alternatives=["no"]),
                say("judged"),
            ],
        }
    )
    result = create_deep_agent(model, subagents=[judge]).invoke({"messages": [("user", "go")]})
    (answer,) = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert list(json.loads(answer.text)) == ["verdict", "confidence", "alternatives"]
    assert answer.text.startswith('{"verdict": "yes"')


def test_the_middleware_exposes_the_prompt_section_it_adds() -> None:
    researcher = {"name": "researcher", "description": "Finds facts.", "system_prompt": "Find."}
    middleware = SubAgentMiddleware(default_model=ScriptedChatModel(), subagents=[researcher])
    assert middleware.system_prompt is not None
    assert "researcher" in middleware.system_prompt
    assert "Finds facts." in middleware.system_prompt
    silent = SubAgentMiddleware(
        default_model=ScriptedChatModel(), subagents=[researcher], system_prompt=None
    )
    assert silent.system_prompt is None


def test_create_sub_agent_builds_one_spec_on_its_own() -> None:
    model = ScriptedChatModel(script={"researcher": [call("lookup", query="x"), say("found x")]})
    spec: Any = {
        "name": "researcher",
        "description": "Finds.",
        "system_prompt": "Find.",
        "model": model,
        "tools": [lookup],
    }
    result = create_sub_agent(spec).invoke({"messages": [("user", "find x")]})
    assert result["messages"][-1].text == "found x"
    assert [m.text for m in result["messages"] if isinstance(m, ToolMessage)] == ["found x"]
    # On its own: no task tool to delegate with.
    (first_call,) = [m for m in result["messages"] if isinstance(m, AIMessage) and m.tool_calls]
    assert [c["name"] for c in first_call.tool_calls] == ["lookup"]


def test_create_sub_agent_takes_a_response_format_override() -> None:
    judge: Any = {
        "name": "judge",
        "description": "Judges.",
        "system_prompt": "Judge.",
        "model": ScriptedChatModel(
            script={"judge": [call("Verdict", verdict="yes", confidence=1.0, alternatives=[])]}
        ),
    }
    result = create_sub_agent(judge, response_format=Verdict).invoke({"messages": [("user", "?")]})
    assert result["structured_response"] == Verdict(verdict="yes", confidence=1.0, alternatives=[])


def test_create_sub_agent_needs_a_model_and_keeps_its_approvals() -> None:
    with pytest.raises(ValueError, match="'critic' names no 'model'"):
        create_sub_agent({"name": "critic", "description": "d", "system_prompt": "p"})
    spec: Any = {
        "name": "researcher",
        "description": "Finds.",
        "system_prompt": "Find.",
        "model": ScriptedChatModel(script={"researcher": [call("lookup", query="x"), "done"]}),
        "tools": [lookup],
        "interrupt_on": {"lookup": True},
    }
    paused = create_sub_agent(spec).invoke({"messages": [("user", "find x")]})
    (request,) = pending_approvals(paused)
    assert (request.tool, request.args) == ("lookup", {"query": "x"})
