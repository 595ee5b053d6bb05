"""``create_deep_agent``: a main agent wired with ``SubAgentMiddleware``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware, InterruptOnConfig
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph.state import CompiledStateGraph

from nbagents._contract import GENERAL_PURPOSE, MAX_PARALLEL_SUBAGENTS
from nbagents.backends import BackendLike, FilesystemMiddleware, StateBackend, check_backend
from nbagents.middleware import (
    MemoryMiddleware,
    PatchToolCallsMiddleware,
    check_excluded,
    create_summarization_middleware,
    drop_excluded,
    merge_by_name,
    prompt_caching_for,
)
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
"""Threads a synchronous ``invoke`` may use for parallel tool calls (LangGraph's default pool of
``min(32, cpus + 4)`` would queue a wide fan-out's sub-agents)."""


def create_deep_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] = (),
    *,
    system_prompt: str | None = None,
    subagents: Sequence[SubAgent | CompiledSubAgent | RemoteSubAgent] = (),
    backend: BackendLike | None = None,
    skills: Sequence[str] | None = None,
    memory: Sequence[str] | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any]] = (),
    excluded_middleware: Iterable[str] = (),
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

    ``model`` is a chat model or a ``"provider:model"`` string. A ``general-purpose`` sub-agent
    (the main model and tools) exists unless ``general_purpose_agent=False`` or a spec of that
    name is given. ``interrupt_on`` also applies to the sub-agents built from ``SubAgent`` specs
    that set none of their own, and ``state_schema`` is theirs too. ``max_concurrency`` bounds
    the parallel tool calls of one step, ``task`` calls included. With
    ``config={"configurable": {SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: Schema}}`` the sub-agents of
    the main agent's ``task`` calls answer in ``Schema`` (see ``SubAgentMiddleware``).

    ``backend`` (see :mod:`nbagents.backends`) gives the main agent and every built sub-agent the
    file tools on it; with ``skills`` or ``memory`` and no backend, files live in the state key
    ``files``. ``skills`` lists skill source directories, a later one overriding an earlier one
    by name; the main agent and the general-purpose sub-agent are offered those skills, another
    sub-agent only the skills its spec names. ``memory`` lists memory files (``["/AGENTS.md"]``)
    loaded into the main agent's system prompt when a thread starts.

    Every agent gets deepagents' default stack: the main agent ``FilesystemMiddleware`` (with a
    backend), ``SubAgentMiddleware``, ``SummarizationMiddleware``, ``PatchToolCallsMiddleware``,
    the background-task middleware (with background specs), then ``middleware`` (the main
    agent's only), then ``SkillsMiddleware``, ``AnthropicPromptCachingMiddleware`` and
    ``MemoryMiddleware``, then approvals; a built sub-agent the same without the task,
    background and memory middleware. Summarization folds the start of a conversation past 85%
    of the model's context size (170,000 tokens when unknown) after saving the folded messages
    to ``/conversation_history/`` on the backend. A middleware of a default's name in
    ``middleware`` replaces it (for the general-purpose sub-agent too); naming it in
    ``excluded_middleware`` removes it (not ``FilesystemMiddleware`` or ``SubAgentMiddleware``).
    The todo list is not a default: pass ``middleware=[TodoListMiddleware()]``.

    ``limits`` bounds each run (each ``invoke``, ``stream`` or resumption) as a whole: the model
    calls, tokens, cost and seconds of the main agent and every sub-agent together (see
    ``Limits``). A sub-agent that reaches it stops before its next model call and its parent
    gets an error ToolMessage; the main agent's ``invoke`` raises ``LimitReached``.

    Mistakes fail here, not mid-run: a bad spec or a tool given by name raises ``ValueError``
    naming the sub-agent (``TypeError`` in ``tools``). The compiled graph refuses an input that
    is not its state (``{"messages": [...]}``) with a ``TypeError``. Ctrl-C stops a synchronous
    ``invoke`` at once, even while sub-agents are busy.
    """
    excluded = check_excluded(excluded_middleware)
    problem = tools_problem(tools)
    if problem is not None:
        raise TypeError(f"create_deep_agent: tools= {problem}")
    if limits is not None:
        limits = check_limits(limits, "create_deep_agent")
    chat_model = init_model(model, f"Agent {name!r}") if isinstance(model, str) else model
    if isinstance(skills, str):
        raise ValueError("skills must be a list of skill source directories, not one string.")
    if isinstance(memory, str):
        raise ValueError("memory must be a list of file paths (['/AGENTS.md']), not one string.")
    if backend is not None:
        backend = check_backend(backend)
    elif skills or memory:
        # Skills and memory then live in the state's files, given with the input.
        backend = StateBackend()
    # Without a backend, summarization keeps what it folds in the thread's state (``files``),
    # where a checkpointer keeps it and the run's output shows it.
    offload = backend
    custom = list(middleware)

    def subagent_stack(
        subagent: str, subagent_model: BaseChatModel
    ) -> tuple[list[AgentMiddleware[Any, Any]], list[AgentMiddleware[Any, Any]]]:
        core: list[AgentMiddleware[Any, Any]] = [
            create_summarization_middleware(subagent_model, offload),
            PatchToolCallsMiddleware(),
        ]
        tail: list[AgentMiddleware[Any, Any]] = [prompt_caching_for(subagent_model)]
        if subagent == GENERAL_PURPOSE:
            # As deepagents: the general-purpose sub-agent takes the main agent's replacement
            # of one of its defaults (a SummarizationMiddleware of other thresholds, ...).
            core, tail = _replaced(core, custom), _replaced(tail, custom)
        return drop_excluded(core, excluded), drop_excluded(tail, excluded)

    # Validation (in the middlewares) names a spec that is not a dict; do not trip on it here.
    background = [s for s in subagents if isinstance(s, Mapping) and s.get("background")]
    subagent_middleware = SubAgentMiddleware(
        default_model=chat_model,
        default_tools=tools,
        subagents=[s for s in subagents if not any(s is b for b in background)],
        backend=backend,
        default_skills=skills,
        default_interrupt_on=interrupt_on,
        default_stack=subagent_stack,
        general_purpose_agent=general_purpose_agent,
        excluded_state_keys=excluded_state_keys,
        state_schema=state_schema,
        max_subagent_depth=max_subagent_depth,
        on_subagent_error=on_subagent_error,
    )
    # deepagents' order (see the docstring): the tail changes the prompt last.
    core: list[AgentMiddleware[Any, Any]] = []
    if backend is not None:
        core.append(FilesystemMiddleware(backend=backend))
    core += [
        subagent_middleware,
        create_summarization_middleware(chat_model, offload),
        PatchToolCallsMiddleware(),
    ]
    if background:
        core.append(BackgroundSubAgentMiddleware(cast(list[RemoteSubAgent], background)))
    tail: list[AgentMiddleware[Any, Any]] = []
    if skills and backend is not None:
        tail.append(SkillsMiddleware(backend, sources=list(skills)))
    tail.append(prompt_caching_for(chat_model))
    if memory:
        tail.append(MemoryMiddleware(backend=backend, sources=list(memory)))
    stack = merge_by_name([*core, *tail], custom, core={m.name for m in core})
    stack = drop_excluded(stack, excluded)
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


def _replaced(
    stack: list[AgentMiddleware[Any, Any]], custom: Sequence[AgentMiddleware[Any, Any]]
) -> list[AgentMiddleware[Any, Any]]:
    """``stack`` with the ``custom`` middleware that share a name with one of it in its place."""
    names = {m.name for m in stack}
    return merge_by_name(stack, [m for m in custom if m.name in names])
