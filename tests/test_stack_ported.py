"""deepagents' unit tests of its summarization middleware, ported to nbagents' own.

Each test names the upstream case it mirrors, from
``libs/deepagents/tests/unit_tests/middleware/test_summarization_middleware.py`` in
langchain-ai/deepagents (``factory::`` for its ``test_summarization_factory.py``). The cases
nbagents does not share are in ``DIFFERENCES``, each with a row in
docs/coming-from-deepagents.md. The middleware is driven as upstream drives it:
``wrap_model_call`` with a ``ModelRequest`` and a handler that records what the model is sent.
The trigger, token-counter and factory cases are in test_stack_ported_trigger.py; the
memory, tool-call patch, caching and stack cases in test_stack_ported_more.py.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import pytest
from langchain.agents.middleware import ExtendedModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages import ToolMessage as Tool
from support.summarizing import (
    HISTORY,
    RecordingBackend,
    conversation,
    middleware,
    run,
    summarizer,
    update_of,
)

from nbagents.middleware import SummarizationMiddleware

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
    TestWriteEditException::test_summarization_aborts_on_write_exception,
    ::test_async_summarization_aborts_on_write_exception,
    ::test_summarization_aborts_on_edit_exception and
    ::test_async_summarization_aborts_on_edit_exception. nbagents logs the failure where
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
