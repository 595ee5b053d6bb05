"""An agent from ``create_deep_agent`` says what input it takes when given the wrong kind."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph

from nbagents import ScriptedChatModel, create_deep_agent


def agent() -> Any:
    return create_deep_agent(ScriptedChatModel(script={"main": ["hi"]}))


@pytest.mark.parametrize(
    ("payload", "given"),
    [
        ("hello", "the string 'hello'"),
        ([("user", "hello")], "a list (of messages?)"),
        (HumanMessage("hello"), "a single HumanMessage"),
    ],
)
async def test_wrong_input_names_the_expected_state(payload: Any, given: str) -> None:
    expected = "takes its state as input, a dict with a .messages. list.*given " + re.escape(given)
    with pytest.raises(TypeError, match=expected):
        agent().invoke(payload)
    with pytest.raises(TypeError, match=expected):
        await agent().ainvoke(payload)
    with pytest.raises(TypeError, match=expected):
        list(agent().stream(payload))


async def test_state_input_still_runs_and_the_agent_is_a_langgraph_graph() -> None:
    built = agent()
    assert isinstance(built, CompiledStateGraph)
    assert built.invoke({"messages": [("user", "hello")]})["messages"][-1].content == "hi"
    assert (await built.ainvoke({"messages": "hello"}))["messages"][-1].content == "hi"
    configured = built.with_config(recursion_limit=10)
    with pytest.raises(TypeError, match="'messages' list"):
        configured.invoke("hello")
