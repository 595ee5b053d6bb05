"""Helpers of the ported upstream summarization tests (tests/test_stack_ported*.py): the
upstream tests' recording backend, conversation and ``wrap_model_call`` driver, on nbagents'
``SummarizationMiddleware`` and the scripted model."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any, cast

from langchain.agents.middleware import ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.messages import ToolMessage as Tool

from nbagents.backends import BackendProtocol, EditResult, FileDownloadResponse, WriteResult
from nbagents.middleware import SummarizationMiddleware
from nbagents.models import ScriptedChatModel, say

HISTORY = re.compile(r"/conversation_history/session_[0-9a-f]{32}\.md")


class RecordingBackend(BackendProtocol):
    """The upstream tests' mock backend: records writes, edits and downloads, and can fail."""

    def __init__(
        self,
        *,
        existing: str | None = None,
        fail: str = "",
        gate: asyncio.Event | None = None,
        started: asyncio.Event | None = None,
    ) -> None:
        self.existing = existing
        self.fail = fail  # "", "result" (an error result), "raise", "download"
        self.gate, self.started = gate, started
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
        if self.started is not None:
            self.started.set()
        if self.gate is not None:
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
