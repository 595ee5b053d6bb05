"""A scripted chat model for upstream's ported tests: LangChain's ``GenericFakeChatModel``, which
replays the messages it is given, made to accept ``bind_tools`` (an agent binds its tools) and
to keep what each call was given in ``call_history``, which upstream's tests inspect.

Streamed, it sends a message's tool calls with its last chunk (LangChain's fake drops them, so a
streamed agent would never call a tool), and ``stream_delimiter`` cuts the text into chunks at
each match of the pattern (``None``, the default: one chunk), as upstream's test model does.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel as _LangChainFake,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from pydantic import Field


class GenericFakeChatModel(_LangChainFake):
    call_history: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per call: ``{"messages": [...], "kwargs": {...}, "tools": [...]}``."""
    tools: Any = ()
    """What the last ``bind_tools`` was given."""
    stream_delimiter: str | None = None
    """A regular expression the streamed text is cut at (a group keeps the cut text)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> GenericFakeChatModel:
        self.tools = tools
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.call_history.append(
            {"messages": messages, "kwargs": {"stop": stop, **kwargs}, "tools": self.tools}
        )
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        message = self._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
        whole = message.generations[0].message
        assert isinstance(whole, AIMessage)
        text = whole.content if isinstance(whole.content, str) else ""
        if not text:
            pieces = [""]
        elif self.stream_delimiter is None:
            pieces = [text]
        else:
            pieces = [p for p in re.split(self.stream_delimiter, text) if p] or [""]
        for index, piece in enumerate(pieces):
            last = index == len(pieces) - 1
            chunk = ChatGenerationChunk(
                message=AIMessageChunk(
                    content=piece,
                    id=whole.id,
                    tool_calls=whole.tool_calls if last else [],
                    additional_kwargs=whole.additional_kwargs if last else {},
                    chunk_position="last" if last else None,
                )
            )
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
