"""``SkillsMiddleware``: skills discovered once per run, listed in the system prompt."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, NotRequired, Optional

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nbagents._contract import SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.backends import BackendLike, BackendProtocol, check_backend, is_backend
from nbagents.backends.prompts import RequestEditor, with_prompt_section
from nbagents.middleware import hook_runtime
from nbagents.skills._discovery import adiscover_skills, as_source, discover_skills
from nbagents.skills._prompt import (
    SKILLS_PROMPT_SECTION,
    check_template,
    describe_warning,
    skills_section,
)
from nbagents.skills._records import SkillMetadata, SkillsDiscovery, SkillSource


class SkillsState(AgentState):
    # Private as in deepagents: a run's output is the conversation, not the skills bookkeeping.
    skills_metadata: NotRequired[Annotated[list[SkillMetadata], PrivateStateAttr]]
    skills_load_errors: NotRequired[Annotated[list[str], PrivateStateAttr]]


class SkillsMiddleware(RequestEditor, AgentMiddleware[SkillsState, Any]):
    """Discovers skills in ``sources`` of ``backend`` once per run and lists them in the prompt.

    Discovery runs in ``before_agent`` unless the state already holds ``skills_metadata`` (a
    resumed thread). Later sources override earlier ones by name. Problems (a skill left out, or
    loaded with something ignored) become lines in the state key ``skills_load_errors`` and in
    the prompt. Both keys are private, as in deepagents: read them with ``agent.get_state`` or
    in the trace, not in ``invoke()``'s output.
    The agent reads a ``SKILL.md`` with ``read_file``, so give it the file tools on a backend
    where the listed paths resolve (usually the same backend).

    ``sources`` are directory paths or ``(path, label)`` pairs; as in deepagents, the
    attribute ``sources`` holds the paths and ``source_labels`` the labels (made from the path
    where none was given: ``/skills/user`` is ``User``). ``backend`` is a backend, a backend
    class, a factory called with the runtime, or any object with ``ls`` and
    ``download_files`` (all that discovery uses).
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
        self._skill_sources = [as_source(source) for source in sources]
        self.sources: list[str] = [source.path for source in self._skill_sources]
        self.source_labels: list[str] = [source.name for source in self._skill_sources]
        self.system_prompt = None if system_prompt is None else check_template(system_prompt)
        self._readonly = _reads_skills(backend) and not is_backend(backend)
        # A backend, a factory, or a reader of skills alone: what it is was settled just above.
        self.backend: Any = backend if self._readonly else check_backend(backend)

    def _resolve_backend(
        self, state: Any, runtime: Runtime[Any] | None, config: RunnableConfig | None
    ) -> BackendProtocol:
        if self._readonly or is_backend(self.backend):
            return self.backend  # type: ignore[no-any-return]
        return self.backend(hook_runtime(state, runtime, config))  # type: ignore[no-any-return]

    @staticmethod
    def _update(found: SkillsDiscovery) -> dict[str, Any]:
        return {
            SKILLS_METADATA_KEY: found.skills,
            SKILLS_ERRORS_KEY: [describe_warning(w) for w in found.warnings],
        }

    # ``config`` as deepagents' hooks take it, so code that calls them directly keeps working.
    # LangGraph passes it only when the annotation reads exactly so (it compares the text).
    def before_agent(
        self,
        state: SkillsState,
        runtime: Runtime[Any],
        config: Optional[RunnableConfig] = None,  # noqa: UP045
    ) -> dict[str, Any] | None:
        """Discover the skills, unless the state already holds them (a resumed thread)."""
        if state.get(SKILLS_METADATA_KEY) is not None:
            return None
        backend = self._resolve_backend(state, runtime, config)
        return self._update(discover_skills(backend, self._skill_sources))

    async def abefore_agent(
        self,
        state: SkillsState,
        runtime: Runtime[Any],
        config: Optional[RunnableConfig] = None,  # noqa: UP045
    ) -> dict[str, Any] | None:
        """``before_agent`` for async runs."""
        if state.get(SKILLS_METADATA_KEY) is not None:
            return None
        backend = self._resolve_backend(state, runtime, config)
        return self._update(await adiscover_skills(backend, self._skill_sources))

    def modify_request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """``request`` with the skills section added to its system message (as is, when
        ``system_prompt`` is None)."""
        if self.system_prompt is None:
            return request
        state: Mapping[str, Any] = request.state or {}
        skills, problems = state.get(SKILLS_METADATA_KEY) or [], state.get(SKILLS_ERRORS_KEY) or []
        section = skills_section(skills, problems, self.system_prompt, self._skill_sources)
        return with_prompt_section(request, section)


def _reads_skills(backend: object) -> bool:
    """Whether ``backend`` has what discovery calls, sync or async."""
    return any(
        all(callable(getattr(backend, name, None)) for name in names)
        for names in (("ls", "download_files"), ("als", "adownload_files"))
    )
