"""``create_deep_agent``: a main agent wired with ``SubAgentMiddleware``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from nbagents._contract import MAX_PARALLEL_SUBAGENTS
from nbagents.backends import BackendLike, FilesystemMiddleware, StateBackend, check_backend
from nbagents.models import init_model
from nbagents.skills import SkillsMiddleware
from nbagents.subagents._background import BackgroundSubAgentMiddleware
from nbagents.subagents._input import DeepAgentGraph
from nbagents.subagents._messages import batch_message_writes
from nbagents.subagents._middleware import SubAgentMiddleware
from nbagents.subagents._spawn import OnError
from nbagents.subagents._specs import CompiledSubAgent, RemoteSubAgent, SubAgent, tools_problem
from nbagents.subagents.limits import Limits, check_limits

__all__ = ["DEFAULT_MAX_CONCURRENCY", "DEFAULT_SYSTEM_PROMPT", "create_deep_agent"]

DEFAULT_SYSTEM_PROMPT = (
    "You are a capable assistant. Plan the work, delegate self-contained parts to sub-agents "
    "when that keeps your context focused, and answer the user with the combined result."
)

DEFAULT_MAX_CONCURRENCY = MAX_PARALLEL_SUBAGENTS
"""Threads a synchronous ``invoke`` may use for parallel tool calls.

LangGraph's default pool has ``min(32, cpus + 4)`` workers, which would queue the sixth and later
sub-agents of one message behind the first five.
"""


def create_deep_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] = (),
    *,
    system_prompt: str | None = None,
    subagents: Sequence[SubAgent | CompiledSubAgent | RemoteSubAgent] = (),
    backend: BackendLike | None = None,
    skills: Sequence[str] | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any]] = (),
    max_subagent_depth: int = 3,
    name: str = "main",
    checkpointer: Any = None,
    store: Any = None,
    response_format: Any = None,
    interrupt_on: dict[str, bool | InterruptOnConfig] | None = None,
    excluded_state_keys: Iterable[str] = (),
    on_subagent_error: OnError = "return",
    general_purpose_agent: bool = True,
    state_schema: Any = None,
    context_schema: Any = None,
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    limits: Limits | None = None,
    debug: bool = False,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build a main agent that can delegate to sub-agents through the ``task`` tool.

    A ``general-purpose`` sub-agent (the main model and tools) exists unless
    ``general_purpose_agent=False`` or a spec of that name is given. ``model`` is a chat model or
    a ``"provider:model"`` string. ``interrupt_on`` also applies to the sub-agents built from
    ``SubAgent`` specs that set none of their own, and ``state_schema`` is theirs too.
    ``max_concurrency`` bounds the parallel tool calls, ``task`` calls included, of one step.
    Pass ``config={"configurable": {SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: Schema}}`` to have the
    sub-agents of the main agent's ``task`` calls answer in ``Schema`` (see ``SubAgentMiddleware``).
    ``backend`` (see :mod:`nbagents.backends`) gives the main agent and every built sub-agent the
    file tools (``ls``, ``read_file``, ``write_file``, ``edit_file``, ``delete``, ``glob``,
    ``grep``) on it; ``skills`` lists skill source directories in it, read in order, a later one
    overriding an earlier one by name (user skills, then project skills). The main agent and the
    general-purpose sub-agent are offered those skills; another sub-agent only the skills its spec
    names. With ``skills`` and no ``backend``, files live in the state key ``files``. ``middleware``
    applies to the main agent only (tools it adds are not the sub-agents'); give a sub-agent
    middleware in its spec. Mistakes fail here, not mid-run: a spec with an unknown key or a tool
    given by name raises ``ValueError`` naming the sub-agent; ``tools`` holding a name raises
    ``TypeError``. Returns the compiled LangGraph agent; its input is the agent state,
    ``{"messages": [...]}`` (a plain string or message list is refused with a ``TypeError`` saying
    so). Ctrl-C (a notebook's interrupt) stops a synchronous ``invoke`` at once, even while
    sub-agents are busy; a sub-agent left in a blocking call stops before its next model call, and
    its result is dropped.

    ``limits`` bounds each run (each ``invoke``, ``stream`` or resumption) as a whole: its
    model calls, tokens, cost and seconds, the main agent's and every sub-agent's together
    (``{"model_calls": 50, "cost": 2.0}``, see ``Limits``). A sub-agent that reaches it stops
    before its next model call and its parent gets an error ToolMessage naming the limit; when
    the main agent reaches it, ``invoke`` raises ``LimitReached``. A sub-agent's own limits go
    in its spec (``"limits"``).
    """
    problem = tools_problem(tools)
    if problem is not None:
        raise TypeError(f"create_deep_agent: tools= {problem}")
    if limits is not None:
        limits = check_limits(limits, "create_deep_agent")
    chat_model = init_model(model, f"Agent {name!r}") if isinstance(model, str) else model
    if isinstance(skills, str):
        raise ValueError("skills must be a list of skill source directories, not one string.")
    if backend is not None:
        backend = check_backend(backend)
    elif skills:
        # Skills then live in the state's files, e.g. given with the input: {"files": {...}}.
        backend = StateBackend()
    # Validation (in the middlewares) names a spec that is not a dict; do not trip on it here.
    background = [s for s in subagents if isinstance(s, Mapping) and s.get("background")]
    subagent_middleware = SubAgentMiddleware(
        default_model=chat_model,
        default_tools=tools,
        subagents=[s for s in subagents if not any(s is b for b in background)],
        backend=backend,
        default_skills=skills,
        default_interrupt_on=interrupt_on,
        general_purpose_agent=general_purpose_agent,
        excluded_state_keys=excluded_state_keys,
        state_schema=state_schema,
        max_subagent_depth=max_subagent_depth,
        on_subagent_error=on_subagent_error,
    )
    stack: list[AgentMiddleware[Any, Any]] = []
    if backend is not None:
        stack.append(FilesystemMiddleware(backend=backend))
    if skills and backend is not None:
        stack.append(SkillsMiddleware(backend, sources=list(skills)))
    stack.append(subagent_middleware)
    if background:
        stack.append(BackgroundSubAgentMiddleware(cast(list[RemoteSubAgent], background)))
    stack += list(middleware)
    if interrupt_on:
        stack.append(HumanInTheLoopMiddleware(interrupt_on=interrupt_on))
    agent = create_agent(
        chat_model,
        tools=list(tools),
        system_prompt=system_prompt if system_prompt is not None else DEFAULT_SYSTEM_PROMPT,
        middleware=stack,
        response_format=response_format,
        checkpointer=checkpointer,
        store=store,
        state_schema=state_schema,
        context_schema=context_schema,
        name=name,
        debug=debug,
    )
    graph = DeepAgentGraph.of(batch_message_writes(agent), subagent_middleware._registry, limits)
    return graph.with_config(max_concurrency=max_concurrency)
