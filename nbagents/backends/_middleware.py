"""``FilesystemMiddleware``: the file tools on a backend, and the ``files`` state key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

from nbagents.backends._prompt import with_prompt_section
from nbagents.backends._protocol import BackendLike, FileData, check_backend
from nbagents.backends._state import StateBackend, files_reducer
from nbagents.backends._tools import build_file_tools

FILESYSTEM_PROMPT = """## Files

You have file tools: `ls`, `read_file`, `write_file`, `edit_file`, `glob` and `grep`. Paths are \
absolute and start with `/` (for example `/notes/plan.md`). Read a file before editing it; \
`edit_file` replaces exact text. Long files are read in pages: follow the offset the tool gives."""


class FilesState(AgentState):
    """State with the ``files`` key of the state backend, merged path by path."""

    # Annotated outermost, so tools that look for reducers (get_type_hints) find this one.
    files: Annotated[NotRequired[dict[str, FileData]], files_reducer]


class FilesystemMiddleware(AgentMiddleware[FilesState, Any]):
    """Gives an agent the file tools, working on ``backend``.

    ``backend`` is a backend instance, a backend class that needs no arguments, or a factory
    called with each tool call's runtime; the default, :class:`StateBackend`, keeps files in the
    conversation's state key ``files``.
    ``system_prompt`` is appended to the agent's system prompt (``None`` adds nothing).
    """

    state_schema = FilesState

    def __init__(
        self,
        *,
        backend: BackendLike | None = None,
        system_prompt: str | None = FILESYSTEM_PROMPT,
    ) -> None:
        super().__init__()
        self.backend: BackendLike = check_backend(
            backend if backend is not None else StateBackend()
        )
        self.system_prompt = system_prompt
        self.tools = build_file_tools(self.backend)

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
