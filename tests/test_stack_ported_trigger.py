"""deepagents' unit tests of its summarization middleware's trigger, token counter and factory,
ported to nbagents' own: the rest of test_stack_ported.py (which holds ``DIFFERENCES``)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents.middleware import ExtendedModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages import ToolMessage as Tool
from support.summarizing import (
    RecordingBackend,
    conversation,
    middleware,
    run,
    summarizer,
    update_of,
)

from nbagents.middleware import create_summarization_middleware
from nbagents.models import ScriptedChatModel, say

# -- the trigger ---------------------------------------------------------------------------------


def test_the_system_prompt_counts_for_the_trigger_but_is_not_sent_as_a_message() -> None:
    # upstream: test_system_message_counts_for_trigger_only
    counted: list[list[BaseMessage]] = []

    def counter(messages: list[BaseMessage]) -> int:
        counted.append(messages)
        return len(messages)

    backend = RecordingBackend()
    mw = middleware(backend, trigger=("tokens", 3), keep=("messages", 1), token_counter=counter)
    messages = [HumanMessage("hi"), AIMessage("hello")]
    result, sent = run(mw, messages, system_message=SystemMessage("sys"))

    update_of(result)
    assert isinstance(counted[0][0], SystemMessage)
    assert sent is not None and sent.system_message is not None
    assert not any(isinstance(m, SystemMessage) for m in sent.messages)
    assert len(backend.writes) == 1


def test_the_tools_count_for_the_trigger_when_the_counter_takes_them() -> None:
    # upstream: test_async_tools_passed_to_token_counter_for_summarization
    seen = {"tools": False, "system": False}

    def counter(messages: list[BaseMessage], *, tools: list[Any] | None = None) -> int:
        seen["tools"] |= bool(tools)
        seen["system"] |= any(isinstance(m, SystemMessage) for m in messages)
        return 3 if seen["system"] else 2

    mw = middleware(trigger=("tokens", 3), keep=("messages", 1), token_counter=counter)
    tool = {"name": "t", "description": "d", "input_schema": {"type": "object"}}
    messages = [HumanMessage("hi"), AIMessage("hello")]
    result, sent = run(
        mw, messages, mode="async", system_message=SystemMessage("sys"), tools=[tool]
    )

    update_of(result)
    assert seen == {"tools": True, "system": True}
    assert sent is not None and not any(isinstance(m, SystemMessage) for m in sent.messages)


def test_a_fraction_trigger_and_keep_follow_the_models_profile() -> None:
    # upstream: test_profile_inference_triggers_summary
    def counter(messages: list[BaseMessage], **_: Any) -> int:
        return 200 * len(messages)

    model = summarizer(profile={"max_input_tokens": 1000})
    messages = [HumanMessage("Message 1"), AIMessage("Message 2")]
    messages += [HumanMessage("Message 3"), AIMessage("Message 4")]

    def outcome(trigger: float, keep: float) -> tuple[Any, list[str] | None, int]:
        backend = RecordingBackend()
        mw = middleware(
            backend,
            model=model,
            trigger=("fraction", trigger),
            keep=("fraction", keep),
            token_counter=counter,
        )
        result, sent = run(mw, messages)
        if not isinstance(result, ExtendedModelResponse):
            return result, None, len(backend.writes)
        assert sent is not None and "summarized" in sent.messages[0].text
        return result, [m.text for m in sent.messages[1:]], len(backend.writes)

    assert outcome(0.81, 0.5)[1:] == (None, 0)  # 800 tokens, below 810
    assert outcome(0.80, 0.5)[1:] == (["Message 3", "Message 4"], 1)
    assert outcome(0.80, 0.6)[1:] == (["Message 2", "Message 3", "Message 4"], 1)
    assert outcome(0.80, 0.8)[1:] == (None, 0)  # everything would be kept


class _AnthropicLike(ScriptedChatModel):
    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return {**super()._get_ls_params(stop=stop, **kwargs), "ls_provider": "anthropic"}


def test_the_usage_a_provider_reported_can_trigger_a_summary() -> None:
    # upstream: test_usage_metadata_trigger
    def reply(text: str, total: int, **kw: Any) -> AIMessage:
        usage = {"input_tokens": total - 1000, "output_tokens": 1000, "total_tokens": total}
        metadata = {"model_provider": "anthropic"}
        return AIMessage(text, response_metadata=metadata, usage_metadata=usage, **kw)  # type: ignore[arg-type]

    messages = [
        HumanMessage("msg1"),
        reply("msg2", 6000, tool_calls=[{"name": "tool", "args": {}, "id": "call1"}]),
        Tool("result", tool_call_id="call1"),
        reply("msg3", 7000),
        HumanMessage("msg4"),
        reply("msg5", 10_001),
    ]
    model = _AnthropicLike(responder=lambda _agent, _messages: say("summary"))
    backend = RecordingBackend()
    mw = middleware(backend, model=model, trigger=("tokens", 10_000), keep=("messages", 4))
    result, _ = run(mw, messages)

    update_of(result)
    assert len(backend.writes) == 1


def test_the_async_history_write_runs_while_the_summary_is_made() -> None:
    """upstream: test_async_offload_and_summary_run_concurrently, without its timing: the write
    and the summarizer each wait for the other to start, so only concurrent ones finish (done
    one after the other, the first times out)."""
    written, summarizing = asyncio.Event(), asyncio.Event()

    async def summarize(_messages: Sequence[BaseMessage]) -> str:
        summarizing.set()
        await asyncio.wait_for(written.wait(), timeout=5)
        return "summary"

    backend = RecordingBackend(gate=summarizing, started=written)
    result, _ = run(middleware(backend, summarizer=summarize), conversation(), mode="async")

    update_of(result)
    assert len(backend.writes) == 1


# -- the token counter ---------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_counter_runs_once_per_model_call(mode: str) -> None:
    """upstream: TestTokenCountingEfficiency::test_token_counter_called_once_per_model_call and
    ::test_token_counter_called_once_per_model_call_async."""
    calls: list[int] = []

    def counter(_messages: list[BaseMessage], **_: Any) -> int:
        calls.append(1)
        return 10

    mw = middleware(trigger=("tokens", 1_000_000), token_counter=counter)
    _, sent = run(mw, conversation(), mode=mode)

    assert sent is not None and len(calls) == 1


def _tools_probe(*_: Any, **kw: Any) -> int:
    return 99 if kw.get("tools") else 7


def _explicit(messages: list[BaseMessage], *, tools: Any = None) -> int:
    return _tools_probe(tools=tools)


def _var_keyword(messages: list[BaseMessage], **kw: Any) -> int:
    return _tools_probe(**kw)


def _without(messages: list[BaseMessage]) -> int:
    return 7


def _var_positional(messages: list[BaseMessage], *args: Any) -> int:
    return 7


class _Opaque:
    """A counter whose signature cannot be read."""

    def __init__(self, fn: Callable[..., int]) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> int:
        return self.fn(*args, **kwargs)

    @property
    def __signature__(self) -> inspect.Signature:
        raise ValueError("no signature")


@pytest.mark.parametrize(
    ("counter", "expected"),
    [
        (_explicit, 99),
        (_var_keyword, 99),
        (_without, 7),
        (_var_positional, 7),
        (_Opaque(lambda _messages, *, tools=None: 99 if tools else 7), 99),
        (_Opaque(lambda _messages: 7), 7),
    ],
)
def test_the_tools_reach_only_a_counter_that_takes_them(counter: Any, expected: int) -> None:
    """upstream: TestTokenCounterToolsProbe::test_accepts_tools_with_explicit_param,
    ::test_accepts_tools_with_var_keyword, ::test_rejects_tools_without_param,
    ::test_rejects_var_positional_only, ::test_returns_none_for_uninspectable_signature,
    ::test_uninspectable_counter_probes_with_tools,
    ::test_uninspectable_counter_falls_back_without_tools
    and ::test_counter_without_tools_param_is_called_without_tools; through whether the count
    (99 with the tools, 7 without) passes the trigger, instead of upstream's private helpers."""
    mw = middleware(trigger=("tokens", 50), token_counter=counter)
    result, sent = run(mw, conversation(), tools=[{"type": "function", "function": {"name": "x"}}])

    assert sent is not None
    assert isinstance(result, ExtendedModelResponse) is (expected >= 50)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_type_error_inside_the_counter_is_not_hidden(mode: str) -> None:
    """upstream: TestTokenCounterToolsProbe::test_in_body_typeerror_propagates_sync and
    ::test_in_body_typeerror_propagates_async."""

    def broken(_messages: list[BaseMessage], *, tools: Any = None) -> int:
        if tools is not None:
            raise TypeError("tool schema conversion failed")
        return 10

    mw = middleware(trigger=("tokens", 1_000_000), token_counter=broken)
    with pytest.raises(TypeError, match="tool schema conversion failed"):
        run(mw, conversation(), mode=mode, tools=[{"type": "function", "function": {"name": "x"}}])


# -- the factory ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "trigger", "keep"),
    [
        ({"max_input_tokens": 120_000}, ("fraction", 0.85), ("fraction", 0.10)),
        (None, ("tokens", 170_000), ("messages", 6)),
    ],
)
def test_the_factory_picks_deepagents_defaults(profile: Any, trigger: Any, keep: Any) -> None:
    """upstream: factory::test_factory_uses_profile_based_defaults and
    ::test_factory_uses_fallback_defaults_without_profile (their trigger and keep; nbagents has
    no argument truncation to configure)."""
    mw = create_summarization_middleware(summarizer(profile=profile), RecordingBackend())
    assert (mw.trigger, mw.keep) == (trigger, keep)


def test_the_factory_passes_its_settings_on() -> None:
    # upstream: factory::test_factory_surfaces_summarization_knobs
    def counter(messages: Sequence[Any]) -> int:
        return len(messages)

    mw = create_summarization_middleware(
        summarizer(profile={"max_input_tokens": 120_000}),
        RecordingBackend(),
        summary_prompt="custom summary prompt: {messages}",
        trim_tokens_to_summarize=123,
        token_counter=counter,
    )
    assert mw.summary_prompt == "custom summary prompt: {messages}"
    assert mw.trim_tokens_to_summarize == 123
    assert mw.token_counter is counter


def test_the_factory_settings_are_keyword_only() -> None:
    # upstream: factory::test_factory_summarization_knobs_are_keyword_only
    params = inspect.signature(create_summarization_middleware).parameters
    for name in ("summary_prompt", "trim_tokens_to_summarize", "token_counter"):
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY


def test_the_factory_refuses_a_model_name() -> None:
    # upstream: factory::test_factory_rejects_string_model
    with pytest.raises(TypeError, match="BaseChatModel"):
        create_summarization_middleware("openai:gpt-5", RecordingBackend())  # type: ignore[arg-type]
