"""deepagents' unit tests of its tool-call patch middleware and of the stack
``create_deep_agent`` builds, ported to nbagents' own (the summarization cases, and the module
docstring saying how, are in test_stack_ported.py; memory's in test_stack_ported_memory.py).

Upstream files: ``test_middleware.py`` (``TestPatchToolCallsMiddleware``),
``test_end_to_end.py`` and ``test_graph.py``, under ``libs/deepagents/tests/unit_tests/``.
"""

from __future__ import annotations

from typing import Any, cast

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from nbagents import create_deep_agent
from nbagents.middleware import (
    PatchToolCallsMiddleware,
    SummarizationMiddleware,
    merge_by_name,
    patch_dangling_tool_calls,
)
from nbagents.models import ScriptedChatModel

_CACHING = "only Anthropic prompt caching is built; no Bedrock or Fireworks caching middleware"
DIFFERENCES = {
    **dict.fromkeys(
        [  # test_graph.py::TestPromptCachingWiring
            "test_main_and_general_purpose_agents_get_bedrock_prompt_caching",
            "test_bedrock_explicit_subagent_gets_prompt_caching",
            "test_bedrock_prompt_caching_is_optional_when_middleware_unavailable",
            "test_bedrock_prompt_caching_preserves_unrelated_import_errors",
            "test_main_and_general_purpose_agents_get_fireworks_prompt_caching",
            "test_explicit_subagent_gets_fireworks_prompt_caching",
            "test_fireworks_prompt_caching_is_optional_when_middleware_unavailable",
            "test_fireworks_prompt_caching_preserves_unrelated_import_errors",
            "test_fireworks_prompt_caching_ignores_unsupported_models",
        ],
        _CACHING,
    ),
    "test_same_name_subclass_with_exclusion_does_not_raise": (
        "no harness profiles; `excluded_middleware` is the caller's own and removes by name"
    ),
}
"""Upstream cases nbagents does not share, and why (rows of docs/coming-from-deepagents.md)."""


def _request(model: Any = None, contents: dict[str, str] | None = None) -> ModelRequest[Any]:
    return ModelRequest(
        model=model or ScriptedChatModel(),
        messages=[HumanMessage("hi")],
        system_message=SystemMessage("base"),
        state=cast(Any, {"messages": [], "memory_contents": contents or {}}),
    )


# -- the tool-call patch -------------------------------------------------------------------------

SYSTEM = SystemMessage("You are a helpful assistant.")


def _asks(call_id: str) -> AIMessage:
    call = {"id": call_id, "name": "get_events_for_days", "args": {"date_str": "2025-01-01"}}
    return AIMessage("I'm doing well, thank you!", tool_calls=[call])


@pytest.mark.parametrize(
    "messages",
    [
        [SYSTEM, HumanMessage("Hello, how are you?")],
        [SYSTEM, HumanMessage("Hi"), _asks("123"), ToolMessage("none", tool_call_id="123")],
    ],
)
def test_nothing_to_patch(messages: list[Any]) -> None:
    # upstream: TestPatchToolCallsMiddleware::test_first_message and ::test_no_missing_tool_calls
    assert patch_dangling_tool_calls(messages) is None


@pytest.mark.parametrize("ids", [["123"], ["123", "456"]])
def test_each_unanswered_call_is_answered_right_after_it(ids: list[str]) -> None:
    """upstream: TestPatchToolCallsMiddleware::test_missing_tool_call and
    ::test_two_missing_tool_calls; on the messages sent to the model (nbagents leaves the
    state as it is: see the table)."""
    messages: list[Any] = [SYSTEM, HumanMessage("Hello, how are you?")]
    for call_id in ids:
        messages += [_asks(call_id), HumanMessage("What is the weather in Tokyo?")]
    sent: list[ModelRequest[Any]] = []
    request = _request().override(messages=messages)

    def handler(r: ModelRequest[Any]) -> Any:
        sent.append(r)
        return []

    PatchToolCallsMiddleware().wrap_model_call(request, handler)

    (patched,) = sent
    expected = ["system", "human", *(["ai", "tool", "human"] * len(ids))]
    assert [m.type for m in patched.messages] == expected
    tools = [m for m in patched.messages if isinstance(m, ToolMessage)]
    assert [(t.tool_call_id, t.name) for t in tools] == [(i, "get_events_for_days") for i in ids]
    asked = patched.messages[2]
    assert isinstance(asked, AIMessage)
    assert asked.tool_calls[0]["args"] == {"date_str": "2025-01-01"}


class _FakeWithHistory(GenericFakeChatModel):
    """LangChain's fake chat model, recording what it is sent and taking any tools (upstream's
    ``FakeChatModelWithHistory``): the scripted model keeps no invalid tool calls."""

    sent: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.sent.append(messages)
        return super()._generate(messages, *args, **kwargs)


def test_an_invalid_tool_call_is_answered_on_the_next_turn() -> None:
    """upstream: test_end_to_end.py::test_invalid_tool_call_patched_on_next_turn. LangChain's
    agent answers an invalid call itself (with upstream's text) before nbagents' patch sees it."""
    truncated: Any = {
        "id": "call_truncated",
        "name": "search",
        "args": '{"query": "weath',
        "error": "Unterminated string",
        "type": "invalid_tool_call",
    }
    replies = [AIMessage("", invalid_tool_calls=[truncated]), AIMessage("Recovered.")]
    model = _FakeWithHistory(messages=iter(replies))
    agent = create_deep_agent(model, checkpointer=InMemorySaver())
    thread: Any = {"configurable": {"thread_id": "patch-invalid-tool-calls"}}
    agent.invoke({"messages": [HumanMessage("Run a tool")]}, thread)
    result = agent.invoke({"messages": [HumanMessage("Try again")]}, thread)

    patch = next(m for m in model.sent[1] if isinstance(m, ToolMessage))
    assert (patch.tool_call_id, patch.name) == ("call_truncated", "search")
    assert "could not be executed" in patch.text and "malformed or truncated" in patch.text
    assert any(
        isinstance(m, ToolMessage) and m.tool_call_id == "call_truncated"
        for m in result["messages"]
    )


# -- the stack -----------------------------------------------------------------------------------


def _named(name: str) -> AgentMiddleware[Any, Any]:
    middleware: AgentMiddleware[Any, Any] = type(name, (AgentMiddleware,), {})()
    return middleware


def test_merging_by_name_replaces_in_place_and_appends_the_rest_in_order() -> None:
    """upstream: test_graph.py::TestApplyUserMiddleware (all six: a match replaces in place, the
    others are appended in order, an empty list changes nothing, several replacements, a mix)."""
    a, b, c = _named("A"), _named("B"), _named("C")
    r_a, r_c, x, y = _named("A"), _named("C"), _named("X"), _named("Y")
    assert merge_by_name([a, b, c], []) == [a, b, c]
    assert merge_by_name([a, b, c], [r_c, x, r_a, y]) == [r_a, b, r_c, x, y]


@pytest.fixture
def stacks(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """The middleware each agent create_deep_agent builds is given, by agent name."""
    built: dict[str, list[Any]] = {}

    def record(*args: Any, **kwargs: Any) -> Any:
        built[kwargs.get("name") or "main"] = list(kwargs.get("middleware", ()))
        return create_agent(*args, **kwargs)

    for module in ("nbagents.subagents._factory", "nbagents.subagents._registry"):
        monkeypatch.setattr(f"{module}.create_agent", record)
    return built


def _summarizations(stack: list[Any]) -> list[Any]:
    return [m for m in stack if isinstance(m, SummarizationMiddleware)]


def test_the_callers_middleware_comes_before_prompt_caching(stacks: dict[str, list[Any]]) -> None:
    """upstream: test_graph.py::TestUserMiddlewareOverride::
    test_custom_middleware_precedes_prompt_caching."""
    custom = _named("CustomMW")
    create_deep_agent(ScriptedChatModel(), middleware=[custom])
    names = [m.name for m in stacks["main"]]
    assert names.index("CustomMW") < names.index("AnthropicPromptCachingMiddleware")


def test_a_summarization_of_the_same_name_replaces_the_default_in_place(
    stacks: dict[str, list[Any]],
) -> None:
    """upstream: test_graph.py::TestUserMiddlewareOverride::test_summarization_middleware_replaces_
    default, ::test_same_name_subclass_replaces_default and
    ::test_replacement_preserves_stack_position."""
    create_deep_agent(ScriptedChatModel())
    default_at = [m.name for m in stacks["main"]].index("SummarizationMiddleware")

    class Mine(SummarizationMiddleware):
        @property
        def name(self) -> str:
            return "SummarizationMiddleware"

    for custom in (
        SummarizationMiddleware(ScriptedChatModel(), trigger=("tokens", 50_000)),
        Mine(ScriptedChatModel()),
    ):
        create_deep_agent(ScriptedChatModel(), middleware=[custom])
        assert _summarizations(stacks["main"]) == [custom]
        assert stacks["main"][default_at] is custom


def test_a_summarization_subclass_of_another_name_joins_the_default(
    stacks: dict[str, list[Any]],
) -> None:
    # upstream: test_graph.py::TestUserMiddlewareOverride::test_diff_name_subclass_is_appended
    class CompactSummarizationMiddleware(SummarizationMiddleware):
        pass

    custom = CompactSummarizationMiddleware(ScriptedChatModel())
    create_deep_agent(ScriptedChatModel(), middleware=[custom])
    found = _summarizations(stacks["main"])
    assert len(found) == 2 and custom in found


def test_a_subagents_middleware_replaces_its_default(stacks: dict[str, list[Any]]) -> None:
    # upstream: test_graph.py::TestUserMiddlewareOverride::test_subagent_middleware_replaces_default
    custom = SummarizationMiddleware(ScriptedChatModel(), trigger=("tokens", 30_000))
    spec = {"name": "researcher", "description": "Researches.", "system_prompt": "Research."}
    create_deep_agent(ScriptedChatModel(), subagents=[{**spec, "middleware": [custom]}])  # type: ignore[list-item]
    assert _summarizations(stacks["researcher"]) == [custom]
    assert custom not in stacks["main"]
