"""ScriptedChatModel: a real tool-calling chat model that replies from a script."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import ScriptExhaustedError, Turn, call, fail, parallel, say


@tool
def search(query: str) -> str:
    """Search the web for ``query``."""
    return f"results for {query}"


@tool
def fetch(url: str) -> str:
    """Fetch ``url``."""
    return url


def two_calls_model() -> ScriptedChatModel:
    turn = parallel(call("search", query="alpha"), call("fetch", url="https://b.example"))
    text = "Let me look both of these up for you, one search and one fetch."
    return ScriptedChatModel(
        script={"main": [Turn(text=text, tool_calls=turn.tool_calls), say("Both done.")]},
        model_name="scripted-test",
        stream_chunk_chars=7,
    )


def test_is_a_chat_model_with_bound_tools_that_emits_tool_calls() -> None:
    model = two_calls_model()
    assert isinstance(model, BaseChatModel)
    reply = model.bind_tools([search, fetch]).invoke("go")
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("search", {"query": "alpha"}),
        ("fetch", {"url": "https://b.example"}),
    ]
    assert all(c["id"] and c["id"].startswith("call_") for c in reply.tool_calls)
    assert len({c["id"] for c in reply.tool_calls}) == 2


def test_every_reply_reports_usage_and_model_name() -> None:
    model = two_calls_model().bind_tools([search, fetch])
    first = model.invoke([HumanMessage("go")])
    conversation = [
        HumanMessage("go"),
        first,
        *(ToolMessage("ok", tool_call_id=c["id"]) for c in first.tool_calls),
    ]
    second = model.invoke(conversation)
    assert second.text == "Both done."
    for reply in (first, second):
        usage = reply.usage_metadata
        assert usage is not None
        assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
        assert reply.response_metadata["model_name"] == "scripted-test"
    # The second turn reads a longer conversation, so its estimated input is larger.
    assert second.usage_metadata and first.usage_metadata
    assert second.usage_metadata["input_tokens"] > first.usage_metadata["input_tokens"]


def test_usage_can_be_scripted_exactly() -> None:
    model = ScriptedChatModel(
        script={"main": [say("hi", usage={"input_tokens": 7, "output_tokens": 3})]}
    )
    assert model.invoke("x").usage_metadata == {
        "input_tokens": 7,
        "output_tokens": 3,
        "total_tokens": 10,
    }


def aggregate(chunks: Iterable[AIMessageChunk]) -> AIMessageChunk:
    chunks = list(chunks)
    assert len(chunks) > 1, "the reply should arrive in several chunks"
    total = chunks[0]
    for chunk in chunks[1:]:
        total = total + chunk
    return total


def assert_same_message(streamed: AIMessageChunk, whole: AIMessage) -> None:
    assert streamed.content == whole.content
    assert streamed.tool_calls == whole.tool_calls
    assert streamed.usage_metadata == whole.usage_metadata
    assert streamed.response_metadata["model_name"] == whole.response_metadata["model_name"]


def test_stream_chunks_aggregate_to_the_invoked_message() -> None:
    model = two_calls_model().bind_tools([search, fetch])
    assert_same_message(aggregate(model.stream("go")), model.invoke("go"))


async def test_astream_chunks_aggregate_to_the_invoked_message() -> None:
    model = two_calls_model().bind_tools([search, fetch])
    chunks = [chunk async for chunk in model.astream("go")]
    assert_same_message(aggregate(chunks), await model.ainvoke("go"))


def test_streamed_text_arrives_in_pieces_through_callbacks() -> None:
    from langchain_core.callbacks import BaseCallbackHandler

    tokens: list[str] = []

    class Tokens(BaseCallbackHandler):
        def on_llm_new_token(self, token: str, **kwargs: object) -> None:
            tokens.append(token)

    model = ScriptedChatModel(script={"main": ["one two three four"]}, stream_chunk_chars=4)
    list(model.stream("go", config={"callbacks": [Tokens()]}))
    assert [t for t in tokens if t] == ["one ", "two ", "thre", "e fo", "ur"]


def test_calling_a_tool_that_is_not_bound_is_a_clear_error() -> None:
    model = ScriptedChatModel(script={"main": [call("delete_everything", really=True)]})
    with pytest.raises(ValueError, match=r"Turn 1 of agent 'main' calls tool 'delete_everything'"):
        model.bind_tools([search]).invoke("go")
    with pytest.raises(ValueError, match=r"tools are: none"):
        model.invoke("go")


def test_running_out_of_script_names_agent_and_turn() -> None:
    model = ScriptedChatModel(script={"main": ["only reply"]})
    conversation = [HumanMessage("go"), AIMessage("only reply"), HumanMessage("and?")]
    with pytest.raises(ScriptExhaustedError, match=r"agent 'main'.*1 turn\(s\).*turn 2"):
        model.invoke(conversation)


def test_an_agent_without_script_is_named_with_what_is_scripted() -> None:
    model = ScriptedChatModel(script={"main": ["a"], "writer": ["b"]})
    config = {"metadata": {"lc_agent_name": "critic"}}
    with pytest.raises(ScriptExhaustedError, match=r"no script for agent 'critic'.*turn 1.*"):
        model.invoke("review this", config=config)


def test_replies_by_task_are_deterministic_across_threads() -> None:
    model = ScriptedChatModel(
        script={
            "researcher": {
                "Research cats": ["Cats sleep a lot."],
                "Research dogs": ["Dogs bark."],
                "*": ["Something else."],
            }
        },
        latency=0.05,
    )
    config = {"metadata": {"lc_agent_name": "researcher"}}
    tasks = ["Research dogs", "Research cats", "Research owls"] * 4
    with ThreadPoolExecutor(max_workers=len(tasks)) as pool:
        replies = list(pool.map(lambda t: model.invoke(t, config=config).text, tasks))
    expected = {"Research cats": "Cats sleep a lot.", "Research dogs": "Dogs bark."}
    assert replies == [expected.get(t, "Something else.") for t in tasks]


def test_a_task_key_may_be_a_unique_part_of_the_description() -> None:
    model = ScriptedChatModel(script={"main": {"cats": ["meow"], "dogs": ["woof"]}})
    assert model.invoke("Tell me about dogs, briefly").text == "woof"
    with pytest.raises(ScriptExhaustedError, match="matches several script keys"):
        model.invoke("cats and dogs")


def test_fail_makes_the_model_raise() -> None:
    model = ScriptedChatModel(script={"main": [fail("provider is down")]})
    with pytest.raises(RuntimeError, match="provider is down"):
        model.invoke("go")


def test_a_responder_covers_what_the_script_lacks() -> None:
    model = ScriptedChatModel(
        responder=lambda agent, messages: f"{agent} echoes {messages[-1].text}"
    )
    assert model.invoke("ping").text == "main echoes ping"


@pytest.mark.parametrize("script", [["one"], "one", {1: ["one"]}])
def test_a_script_of_the_wrong_shape_says_what_a_script_looks_like(script: Any) -> None:
    with pytest.raises(ValueError, match=r"A script maps each agent's name to its replies") as info:
        ScriptedChatModel(script=script)
    assert "script={'main': [" in str(info.value)


def test_direct_calls_answer_by_the_conversation_so_far() -> None:
    """Outside an agent the turn is still the number of AI messages given: documented, kept."""
    model = ScriptedChatModel(script={"main": ["one", "two"]})
    first = model.invoke("hi")
    assert first.content == "one"
    assert model.invoke("hi").content == "one"
    assert model.invoke([HumanMessage("hi"), first, HumanMessage("and?")]).content == "two"


def test_a_turn_reports_reasoning_and_cached_tokens_as_providers_do() -> None:
    usage = {"input_tokens": 900, "output_tokens": 1400, "reasoning": 1200, "cache_read": 600}
    model = ScriptedChatModel(script={"main": [say("Done.", usage=usage)]})
    with nbagents.trace(display=False) as t:
        create_deep_agent(model).invoke({"messages": [("user", "Think hard.")]})
    (call,) = [s for s in t.walk() if s.kind == "model"]
    assert (call.usage.input, call.usage.output) == (900, 1400)
    assert (call.usage.reasoning, call.usage.cache_read) == (1200, 600)
    assert t.token_usage()["reasoning_tokens"].tolist() == [1200]
