"""``FilesystemMiddleware``: the file tools on a backend, and the ``files`` state key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest

from nbagents.backends._composite import CompositeBackend
from nbagents.backends._evict import KEPT_IN_CONVERSATION, ToolResult, ashrink, shrink
from nbagents.backends._protocol import BackendLike, FileData, check_backend, resolve_backend
from nbagents.backends._state import StateBackend, files_reducer
from nbagents.backends._tools import build_file_tools
from nbagents.backends.prompts import FILESYSTEM_PROMPT, PromptSection


class FilesState(AgentState):
    """State with the ``files`` key of the state backend, merged path by path."""

    # Annotated outermost, so tools that look for reducers (get_type_hints) find this one.
    files: Annotated[NotRequired[dict[str, FileData]], files_reducer]


FilesystemState = FilesState
"""deepagents' name for :class:`FilesState`."""


def uses_state(backend: Any) -> bool:
    """Whether ``backend`` keeps files in the state: a state backend, or a composite routing to
    one. A factory (which nbagents also takes) may make one: it counts as one."""
    if isinstance(backend, StateBackend):
        return True
    if isinstance(backend, CompositeBackend):
        return any(uses_state(b) for b in (backend.default, *backend.routes.values()))
    return callable(backend) and not hasattr(backend, "read")


class FilesystemMiddleware(PromptSection, AgentMiddleware[FilesState, Any]):
    """Gives an agent the file tools, working on ``backend``.

    ``backend`` is a backend instance, a backend class that needs no arguments, or a factory
    called with each tool call's runtime; the default, :class:`StateBackend`, keeps files in the
    conversation's state key ``files`` (the middleware adds that key to the agent's state only
    when the backend keeps files there).
    ``system_prompt`` is appended to the agent's system prompt (``None`` adds nothing).
    ``custom_tool_descriptions`` replaces the descriptions of the tools it names.
    A result of another tool longer than ``tool_token_limit_before_evict`` tokens (about four
    characters each) is saved to ``/large_tool_results/<tool call id>`` on the backend and
    replaced by a note naming the file and a preview; ``None`` keeps every result whole.
    """

    state_schema: type[Any] = FilesState

    def __init__(
        self,
        *,
        backend: BackendLike | None = None,
        system_prompt: str | None = FILESYSTEM_PROMPT,
        custom_tool_descriptions: Mapping[str, str] | None = None,
        tool_token_limit_before_evict: int | None = 20_000,
    ) -> None:
        super().__init__()
        self.backend: BackendLike = check_backend(StateBackend if backend is None else backend)
        self.state_schema = FilesState if uses_state(self.backend) else AgentState
        self.system_prompt = system_prompt
        self.tools = build_file_tools(self.backend, custom_tool_descriptions)
        self._evict_tokens = tool_token_limit_before_evict

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolResult]
    ) -> ToolResult:
        result = handler(request)
        if not self._evict_tokens or request.tool_call["name"] in KEPT_IN_CONVERSATION:
            return result
        return shrink(result, resolve_backend(self.backend, request.runtime), self._evict_tokens)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolResult]],
    ) -> ToolResult:
        result = await handler(request)
        if not self._evict_tokens or request.tool_call["name"] in KEPT_IN_CONVERSATION:
            return result
        backend = resolve_backend(self.backend, request.runtime)
        return await ashrink(result, backend, self._evict_tokens)
