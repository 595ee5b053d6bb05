"""A scripted chat model for upstream's ported tests: LangChain's ``GenericFakeChatModel``, which
replays the messages it is given, made to accept ``bind_tools`` (an agent binds its tools)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel as _LangChainFake,
)


class GenericFakeChatModel(_LangChainFake):
    def bind_tools(self, tools: Any, **kwargs: Any) -> GenericFakeChatModel:
        return self
