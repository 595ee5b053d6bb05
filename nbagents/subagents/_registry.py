"""The sub-agent types of one main agent: their specs and the graphs built from them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, cast, get_origin, get_type_hints

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langgraph.channels.binop import BinaryOperatorAggregate

from nbagents._contract import GENERAL_PURPOSE
from nbagents.backends import BackendLike, FilesystemMiddleware, files_reducer
from nbagents.middleware import merge_by_name
from nbagents.models import MissingAPIKeyError, init_model
from nbagents.skills import SkillsMiddleware
from nbagents.subagents._messages import batch_message_writes
from nbagents.subagents._remote import RemoteGraphRunnable
from nbagents.subagents._spawn import SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY, OnError
from nbagents.subagents._specs import CompiledSubAgent, RemoteSubAgent, SubAgent, validate_specs
from nbagents.subagents._threads import with_threaded_coroutines
from nbagents.subagents.limits import Limits

__all__ = ["DefaultStack", "SubAgentRegistry", "reducer_keys", "resolve_model"]

DefaultStack = Callable[
    [str, BaseChatModel], tuple[list[AgentMiddleware[Any, Any]], list[AgentMiddleware[Any, Any]]]
]
"""Builds a sub-agent's default middleware from its name and model: ``(core, tail)``."""

_FORMATS_KEPT = 32
"""Sub-agents built for a per-call response format or to admit model calls against limits that
are kept for reuse."""


@dataclass(eq=False, repr=False, kw_only=True)
class SubAgentRegistry:
    """The sub-agent types of one main agent and their graphs, built once at construction.

    Built sub-agents get a ``task`` tool sharing this registry (made by ``delegation``), so
    nesting needs no extra graphs: the depth limit is enforced at run time.
    """

    specs: dict[str, SubAgent | CompiledSubAgent | RemoteSubAgent]
    """By name."""
    default_model: BaseChatModel | None
    default_tools: list[Any]
    default_middleware: list[AgentMiddleware[Any, Any]]
    default_stack: DefaultStack | None = None
    backend: BackendLike | None
    default_skills: list[str] | None
    default_interrupt_on: dict[str, bool | InterruptOnConfig]
    state_schema: Any
    excluded: frozenset[str]
    max_depth: int
    on_error: OnError
    prompt_section: str | None
    task_description: str
    delegation: Callable[[SubAgentRegistry, bool], AgentMiddleware[Any, Any]]

    def __post_init__(self) -> None:
        self._schema_reducers = reducer_keys(self.state_schema)
        # Building eagerly makes a bad model string, tool or response format fail when the agent
        # is created rather than in the middle of a run.
        self.graphs = {name: self._build(spec) for name, spec in self.specs.items()}
        # Keyed by the format's identity (a schema may be an unhashable dict); the entry holds
        # the format itself, so its id cannot be reused while it is cached.
        self._by_format: OrderedDict[tuple[str, int, bool], tuple[Any, Runnable[Any, Any]]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self._reducers: dict[str, tuple[frozenset[str], frozenset[str]]] = {}

    def graph_for(
        self, name: str, response_format: Any = None, *, admits: bool = False
    ) -> Runnable[Any, Any]:
        """The sub-agent ``name``, answering in ``response_format`` instead of its spec's if given
        (``ValueError`` for a compiled or remote one, which cannot be rebuilt). With ``admits`` a
        built sub-agent admits each model call against its run's limits (``limits.admitted``).
        """
        spec = self.specs[name]
        built = "runnable" not in spec and "graph_id" not in spec
        # Without limits to keep, a built sub-agent needs no model-call hook: the eager graph.
        if response_format is None and not (admits and built):
            return self.graphs[name]
        if not built:
            kind = "compiled" if "runnable" in spec else "remote"
            raise ValueError(
                f'response_schema cannot be used with {kind} subagent "{name}": a response '
                f"format chosen per task call ({SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY!r} in the "
                f"config) needs a SubAgent spec that nbagents builds."
            )
        key = (name, id(response_format), admits)
        with self._lock:  # built under it: the first spawns of a wide fan-out all ask at once
            cached = self._by_format.get(key)
            if cached is not None and cached[0] is response_format:
                self._by_format.move_to_end(key)
                return cached[1]
            graph = self._build(spec, response_format, admits=admits)
            self._by_format[key] = (response_format, graph)
            while len(self._by_format) > _FORMATS_KEPT:
                self._by_format.popitem(last=False)
        return graph

    def build(self, spec: SubAgent, *, admits: bool = False) -> Runnable[Any, Any]:
        """``spec`` built as this agent builds its sub-agents (for a re-run with a changed spec)."""
        validate_specs([spec])
        return self._build(spec, admits=admits)

    def limits_of(self, name: str) -> Limits | None:
        """The limits of one run of the sub-agent ``name``, if its spec sets any."""
        spec = self.specs[name]
        return None if "graph_id" in spec else spec.get("limits")

    def reducers(self, name: str) -> tuple[frozenset[str], frozenset[str]]:
        """State keys with a reducer, in the parent's schema or the sub-agent's graph; and those
        whose reducer deletes an entry updated to ``None`` (a state backend's ``files``)."""
        found = self._reducers.get(name)
        if found is None:  # a graph's channels are fixed once built: looked at once per type
            channels = getattr(self.graphs[name], "channels", None) or {}
            own = {k: c for k, c in channels.items() if isinstance(c, BinaryOperatorAggregate)}
            deleting = frozenset(k for k, c in own.items() if c.operator is files_reducer)
            found = self._reducers[name] = (self._schema_reducers | set(own), deleting)
        return found

    def _build(
        self,
        spec: SubAgent | CompiledSubAgent | RemoteSubAgent,
        response_format: Any = None,
        *,
        admits: bool = False,
    ) -> Runnable[Any, Any]:
        if "graph_id" in spec:
            return RemoteGraphRunnable(cast(RemoteSubAgent, spec))
        if "runnable" in spec:
            return cast(CompiledSubAgent, spec)["runnable"]
        model = spec.get("model") or self.default_model
        if model is None:
            raise ValueError(
                f"SubAgent {spec['name']!r} must specify 'model': SubAgentMiddleware was given "
                f"no default_model to inherit; give the spec a model or pass default_model=..."
            )
        chat_model = resolve_model(model, f"Sub-agent {spec['name']!r}")
        # File tools on the shared backend, and the skills this sub-agent is offered (the main
        # agent's for the general-purpose one, else only those its spec names).
        sources = spec.get("skills")
        if sources is None and spec["name"] == GENERAL_PURPOSE:
            sources = self.default_skills
        if self.backend is None and sources:
            raise ValueError(
                f"Sub-agent {spec['name']!r} names skills {list(sources)}, but there is no "
                f"backend to read them from: pass backend=... to create_deep_agent or "
                f"SubAgentMiddleware."
            )
        files: list[AgentMiddleware[Any, Any]] = []
        skills: list[AgentMiddleware[Any, Any]] = []
        if self.backend is not None:
            files.append(FilesystemMiddleware(backend=self.backend))
            if sources:
                skills.append(SkillsMiddleware(self.backend, sources=list(sources)))
        own = [*self.default_middleware, *spec.get("middleware", ())]
        middleware: list[AgentMiddleware[Any, Any]]
        if self.default_stack is None:
            middleware = [*files, *skills, *own]
        else:
            # deepagents' order: files, the core defaults, the spec's own middleware, skills,
            # then the tail (prompt caching); the spec's own replaces a default of its name.
            core, tail = self.default_stack(spec["name"], chat_model)
            head = [*files, *core]
            middleware = merge_by_name([*head, *skills, *tail], own, core={m.name for m in head})
        # A sub-agent may hold the main agent's tools, so it keeps their approvals unless its
        # spec says otherwise.
        interrupt_on = spec.get("interrupt_on", self.default_interrupt_on)
        if interrupt_on:
            middleware.append(HumanInTheLoopMiddleware(interrupt_on=interrupt_on))
        system_prompt = spec["system_prompt"]
        # The delegation middleware comes last, so its section ends the system prompt. When no
        # other middleware changes the prompt per call, the section is written into it here and
        # the middleware needs no per-call hook (unless it admits the calls against limits).
        in_request = admits or (
            bool(self.prompt_section) and any(map(_wraps_model_calls, middleware))
        )
        if self.prompt_section and not in_request:
            system_prompt = (
                f"{system_prompt}\n\n{self.prompt_section}"
                if system_prompt
                else self.prompt_section
            )
        middleware.append(self.delegation(self, in_request))
        built = create_agent(
            chat_model,
            tools=with_threaded_coroutines(spec.get("tools", self.default_tools)),
            system_prompt=system_prompt,
            middleware=middleware,
            response_format=(
                response_format if response_format is not None else spec.get("response_format")
            ),
            state_schema=self.state_schema,
            name=spec["name"],
        )
        return batch_message_writes(built)


def _wraps_model_calls(middleware: AgentMiddleware[Any, Any]) -> bool:
    """Whether ``create_agent`` puts ``middleware`` around model calls where it may change the
    prompt (a middleware that says ``changes_prompt = False`` does not)."""
    if getattr(middleware, "changes_prompt", True) is False:
        return False
    kind = type(middleware)
    return (
        kind.wrap_model_call is not AgentMiddleware.wrap_model_call
        or kind.awrap_model_call is not AgentMiddleware.awrap_model_call
    )


def resolve_model(model: str | BaseChatModel, owner: str) -> BaseChatModel:
    if not isinstance(model, str):
        return model
    try:
        return init_model(model, owner)
    except MissingAPIKeyError:
        raise
    except (ImportError, ValueError) as error:
        raise ValueError(f"{owner}: cannot initialise model {model!r}: {error}") from error


def reducer_keys(schema: Any) -> frozenset[str]:
    """Keys of a state schema annotated with a reducer (``Annotated[list, operator.add]``)."""
    if schema is None:
        return frozenset()
    try:
        hints = get_type_hints(schema, include_extras=True)
    except Exception:  # an unresolvable annotation: fall back to the graph's channels
        return frozenset()
    return frozenset(
        k
        for k, hint in hints.items()
        if get_origin(hint) is Annotated and any(callable(m) for m in hint.__metadata__)
    )
