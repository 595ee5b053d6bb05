"""Fork mode: a sub-agent that starts from its parent's conversation so far, then its task."""

from __future__ import annotations

import warnings
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say

GO = {"messages": [HumanMessage("Plan the launch.")]}
FORKER = {
    "name": "forker",
    "description": "Continues the conversation.",
    "system_prompt": "Continue.",
    "mode": "fork",
}


@tool
def lookup(topic: str) -> str:
    """Look ``topic`` up."""
    return f"facts about {topic}"


def main_then(turn: Any) -> list[Any]:
    """The main agent's script: look something up, then ``turn``, then answer."""
    return [call("lookup", topic="launch"), turn, say("done")]


def convo(call: Any) -> list[Any]:
    """The conversation a model call was given, without the system prompt."""
    return [m for m in call.messages if not isinstance(m, SystemMessage)]


def shape(messages: list[Any]) -> list[tuple[str, str]]:
    return [(type(m).__name__, m.text) for m in messages]


async def test_a_fork_starts_from_the_conversation_before_its_call(
    run_agent: Any, model_calls: Any
) -> None:
    model = ScriptedChatModel(
        script={
            "main": main_then(delegate("Draft the announcement.", "forker")),
            "forker": [say("Announcement drafted.")],
        }
    )
    agent = create_deep_agent(model, [lookup], subagents=[FORKER])
    result = await run_agent(agent, GO)
    (call_,) = model_calls.of("forker")
    first = convo(call_)
    assert shape(first) == [
        ("HumanMessage", "Plan the launch."),
        ("AIMessage", ""),
        ("ToolMessage", "facts about launch"),
        ("HumanMessage", "Draft the announcement."),
    ]
    assert first[1].tool_calls[0]["name"] == "lookup"
    # The parent's messages are copies: the fork never holds the parent's own objects.
    assert all(m is not p for m in first for p in result["messages"])
    answer = next(m for m in result["messages"] if isinstance(m, ToolMessage) and m.name == "task")
    assert answer.content == "Announcement drafted."
    state = answer.artifact["state"]
    assert state["passed"] == {"messages": "inherited 3 messages"}
    assert "messages" not in state["withheld"]
    # The parent's own conversation gets the answer alone, not the fork's copy of it.
    assert shape(result["messages"][:3]) == shape(first[:3])
    assert len(result["messages"]) == 6


async def test_parallel_forks_each_get_their_own_copy(run_agent: Any, model_calls: Any) -> None:
    model = ScriptedChatModel(
        script={
            "main": main_then(
                parallel(delegate("Part A.", "forker"), delegate("Part B.", "forker"))
            ),
            "forker": {
                "Part A.": [call("lookup", topic="a"), say("A done.")],
                "Part B.": [say("B done.")],
            },
        }
    )
    agent = create_deep_agent(model, [lookup], subagents=[FORKER])
    await run_agent(agent, GO)
    calls = [convo(c) for c in model_calls.of("forker")]
    assert len(calls) == 3
    by_task: dict[str, list[list[Any]]] = {}
    for messages in calls:
        by_task.setdefault(messages[3].text, []).append(messages)
    (a_first, a_second), (b_only,) = by_task["Part A."], by_task["Part B."]
    inherited = shape(b_only[:3])
    assert inherited == [
        ("HumanMessage", "Plan the launch."),
        ("AIMessage", ""),
        ("ToolMessage", "facts about launch"),
    ]
    assert shape(a_first[:3]) == inherited
    assert shape(b_only) == [*inherited, ("HumanMessage", "Part B.")]
    # A's own work stays in A's conversation.
    assert shape(a_second)[4:] == [("AIMessage", ""), ("ToolMessage", "facts about a")]
    assert not {id(m) for m in a_second} & {id(m) for m in b_only}


async def test_an_isolated_subagent_still_starts_from_its_task_alone(
    run_agent: Any, model_calls: Any
) -> None:
    isolated = {**FORKER, "mode": "isolated"}
    model = ScriptedChatModel(
        script={"main": main_then(delegate("Draft.", "forker")), "forker": [say("ok")]}
    )
    await run_agent(create_deep_agent(model, [lookup], subagents=[isolated]), GO)
    (first,) = model_calls.of("forker")
    assert shape(convo(first)) == [("HumanMessage", "Draft.")]


def test_the_trace_says_what_a_fork_inherited() -> None:
    model = ScriptedChatModel(
        script={"main": main_then(delegate("Draft.", "forker")), "forker": [say("ok")]}
    )
    tracer = Tracer()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a local fork is acted on: no warning any more
        agent = create_deep_agent(model, [lookup], subagents=[FORKER])
    agent.invoke(GO, {"callbacks": [tracer]})
    (record,) = tracer.trace.subagents
    assert record.passed == {"messages": "inherited 3 messages"}
    assert "messages" not in record.withheld
    assert "inherited 3 messages · passed" in tracer.trace.to_html()


async def test_a_compiled_subagent_forks_too(run_agent: Any) -> None:
    from langchain_core.runnables import RunnableLambda

    seen: list[list[Any]] = []

    def child(state: dict[str, Any]) -> dict[str, Any]:
        seen.append(list(state["messages"]))
        return {"messages": [*state["messages"], AIMessage("child done")]}

    spec = {"name": "c", "description": "d", "runnable": RunnableLambda(child), "mode": "fork"}
    model = ScriptedChatModel(script={"main": main_then(delegate("Do it.", "c"))})
    await run_agent(create_deep_agent(model, [lookup], subagents=[spec]), GO)
    (messages,) = seen
    assert [m.text for m in messages] == ["Plan the launch.", "", "facts about launch", "Do it."]
