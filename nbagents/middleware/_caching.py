"""Prompt caching for Anthropic models, without importing ``langchain_anthropic`` otherwise."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

__all__ = ["PromptCachingMiddleware", "prompt_caching_for"]


def _is_anthropic(model: Any) -> bool:
    return type(model).__module__.startswith("langchain_anthropic")


class PromptCachingMiddleware(AgentMiddleware[Any, Any]):
    """``langchain_anthropic``'s ``AnthropicPromptCachingMiddleware``, for the calls that go to
    an Anthropic model; any other call passes through untouched.

    ``create_deep_agent`` gives it to every agent, as deepagents does. It is named after the
    middleware it stands for, so a real ``AnthropicPromptCachingMiddleware`` passed in
    ``middleware=`` replaces it, and ``excluded_middleware`` removes it by that name.
    ``langchain_anthropic`` is imported on the first Anthropic call: a model of that kind means
    it is installed, and an agent on another provider never pays for the import.
    """

    # It changes only the request's model settings, never the prompt: the sub-agent builder
    # reads this to keep writing the delegation section into the system prompt once.
    changes_prompt = False

    def __init__(self) -> None:
        super().__init__()
        self._delegate: AgentMiddleware[Any, Any] | None = None

    @property
    def name(self) -> str:
        return "AnthropicPromptCachingMiddleware"

    def _for(self, request: ModelRequest[Any]) -> AgentMiddleware[Any, Any] | None:
        if not _is_anthropic(request.model):
            return None
        if self._delegate is None:
            from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

            self._delegate = AnthropicPromptCachingMiddleware(unsupported_model_behavior="ignore")
        return self._delegate

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        delegate = self._for(request)
        if delegate is None:
            return handler(request)
        return delegate.wrap_model_call(request, handler)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        delegate = self._for(request)
        if delegate is None:
            return await handler(request)
        return await delegate.awrap_model_call(request, handler)


class _NoPromptCaching(PromptCachingMiddleware):
    """The stand-in for an agent whose model is not Anthropic's: same name, no hook."""

    wrap_model_call = AgentMiddleware.wrap_model_call  # type: ignore[assignment]
    awrap_model_call = AgentMiddleware.awrap_model_call  # type: ignore[assignment]


def prompt_caching_for(model: Any) -> PromptCachingMiddleware:
    """The prompt-caching middleware of an agent on ``model``.

    Every layer around the model call costs LangChain some work per call, so an agent whose
    model is not Anthropic's gets one without a hook (still in the stack by name, so it can be
    replaced or excluded as deepagents' can). A middleware that switches the model per call to
    an Anthropic one should be given ``PromptCachingMiddleware()`` itself.
    """
    return PromptCachingMiddleware() if _is_anthropic(model) else _NoPromptCaching()
