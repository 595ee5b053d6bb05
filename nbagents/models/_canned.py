"""``CannedChatModel``: the base of chat models whose answer is complete before it streams
(the scripted and the recording/replaying model), turning that one ``AIMessage`` into
``invoke`` results and ``stream`` chunks that merge back into exactly the same message."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import Any, NamedTuple

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

__all__ = ["Call", "CannedChatModel", "message_chunks"]


class Call(NamedTuple):
    """One call of a canned model, as ``BaseChatModel`` passes it to ``_generate``."""

    messages: list[BaseMessage]
    stop: list[str] | None
    run_manager: Any
    kwargs: Mapping[str, Any]


class CannedChatModel(BaseChatModel):
    """A chat model that produces each reply whole: subclasses say how, in ``_respond``."""

    stream_chunk_chars: int = 24
    """Size of the text pieces ``stream`` yields."""

    @abstractmethod
    def _respond(self, call: Call) -> AIMessage:
        """The reply to ``call.messages`` (``call.kwargs`` are the call's, e.g. bound ``tools``)."""

    @abstractmethod
    async def _arespond(self, call: Call) -> AIMessage:
        """``_respond`` for async runs."""

    # -- BaseChatModel hooks -------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._respond(Call(messages, stop, run_manager, kwargs))
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = await self._arespond(Call(messages, stop, run_manager, kwargs))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._respond(Call(messages, stop, run_manager, kwargs))
        for chunk in message_chunks(message, self.stream_chunk_chars):
            if run_manager and chunk.text:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        message = await self._arespond(Call(messages, stop, run_manager, kwargs))
        for chunk in message_chunks(message, self.stream_chunk_chars):
            if run_manager and chunk.text:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk


def message_chunks(message: AIMessage, size: int) -> Iterator[ChatGenerationChunk]:
    """``message`` as stream chunks that merge back into exactly ``message``.

    Text comes in pieces of ``size`` characters; tool calls, usage and metadata come with the
    last chunk.
    """
    content = message.content
    if isinstance(content, str):
        step = max(1, size)
        for start in range(0, len(content), step):
            piece = content[start : start + step]
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece, id=message.id))
        last_content: str | list[Any] = ""
    else:
        # Provider content blocks merge by index; handing them over whole keeps them intact.
        last_content = content
    calls = [
        ToolCallChunk(name=c["name"], args=json.dumps(c["args"]), id=c.get("id"), index=i)
        for i, c in enumerate(message.tool_calls)
    ]
    yield ChatGenerationChunk(
        message=AIMessageChunk(
            content=last_content,
            id=message.id,
            tool_call_chunks=calls,
            usage_metadata=message.usage_metadata,
            response_metadata=dict(message.response_metadata),
            additional_kwargs=dict(message.additional_kwargs),
            chunk_position="last",
        )
    )
