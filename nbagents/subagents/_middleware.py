"""``SubAgentMiddleware``: gives an agent the ``task`` tool and tells it how to delegate."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import (
    AgentMiddleware,
    InterruptOnConfig,
    ModelRequest,
    ModelResponse,
)
from langchain.tools import ToolRuntime
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage
from langchain_core.runnables import ensure_config
from langchain_core.tools import BaseTool
from langgraph.types import Command

from nbagents._contract import DEPTH_KEY, GENERAL_PURPOSE, TASK_TOOL
from nbagents._runtime_tools import runtime_tool
from nbagents.backends import BackendLike, check_backend
from nbagents.backends.prompts import with_prompt_section
from nbagents.subagents._prompts import TASK_SYSTEM_PROMPT, TASK_TOOL_DESCRIPTION, list_agents
from nbagents.subagents._registry import DefaultStack, SubAgentRegistry, resolve_model
from nbagents.subagents._spawn import SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY, OnError, Spawn
from nbagents.subagents._specs import (
    DEFAULT_EXCLUDED_STATE_KEYS,
    GENERAL_PURPOSE_SUBAGENT,
    CompiledSubAgent,
    RemoteSubAgent,
    SubAgent,
    tools_problem,
    validate_specs,
)
from nbagents.subagents._stop import check_not_stopped
from nbagents.subagents._stream import SubAgentFailureTransformer
from nbagents.subagents.limits import admitted, is_guarded

__all__ = ["SubAgentMiddleware"]


class SubAgentMiddleware(AgentMiddleware[Any, Any]):
    """Adds the ``task`` tool, through which the agent hands jobs to isolated sub-agents.

    Parallel ``task`` calls run as parallel tool calls; under a sync ``invoke`` their number is
    capped by the run's ``max_concurrency``, which ``create_deep_agent`` raises (pass
    ``config={"max_concurrency": ...}`` with ``create_agent``). Under ``ainvoke`` built
    sub-agents run their sync-only tools on nbagents' own thread pool. A response format in the
    call's ``configurable[SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY]`` replaces the spec's for that
    ``task`` call (upstream's key; not for a ``CompiledSubAgent``; the model cannot choose it).

    Args:
        default_model: the model of sub-agents that name none (a model or ``"provider:model"``);
            without it, every ``SubAgent`` spec needs its own ``model`` (deepagents' form).
        backend: a file backend (see :mod:`nbagents.backends`): every built sub-agent gets the
            file tools on it and the skills its spec names.
        default_skills: skill source directories of the general-purpose sub-agent (usually the
            main agent's); needs ``backend``.
        default_tools: the tools of sub-agents that name none (usually the main agent's tools).
        subagents: ``SubAgent``, ``CompiledSubAgent`` and ``RemoteSubAgent`` specs.
        default_middleware: middleware every built sub-agent gets before its own.
        default_stack: builds the default middleware of a sub-agent from its name and model, a
            ``(core, tail)`` pair placed after the file tools and after the skills; the spec's
            own middleware replaces one of its name, else goes between. ``None`` adds none.
        default_interrupt_on: approvals of built sub-agents whose spec has no ``interrupt_on``.
        general_purpose_agent: add ``GENERAL_PURPOSE_SUBAGENT`` unless a spec of that name
            exists; by default, whenever there is a ``default_model`` to build it with.
        system_prompt: the section appended to the agent's system prompt (``{available_agents}``
            is replaced by the list of sub-agents); ``None`` appends nothing.
        task_description: the ``task`` tool's description, with the same placeholder.
        excluded_state_keys: state keys withheld from sub-agents besides the default ones.
        state_schema: the state schema of built sub-agents; give the main agent's, so that they
            receive its custom keys and can update them.
        max_subagent_depth: how deep sub-agents may nest; past it ``task`` answers with an error.
        on_subagent_error: ``"return"`` turns a failing sub-agent into an error ToolMessage;
            ``"raise"`` lets the exception stop the run. Either way stream projections
            (``run.subagents``, the ``lifecycle`` channel) report the sub-agent ``failed``.
    """

    transformers = (SubAgentFailureTransformer,)
    """Stream transformers ``create_agent`` registers for this middleware."""

    def __init__(
        self,
        *,
        default_model: str | BaseChatModel | None = None,
        default_tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] = (),
        subagents: Sequence[SubAgent | CompiledSubAgent | RemoteSubAgent] = (),
        backend: BackendLike | None = None,
        default_skills: Sequence[str] | None = None,
        default_middleware: Sequence[AgentMiddleware[Any, Any]] = (),
        default_stack: DefaultStack | None = None,
        default_interrupt_on: Mapping[str, bool | InterruptOnConfig] | None = None,
        general_purpose_agent: bool | None = None,
        system_prompt: str | None = TASK_SYSTEM_PROMPT,
        task_description: str | None = None,
        excluded_state_keys: Iterable[str] = (),
        state_schema: Any = None,
        max_subagent_depth: int = 3,
        on_subagent_error: OnError = "return",
    ) -> None:
        super().__init__()
        specs = list(subagents)
        validate_specs(specs)
        problem = tools_problem(default_tools)
        if problem is not None:
            raise TypeError(f"SubAgentMiddleware: default_tools= {problem}")
        if general_purpose_agent is None:
            general_purpose_agent = default_model is not None
        if general_purpose_agent and not any(s["name"] == GENERAL_PURPOSE for s in specs):
            if default_model is None:
                raise ValueError(
                    "SubAgentMiddleware: the general-purpose sub-agent runs on default_model; "
                    "pass default_model=... or general_purpose_agent=False."
                )
            specs.insert(0, GENERAL_PURPOSE_SUBAGENT)
        if not specs:
            raise ValueError(
                "At least one subagent must be specified: pass `subagents` to "
                "SubAgentMiddleware, or a default_model for the general-purpose one."
            )
        if isinstance(default_skills, str):
            raise ValueError("default_skills must be a list of directories, not one string.")
        if max_subagent_depth < 0:
            raise ValueError(f"max_subagent_depth must be >= 0, got {max_subagent_depth}.")
        if on_subagent_error not in ("return", "raise"):
            raise ValueError(
                f"on_subagent_error must be 'return' or 'raise', got {on_subagent_error!r}."
            )
        agents = list_agents((s["name"], s["description"]) for s in specs)
        self._registry = SubAgentRegistry(
            specs={s["name"]: s for s in specs},
            default_model=(
                None
                if default_model is None
                else resolve_model(default_model, "SubAgentMiddleware default_model")
            ),
            default_tools=list(default_tools),
            default_middleware=list(default_middleware),
            default_stack=default_stack,
            backend=None if backend is None else check_backend(backend),
            default_skills=list(default_skills) if default_skills else None,
            default_interrupt_on=dict(default_interrupt_on or {}),
            state_schema=state_schema,
            excluded=DEFAULT_EXCLUDED_STATE_KEYS | frozenset(excluded_state_keys),
            max_depth=max_subagent_depth,
            on_error=on_subagent_error,
            prompt_section=_fill(system_prompt, agents) if system_prompt else None,
            task_description=_fill(task_description or TASK_TOOL_DESCRIPTION, agents),
            delegation=SubAgentMiddleware._sharing,
        )
        self.tools = [_task_tool(self._registry)]

    @staticmethod
    def _sharing(registry: SubAgentRegistry, prompt_in_request: bool) -> SubAgentMiddleware:
        """The middleware a built sub-agent gets to delegate further: never a user's subclass,
        which configures the main agent; ``_ToolOnly`` when the prompt section is in its system
        prompt already."""
        kind = SubAgentMiddleware if prompt_in_request else _ToolOnly
        nested = kind.__new__(kind)
        AgentMiddleware.__init__(nested)
        nested._registry = registry
        nested.tools = [_task_tool(registry)]
        return nested

    @property
    def system_prompt(self) -> str | None:
        """The section this middleware appends to the agent's system prompt."""
        return self._registry.prompt_section

    @property
    def subagent_names(self) -> list[str]:
        """The ``subagent_type`` values the ``task`` tool accepts."""
        return list(self._registry.specs)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        check_not_stopped()
        with admitted(ensure_config()):
            return handler(with_prompt_section(request, self._registry.prompt_section or ""))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        with admitted(ensure_config()):
            return await handler(with_prompt_section(request, self._registry.prompt_section or ""))


class _ToolOnly(SubAgentMiddleware):
    """A built sub-agent's ``SubAgentMiddleware`` whose prompt section is already in its system
    prompt: the ``task`` tool without a model-call hook, which ``create_agent`` would wrap in a
    LangSmith ``traceable`` at every call. A run with limits gets the hook (``admits=True``)."""

    wrap_model_call = AgentMiddleware.wrap_model_call  # type: ignore[assignment]
    awrap_model_call = AgentMiddleware.awrap_model_call  # type: ignore[assignment]

    @property
    def name(self) -> str:
        return "SubAgentMiddleware"


def _fill(template: str, agents: str) -> str:
    return template.replace("{available_agents}", agents)


def _task_tool(registry: SubAgentRegistry) -> BaseTool:
    # Omitting subagent_type means general-purpose; without one, a lone sub-agent is meant.
    names = list(registry.specs)
    default_type = names[0] if len(names) == 1 else GENERAL_PURPOSE

    def prepare(description: str, subagent_type: str, runtime: ToolRuntime) -> Spawn | ToolMessage:
        call_id = runtime.tool_call_id or ""
        if subagent_type not in registry.specs:
            allowed = ", ".join(f"'{n}'" for n in registry.specs)
            return _error(
                f"Unknown subagent_type {subagent_type!r}. Allowed types: {allowed}.", call_id
            )
        config = runtime.config or {}
        depth = int((config.get("metadata") or {}).get(DEPTH_KEY, 0)) + 1
        if depth > registry.max_depth:
            return _error(
                f"Cannot start sub-agent {subagent_type!r}: the sub-agent depth limit "
                f"(max_subagent_depth={registry.max_depth}) is reached. Do this task yourself.",
                call_id,
            )
        spec = registry.specs[subagent_type]
        limits = registry.limits_of(subagent_type)
        accumulating, deleting = registry.reducers(subagent_type)
        response_format = (config.get("configurable") or {}).get(
            SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY
        )
        return Spawn(
            name=subagent_type,
            description=description,
            runnable=registry.graph_for(
                subagent_type, response_format, admits=bool(limits) or is_guarded(config)
            ),
            parent_state=runtime.state or {},
            tool_call_id=call_id,
            depth=depth,
            excluded=registry.excluded,
            on_error=registry.on_error,
            accumulating=accumulating,
            deleting=deleting,
            limits=limits,
            # A remote sub-agent never forks: the server's graph takes the isolated state.
            fork="graph_id" not in spec and spec.get("mode") == "fork",
            compiled="runnable" in spec,
            response_format=None if response_format is None else _format_name(response_format),
        )

    def task(
        description: Annotated[str, "A complete brief of the job: the sub-agent sees only this."],
        runtime: ToolRuntime,
        subagent_type: Annotated[str, "Which sub-agent type runs the job."] = default_type,
    ) -> Command[Any] | ToolMessage:
        spawn = prepare(description, subagent_type, runtime)
        return spawn.run() if isinstance(spawn, Spawn) else spawn

    async def atask(
        description: Annotated[str, "A complete brief of the job: the sub-agent sees only this."],
        runtime: ToolRuntime,
        subagent_type: Annotated[str, "Which sub-agent type runs the job."] = default_type,
    ) -> Command[Any] | ToolMessage:
        spawn = prepare(description, subagent_type, runtime)
        return await spawn.arun() if isinstance(spawn, Spawn) else spawn

    return runtime_tool(task, atask, name=TASK_TOOL, description=registry.task_description)


def _error(text: str, tool_call_id: str) -> ToolMessage:
    return ToolMessage(content=text, tool_call_id=tool_call_id, name=TASK_TOOL, status="error")


def _format_name(response_format: Any) -> str:
    """How the trace names a response format: its schema's name (``Report``), or the strategy
    around it (``ToolStrategy(Report)``), or a JSON schema's title."""
    schema = getattr(response_format, "schema", None)
    if schema is not None and not isinstance(response_format, type):
        return f"{type(response_format).__name__}({_format_name(schema)})"
    if isinstance(response_format, Mapping):
        return str(response_format.get("title") or "a JSON schema")
    return str(getattr(response_format, "__name__", None) or type(response_format).__name__)
