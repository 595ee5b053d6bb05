"""deepagents' unit tests of its summarization middleware, ported to nbagents' own.

Each test names the upstream case it mirrors, from
``libs/deepagents/tests/unit_tests/middleware/test_summarization_middleware.py`` in
langchain-ai/deepagents (``factory::`` for its ``test_summarization_factory.py``). The cases
nbagents does not share are in ``DIFFERENCES``, each with a row in
docs/coming-from-deepagents.md. The middleware is driven as upstream drives it:
``wrap_model_call`` with a ``ModelRequest`` and a handler that records what the model is sent.
The memory, tool-call patch, caching and stack cases are in test_stack_ported_more.py.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Callable, Sequence
from typing import Any, cast

import pytest
from langchain.agents.middleware import ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages import ToolMessage as Tool

from nbagents.backends import BackendProtocol, EditResult, FileDownloadResponse, WriteResult
from nbagents.middleware import SummarizationMiddleware, create_summarization_middleware
from nbagents.models import ScriptedChatModel, say

_MEDIA = "no offload of inline images or other media (see the summarization rows of the table)"
_TRUNCATION = "no truncation of old tool-call arguments (`truncate_args_settings`)"
_OVERFLOW = "no summarize-and-retry on a provider's `ContextOverflowError`"
DIFFERENCES = {
    **dict.fromkeys(
        [
            "test_offload_preserves_image_urls",
            "test_offload_rewrites_non_base64_data_url",
            "test_offload_rewrites_base64_images",
            "test_offload_media_uses_artifacts_root",
            "test_offload_per_block_upload_failure",
            "test_offload_upload_response_error_writes_placeholder",
            "test_offload_all_uploads_raise_writes_placeholders",
            "test_offload_rewrites_non_image_media",
            "test_offload_decode_failure_writes_placeholder",
            "test_offload_non_av_media_uses_file_reference",
            "test_offload_no_inline_media_returns_messages_unchanged",
            "test_offload_base64_alongside_non_standard_block",
            "test_upload_runs_once_before_offload_and_summary",
            "test_async_offloads_base64_images",
            "test_async_upload_response_error_writes_placeholder",
            "test_async_all_uploads_raise_writes_placeholders",
            "test_upload_response_error_classifies_batch_result",
            "test_factory_default_prompt_explains_media_references",
        ],
        _MEDIA,
    ),
    **dict.fromkeys(
        [
            "test_async_system_message_counts_for_truncate_trigger",
            "test_no_truncation_when_trigger_is_none",
            "test_truncate_old_write_file_tool_call",
            "test_truncate_old_edit_file_tool_call",
            "test_truncate_ignores_other_tool_calls",
            "test_truncate_respects_recent_messages",
            "test_truncate_with_token_keep_policy",
            "test_truncate_with_fraction_trigger_and_keep",
            "test_truncate_before_summarization",
            "test_truncate_without_summarization",
            "test_truncate_preserves_small_arguments",
            "test_truncate_mixed_tool_calls",
            "test_truncate_custom_truncation_text",
            "test_truncate_async_works",
            "test_token_counter_recounts_when_truncation_modifies_messages",
            "test_token_counter_recounts_when_truncation_modifies_messages_async",
        ],
        _TRUNCATION,
    ),
    "test_context_overflow_triggers_summarization": _OVERFLOW,
    "test_async_context_overflow_triggers_summarization": _OVERFLOW,
}
"""Upstream cases nbagents does not share, and why (rows of docs/coming-from-deepagents.md)."""

HISTORY = re.compile(r"/conversation_history/session_[0-9a-f]{32}\.md")


class RecordingBackend(BackendProtocol):
    """The upstream tests' mock backend: records writes, edits and downloads, and can fail."""

    def __init__(
        self, *, existing: str | None = None, fail: str = "", gate: asyncio.Event | None = None
    ) -> None:
        self.existing = existing
        self.fail = fail  # "", "result" (an error result), "raise", "download"
        self.gate = gate
        self.writes: list[tuple[str, str]] = []
        self.edits: list[tuple[str, str, str]] = []
        self.downloads: list[list[str]] = []

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        self.downloads.append(paths)
        if self.fail == "download":
            raise RuntimeError("download failed")
        if self.existing is None:
            return [FileDownloadResponse(path=p, error="file_not_found") for p in paths]
        return [FileDownloadResponse(path=p, content=self.existing.encode()) for p in paths]

    def write(self, file_path: str, content: str) -> WriteResult:
        self.writes.append((file_path, content))
        if self.fail == "raise":
            raise RuntimeError("network error")
        return WriteResult(error="storage unavailable") if self.fail == "result" else WriteResult()

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        self.edits.append((file_path, old_string, new_string))
        if self.fail == "raise":
            raise RuntimeError("network error")
        return EditResult(error="storage unavailable") if self.fail == "result" else EditResult()

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        return self.download_files(paths)

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        if self.gate is not None:  # waits for the summarizer: only a concurrent write ends
            await asyncio.wait_for(self.gate.wait(), timeout=5)
        return self.write(file_path, content)

    async def aedit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        return self.edit(file_path, old_string, new_string, replace_all)


def summarizer(text: str = "Test summary", **fields: Any) -> ScriptedChatModel:
    return ScriptedChatModel(responder=lambda _agent, _messages: say(text), **fields)


def middleware(
    backend: Any = None, *, model: Any = None, trigger: Any = ("messages", 5), **kw: Any
) -> SummarizationMiddleware:
    kw.setdefault("keep", ("messages", 2))
    backend = RecordingBackend() if backend is None else backend
    return SummarizationMiddleware(model or summarizer(), backend=backend, trigger=trigger, **kw)


def conversation(old: int = 6, recent: int = 2, *, summary: bool = False) -> list[BaseMessage]:
    """Upstream's ``make_conversation_messages``: human, AI with a tool call, tool result..."""
    messages: list[BaseMessage] = []
    if summary:
        kwargs = {"lc_source": "summarization"}
        messages.append(HumanMessage("Previous summary content", additional_kwargs=kwargs))
    for i in range(old):
        if i % 3 == 0:
            messages.append(HumanMessage(f"User message {i}", id=f"h{i}"))
        elif i % 3 == 1:
            calls = [{"id": f"c{i}", "name": "test_tool", "args": {}}]
            messages.append(AIMessage(f"AI response {i}", id=f"a{i}", tool_calls=calls))
        else:
            messages.append(Tool(f"Tool result {i}", tool_call_id=f"c{i - 1}", id=f"t{i}"))
    messages += [HumanMessage(f"Recent message {old + i}", id=f"r{i}") for i in range(recent)]
    return messages


def run(
    mw: SummarizationMiddleware,
    messages: Sequence[Any],
    *,
    state: dict[str, Any] | None = None,
    mode: str = "sync",
    **request: Any,
) -> tuple[Any, ModelRequest[Any] | None]:
    """``mw.wrap_model_call`` (or its async twin) on ``messages``: its result, and the request
    the model was sent (``None`` if it was not called)."""
    req = ModelRequest(
        model=summarizer(),
        messages=list(messages),
        state=cast(Any, {"messages": list(messages), **(state or {})}),
        runtime=None,
        **request,
    )
    sent: list[ModelRequest[Any]] = []

    def handler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        sent.append(r)
        return ModelResponse(result=[AIMessage("ok")])

    async def ahandler(r: ModelRequest[Any]) -> ModelResponse[Any]:
        return handler(r)

    if mode == "sync":
        result = mw.wrap_model_call(req, handler)
    else:
        result = asyncio.run(mw.awrap_model_call(req, ahandler))
    return result, (sent[0] if sent else None)


def update_of(result: Any) -> dict[str, Any]:
    assert isinstance(result, ExtendedModelResponse)
    assert result.command is not None and isinstance(result.command.update, dict)
    return result.command.update


# -- the offload ---------------------------------------------------------------------------------


def test_the_backend_and_the_history_directory_are_kept() -> None:
    # upstream: TestSummarizationMiddlewareInit::test_init_with_backend
    backend = RecordingBackend()
    mw = middleware(backend)
    assert mw.backend is backend
    assert mw.history_dir == "/conversation_history"


def test_langchains_deprecated_arguments_still_work() -> None:
    """upstream: TestSummarizationMiddlewareInit::
    test_langchain_deprecated_kwargs_are_forwarded."""
    with pytest.warns(DeprecationWarning, match="max_tokens_before_summary|messages_to_keep"):
        mw = SummarizationMiddleware(
            summarizer(),
            backend=RecordingBackend(),
            max_tokens_before_summary=100,
            messages_to_keep=5,
        )
    assert mw.trigger == ("tokens", 100)
    assert mw.keep == ("messages", 5)


def test_an_unknown_argument_is_refused() -> None:
    # upstream: TestSummarizationMiddlewareInit::test_history_path_prefix_is_rejected
    with pytest.raises(TypeError, match="history_path_prefix"):
        SummarizationMiddleware(summarizer(), backend=RecordingBackend(), history_path_prefix="/h")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_summary_writes_the_folded_messages_to_the_backend(mode: str) -> None:
    """upstream: TestOffloadingBasic::test_offload_writes_to_backend,
    TestAsyncBehavior::test_async_offload_writes_to_backend and
    TestMarkdownFormatting::test_markdown_format_includes_message_content."""
    backend = RecordingBackend()
    result, _ = run(middleware(backend), conversation(), mode=mode)

    update_of(result)
    ((path, content),) = backend.writes
    assert HISTORY.fullmatch(path)
    assert "summarized at" in content
    assert '<message type="human">' in content and "User message 0" in content


def test_a_second_summary_appends_to_the_history_file() -> None:
    # upstream: TestOffloadingBasic::test_offload_appends_to_existing_content
    existing = "## 3 messages summarized at 2024-01-01T00:00:00+00:00\n\nearlier\n\n"
    backend = RecordingBackend(existing=existing)
    run(middleware(backend), conversation())

    ((_, old, new),) = backend.edits
    assert old == existing
    assert new.startswith(existing) and new.count("summarized at") == 2


def test_a_tool_heavy_conversation_is_saved() -> None:
    # upstream: TestOffloadingBasic::test_typical_tool_heavy_conversation
    search = [{"id": "tc1", "name": "search", "args": {"q": "python"}}]
    fetch = [{"id": "tc2", "name": "fetch", "args": {"url": "..."}}]
    messages = [
        HumanMessage("Search for Python tutorials"),
        AIMessage("I'll search.", tool_calls=search),
        *(Tool(f"Result {n}", tool_call_id="tc1") for n in (1, 2, 3)),
        AIMessage("Here are some tutorials."),
        HumanMessage("Show me the first one"),
        AIMessage("Let me get it.", tool_calls=fetch),
        Tool("Tutorial content...", tool_call_id="tc2"),
    ]
    backend = RecordingBackend()
    result, _ = run(middleware(backend, trigger=("messages", 8), keep=("messages", 3)), messages)

    update_of(result)
    ((_, content),) = backend.writes
    assert "Search for Python tutorials" in content


@pytest.mark.parametrize("first", ["New question 1", "User message 0"])
def test_an_earlier_summary_is_not_saved_again(first: str) -> None:
    """upstream: TestOffloadingBasic::test_second_summarization_after_first and
    TestOffloadingBasic::test_filters_previous_summary_messages."""
    if first == "User message 0":
        messages = conversation(summary=True)
    else:
        summary = HumanMessage("First summary...", additional_kwargs={"lc_source": "summarization"})
        pairs = [(HumanMessage(f"New question {n}"), AIMessage(f"Answer {n}")) for n in (1, 2, 3)]
        messages = [summary, *(m for pair in pairs for m in pair)]
    backend = RecordingBackend()
    run(middleware(backend), messages)

    ((_, content),) = backend.writes
    assert "Previous summary content" not in content and "First summary" not in content
    assert first in content


@pytest.mark.parametrize("earlier", [False, True])
def test_the_summary_names_the_history_file_and_is_marked(earlier: bool) -> None:
    """upstream: TestSummaryMessageFormat::test_summary_includes_file_path,
    ::test_summary_has_lc_source_marker and
    ::test_summary_includes_file_path_after_second_summarization. nbagents' wording differs:
    no ``<summary>`` tags (see the table)."""
    mw = middleware(model=summarizer("Test summary content"))
    result, sent = run(mw, conversation(summary=earlier))

    session = update_of(result)["_summarization_session_id"]
    assert sent is not None
    summary = sent.messages[0]
    assert f"/conversation_history/{session}.md" in summary.text
    assert "Test summary content" in summary.text
    assert summary.additional_kwargs.get("lc_source") == "summarization"


@pytest.mark.parametrize(
    ("fail", "existing", "mode"),
    [
        ("result", None, "sync"),
        ("result", None, "async"),
        ("raise", None, "sync"),
        ("raise", None, "async"),
        ("raise", "## earlier\n\n", "sync"),
        ("raise", "## earlier\n\n", "async"),
    ],
)
def test_a_history_that_cannot_be_saved_still_summarizes(
    fail: str, existing: str | None, mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    """upstream: TestSummaryMessageFormat::test_summarization_aborts_on_backend_failure,
    TestBackendFailureHandling::test_summarization_aborts_on_write_failure and
    ::test_summarization_aborts_on_write_exception, TestAsyncBehavior::test_async_aborts_on_failure,
    TestWriteEditException (write and edit, sync and async). nbagents logs the failure where
    upstream also raises a ``UserWarning`` (see the table)."""
    backend = RecordingBackend(fail=fail, existing=existing)
    with caplog.at_level(logging.WARNING, logger="nbagents.middleware._summarization"):
        result, sent = run(middleware(backend), conversation(), mode=mode)

    update_of(result)
    assert sent is not None and "could not be saved" in sent.messages[0].text
    assert "/conversation_history/" not in sent.messages[0].text
    assert "Could not save the summarized history" in caplog.text


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_download_that_raises_starts_the_file(mode: str) -> None:
    """upstream: TestDownloadFilesException::
    test_summarization_continues_on_download_files_exception and
    ::test_async_summarization_continues_on_download_files_exception."""
    backend = RecordingBackend(fail="download")
    result, _ = run(middleware(backend), conversation(), mode=mode)

    update_of(result)
    assert len(backend.downloads) == 1 and len(backend.writes) == 1


@pytest.mark.parametrize(
    ("trigger", "keep", "mode"),
    [
        (("messages", 100), ("messages", 3), "sync"),
        (("messages", 100), ("messages", 3), "async"),
        (("messages", 3), ("messages", 10), "sync"),
        (("messages", 3), ("messages", 10), "async"),
    ],
)
def test_nothing_is_summarized_below_the_trigger_or_with_nothing_to_fold(
    trigger: Any, keep: Any, mode: str
) -> None:
    """upstream: TestNoSummarizationTriggered::test_no_offload_when_below_threshold,
    TestCutoffIndexEdgeCases::test_async_no_summarization_when_not_triggered,
    ::test_no_summarization_when_cutoff_index_zero and
    ::test_async_no_summarization_when_cutoff_index_zero."""
    backend = RecordingBackend()
    messages = conversation(3, 2) if trigger[1] == 100 else conversation(3, 0)
    result, sent = run(middleware(backend, trigger=trigger, keep=keep), messages, mode=mode)

    assert not isinstance(result, ExtendedModelResponse)
    assert sent is not None and sent.messages == messages
    assert backend.writes == []


# -- the history file's session ------------------------------------------------------------------


def test_a_session_id_is_made_and_kept_in_the_state() -> None:
    # upstream: TestSessionIdResolution::test_generates_and_persists_session_id
    backend = RecordingBackend()
    result, _ = run(middleware(backend), conversation())

    ((path, _),) = backend.writes
    assert HISTORY.fullmatch(path)
    assert path == f"/conversation_history/{update_of(result)['_summarization_session_id']}.md"


def test_the_session_id_in_the_state_is_reused() -> None:
    # upstream: TestSessionIdResolution::test_reuses_persisted_session_id
    backend = RecordingBackend()
    state = {"_summarization_session_id": "session_deadbeef"}
    run(middleware(backend), conversation(), state=state)

    assert [p for p, _ in backend.writes] == ["/conversation_history/session_deadbeef.md"]


def test_independent_runs_do_not_share_a_history_file() -> None:
    """upstream: TestSessionIdResolution::
    test_independent_invocations_do_not_share_history_file."""
    backend = RecordingBackend()
    for _ in range(2):
        run(middleware(backend), conversation())

    paths = [p for p, _ in backend.writes]
    assert len(set(paths)) == 2 and all(HISTORY.fullmatch(p) for p in paths)


def test_three_summaries_in_a_row_each_save_only_their_own_messages() -> None:
    """upstream: test_summarization_middleware.py::test_chained_summarization_cutoff_index. The
    scenario and what is saved and kept are upstream's; the state is nbagents': it holds the
    summary and the kept messages, not every message and a ``_summarization_event``."""
    backend = RecordingBackend()
    mw = middleware(backend)

    def labelled(start: int, stop: int) -> list[BaseMessage]:
        kinds = (HumanMessage, AIMessage)
        return [kinds[i % 2](f"S{i}", id=f"s{i}") for i in range(start, stop)]

    messages = labelled(0, 8)
    for round_, (saved, kept) in enumerate([(range(0, 6), (6, 7)), (range(6, 12), (12, 13))]):
        result, sent = run(mw, messages)
        assert sent is not None and [m.text for m in sent.messages[1:]] == [f"S{n}" for n in kept]
        assert re.findall(r"S\d+", backend.writes[round_][1]) == [f"S{n}" for n in saved]
        messages = [*update_of(result)["messages"][1:], *labelled(kept[1] + 1, kept[1] + 7)]
    result, sent = run(mw, messages)
    assert sent is not None and [m.text for m in sent.messages[1:]] == ["S18", "S19"]
    assert re.findall(r"S\d+", backend.writes[2][1]) == [f"S{n}" for n in range(12, 18)]


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
    """upstream: test_summarization_middleware.py::test_async_offload_and_summary_run_concurrently,
    without its timing: the write waits for the summarizer to start, so only a concurrent
    write finishes (a sequential one times out)."""
    gate = asyncio.Event()

    def summary(_agent: str, _messages: list[BaseMessage]) -> Any:
        gate.set()
        return say("summary")

    backend = RecordingBackend(gate=gate)
    mw = middleware(backend, model=ScriptedChatModel(responder=summary))
    result, _ = run(mw, conversation(), mode="async")

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
