"""A scripted chat model for upstream's ported tests: LangChain's ``GenericFakeChatModel``, which
replays the messages it is given, made to accept ``bind_tools`` (an agent binds its tools) and
to keep what each call was given in ``call_history``, which upstream's tests inspect."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import (
    GenericFakeChatModel as _LangChainFake,
)
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field


class GenericFakeChatModel(_LangChainFake):
    call_history: list[dict[str, Any]] = Field(default_factory=list)
    """One entry per call: ``{"messages": [...], "kwargs": {...}}``."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> GenericFakeChatModel:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.call_history.append({"messages": messages, "kwargs": {"stop": stop, **kwargs}})
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)
