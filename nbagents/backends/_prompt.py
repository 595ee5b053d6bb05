"""Appending a section to the system prompt of a model request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ModelRequest, ModelResponse
from langchain_core.messages import SystemMessage


def with_prompt_section(request: ModelRequest[Any], section: str) -> ModelRequest[Any]:
    """``request`` with ``section`` after its system prompt."""
    if not section:
        return request
    current = request.system_message
    if current is None or not current.content:
        return request.override(system_message=SystemMessage(content=section))
    if isinstance(current.content, str):
        content: Any = f"{current.content}\n\n{section}"
    else:
        # Content blocks may carry provider settings (e.g. cache_control): keep them.
        content = [*current.content, {"type": "text", "text": section}]
    return request.override(system_message=current.model_copy(update={"content": content}))


class PromptSection:
    """Middleware mix-in: every model call gets ``system_prompt`` (if any) after the agent's
    system prompt. Put it before ``AgentMiddleware`` in the bases."""

    system_prompt: str | None

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(with_prompt_section(request, self.system_prompt or ""))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(with_prompt_section(request, self.system_prompt or ""))
