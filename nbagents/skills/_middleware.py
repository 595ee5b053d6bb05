"""``SkillsMiddleware``: skills discovered once per run, listed in the system prompt."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import PrivateStateAttr
from langchain.tools import ToolRuntime
from langgraph.config import get_config
from langgraph.runtime import Runtime

from nbagents._contract import SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.backends import BackendLike, BackendProtocol, check_backend, is_backend
from nbagents.backends._prompt import with_prompt_section
from nbagents.skills._discovery import as_source, discover_skills
from nbagents.skills._prompt import (
    SKILLS_PROMPT_SECTION,
    check_template,
    describe_warning,
    skills_section,
)
from nbagents.skills._records import SkillMetadata, SkillSource


class SkillsState(AgentState):
    # Private as in deepagents: a run's output is the conversation, not the skills bookkeeping.
    skills_metadata: NotRequired[Annotated[list[SkillMetadata], PrivateStateAttr]]
    skills_load_errors: NotRequired[Annotated[list[str], PrivateStateAttr]]


class SkillsMiddleware(AgentMiddleware[SkillsState, Any]):
    """Discovers skills in ``sources`` of ``backend`` once per run and lists them in the prompt.

    Discovery runs in ``before_agent`` unless the state already holds ``skills_metadata`` (a
    resumed thread). Later sources override earlier ones by name. Problems (a skill left out, or
    loaded with something ignored) become lines in the state key ``skills_load_errors`` and in
    the prompt. Both keys are private, as in deepagents: read them with ``agent.get_state`` or
    in the trace, not in ``invoke()``'s output.
    The agent reads a ``SKILL.md`` with ``read_file``, so give it the file tools on a backend
    where the listed paths resolve (usually the same backend).
    """

    state_schema = SkillsState

    def __init__(
        self,
        backend: BackendLike,
        *,
        sources: Sequence[str | SkillSource | tuple[str, str]],
        system_prompt: str | None = SKILLS_PROMPT_SECTION,
    ) -> None:
        super().__init__()
        if isinstance(sources, str):
            raise TypeError("sources must be a list of paths, not one string")
        self.backend = check_backend(backend)
        self.sources = [as_source(source) for source in sources]
        self.system_prompt = None if system_prompt is None else check_template(system_prompt)

    def _backend(self, state: Any, runtime: Runtime[Any]) -> BackendProtocol:
        if is_backend(self.backend):
            return self.backend  # type: ignore[no-any-return]
        try:
            config = get_config()
        except RuntimeError:
            config = {}
        tool_runtime = ToolRuntime(
            state=state,
            context=runtime.context,
            config=config,
            stream_writer=runtime.stream_writer,
            tool_call_id=None,
            store=runtime.store,
        )
        return self.backend(tool_runtime)  # type: ignore[operator,no-any-return]

    def _discover(self, backend: BackendProtocol) -> dict[str, Any]:
        found = discover_skills(backend, self.sources)
        return {
            SKILLS_METADATA_KEY: found.skills,
            SKILLS_ERRORS_KEY: [describe_warning(w) for w in found.warnings],
        }

    def before_agent(self, state: SkillsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        if state.get(SKILLS_METADATA_KEY) is not None:
            return None
        return self._discover(self._backend(state, runtime))

    async def abefore_agent(
        self, state: SkillsState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        if state.get(SKILLS_METADATA_KEY) is not None:
            return None
        # A disk backend reads a file per skill: keep the event loop free.
        return await asyncio.to_thread(self._discover, self._backend(state, runtime))

    def _with_section(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        state: Mapping[str, Any] = request.state or {}
        skills = state.get(SKILLS_METADATA_KEY) or []
        problems = state.get(SKILLS_ERRORS_KEY) or []
        if self.system_prompt is None:
            return request
        section = skills_section(skills, problems, self.system_prompt, self.sources)
        return with_prompt_section(request, section)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._with_section(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._with_section(request))
