"""Summarization that keeps what it folds: LangChain's ``SummarizationMiddleware``, with the
folded messages saved to a file backend first (what LangChain lacks)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import (
    AgentMiddleware,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware import SummarizationMiddleware as LangChainSummarization
from langchain.agents.middleware.summarization import DEFAULT_SUMMARY_PROMPT, ContextSize
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    get_buffer_string,
)
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.types import Command

from nbagents._contract import STEP_KEY, SUMMARIZATION_STEP
from nbagents.backends import (
    BackendLike,
    BackendProtocol,
    CompositeBackend,
    FileData,
    FileDownloadResponse,
    FilesState,
    StateBackend,
    WriteResult,
    check_backend,
    files_reducer,
    uses_state,
)
from nbagents.middleware._runtime import backend_for_hook

__all__ = [
    "SESSION_KEY",
    "SummarizationMiddleware",
    "create_summarization_middleware",
    "summarization_defaults",
]

log = logging.getLogger(__name__)

SESSION_KEY = "_summarization_session_id"
"""Private state key naming the file one agent's folded history goes to, kept across turns of
a thread; withheld from sub-agents, so each sub-agent run has a file of its own."""

PROFILE_TRIGGER: ContextSize = ("fraction", 0.85)
PROFILE_KEEP: ContextSize = ("fraction", 0.10)
TOKENS_TRIGGER: ContextSize = ("tokens", 170_000)
MESSAGES_KEEP: ContextSize = ("messages", 6)
_DEPRECATED = frozenset({"max_tokens_before_summary", "messages_to_keep"})
_STEP_CONFIG: RunnableConfig = {"metadata": {STEP_KEY: SUMMARIZATION_STEP}}
"""The fold runs as a step of its own, so the trace shows it with the summarizer's call in it."""


class _SessionState(AgentState[Any]):
    _summarization_session_id: NotRequired[Annotated[str, PrivateStateAttr]]


class _SessionFilesState(FilesState):
    _summarization_session_id: NotRequired[Annotated[str, PrivateStateAttr]]


class _SessionHistoryState(AgentState[Any]):
    """For an agent given no backend: the state backend's ``files`` key with no starting value
    (``| None``), so it appears in the state (and sub-agents' input) only once a summary is made."""

    files: Annotated[NotRequired[dict[str, FileData] | None], files_reducer]
    _summarization_session_id: NotRequired[Annotated[str, PrivateStateAttr]]


def summarization_defaults(model: BaseChatModel) -> tuple[ContextSize, ContextSize]:
    """``(trigger, keep)`` for ``model``, as deepagents chooses them.

    With a context size in the model's profile (``profile["max_input_tokens"]``): summarize at
    85% of it and keep the latest 10%. Without one: summarize past 170,000 tokens and keep the
    latest 6 messages.
    """
    profile = getattr(model, "profile", None)
    if isinstance(profile, dict) and isinstance(profile.get("max_input_tokens"), int):
        return PROFILE_TRIGGER, PROFILE_KEEP
    return TOKENS_TRIGGER, MESSAGES_KEEP


class SummarizationMiddleware(LangChainSummarization[Any, Any]):
    """LangChain's ``SummarizationMiddleware`` that first saves the messages it folds away.

    When the conversation passes ``trigger`` (see LangChain's middleware for the thresholds),
    the messages before the ``keep`` window are appended, in full, to
    ``/conversation_history/<session>.md`` on ``backend`` (under the ``artifacts_root`` of a
    ``CompositeBackend``), then replaced in the state by one summary message that names that
    file, so the agent can read back any detail with ``read_file``. Each agent run, and each
    sub-agent run, has its own file; later summaries of the same thread append to it. A file
    that cannot be written is logged and the summary says the history was not kept.
    ``backend`` defaults to a ``StateBackend`` (the thread's ``files`` key). The other
    arguments are LangChain's. ``create_summarization_middleware`` picks deepagents' defaults
    for a model.
    """

    def __init__(
        self,
        model: str | BaseChatModel,
        *,
        backend: BackendLike | None = None,
        trigger: Any = None,
        keep: ContextSize = ("messages", 20),
        token_counter: Any = count_tokens_approximately,
        summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
        trim_tokens_to_summarize: int | None = 4000,
        summarizer: Any = None,
        **deprecated_kwargs: Any,
    ) -> None:
        # LangChain's deprecated ``max_tokens_before_summary`` and ``messages_to_keep`` still
        # work (with its warning); LangChain ignores any other, so it is refused here.
        unknown = sorted(set(deprecated_kwargs) - _DEPRECATED)
        if unknown:
            raise TypeError(f"SummarizationMiddleware got unexpected arguments: {unknown}.")
        super().__init__(
            model,
            trigger=trigger,
            keep=keep,
            token_counter=token_counter,
            summary_prompt=summary_prompt,
            trim_tokens_to_summarize=trim_tokens_to_summarize,
            summarizer=summarizer,
            **deprecated_kwargs,
        )
        # Read once: whether the counter can count the tools' schemas too.
        self._counter_takes_tools = _takes_tools(self.token_counter)
        self.backend: BackendLike = check_backend(StateBackend if backend is None else backend)
        # A state backend writes to the ``files`` key, which the agent's state must then have,
        # even when the agent has no file tools.
        if backend is None:
            self.state_schema = _SessionHistoryState
        elif uses_state(self.backend):
            self.state_schema = _SessionFilesState
        else:
            self.state_schema = _SessionState
        root = self.backend.artifacts_root if isinstance(self.backend, CompositeBackend) else "/"
        self.history_dir = f"{str(root).rstrip('/')}/conversation_history"

    # -- the hook --------------------------------------------------------------------------------

    # LangChain's middleware summarizes in a ``before_model`` node. Here it happens inside the
    # model call instead (as deepagents does it), so an agent whose conversation stays short
    # has no extra graph node, and its trace no extra step, for a summary that never comes.
    before_model = AgentMiddleware.before_model  # type: ignore[assignment]
    abefore_model = AgentMiddleware.abefore_model  # type: ignore[assignment]
    # It changes the messages, never the system prompt (see SubAgentRegistry's prompt section).
    changes_prompt = False

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        messages = list(request.messages)
        if (total := self._due(request, messages)) is None:
            return handler(request)
        done: list[dict[str, Any]] = []

        def fold(_: Any) -> dict[str, Any]:
            if (parts := self._parts(request, messages)) is None:
                return {"messages_folded": 0}
            folded, kept, session, backend = parts
            # The history is saved before the summary is asked for, as deepagents does.
            saved = _append(backend, self.history_path(session), _section(_unsummarized(folded)))
            summary = self._create_summary(folded)
            return self._finish(summary, kept, session, saved, total, request, done)

        RunnableLambda(fold, name=SUMMARIZATION_STEP).invoke(
            {"messages": len(messages), "tokens": total}, config=_STEP_CONFIG
        )
        if not done:
            return handler(request)
        return _extended(handler(request.override(messages=done[0]["messages"][1:])), done[0])

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        messages = list(request.messages)
        if (total := self._due(request, messages)) is None:
            return await handler(request)
        done: list[dict[str, Any]] = []

        async def fold(_: Any) -> dict[str, Any]:
            if (parts := self._parts(request, messages)) is None:
                return {"messages_folded": 0}
            folded, kept, session, backend = parts
            # The history is saved while the summarizer works, as deepagents does.
            saved, summary = await asyncio.gather(
                _aappend(backend, self.history_path(session), _section(_unsummarized(folded))),
                self._acreate_summary(folded),
            )
            return self._finish(summary, kept, session, saved, total, request, done)

        await RunnableLambda(fold, name=SUMMARIZATION_STEP).ainvoke(
            {"messages": len(messages), "tokens": total}, config=_STEP_CONFIG
        )
        if not done:
            return await handler(request)
        response = await handler(request.override(messages=done[0]["messages"][1:]))
        return _extended(response, done[0])

    # -- helpers ---------------------------------------------------------------------------------

    def history_path(self, session: str) -> str:
        """The file the folded history of ``session`` is appended to."""
        return f"{self.history_dir}/{session}.md"

    def _due(self, request: ModelRequest[Any], messages: list[AnyMessage]) -> int | None:
        """The request's size in tokens (the messages, the system prompt and, for a counter that
        takes them, the tools, as deepagents counts) when a summary is due and there is something
        to fold, else ``None``: a model call that needs none has no step in the trace."""
        self._ensure_message_ids(messages)
        total = self._count(request.system_message, messages, request.tools)
        if not self._should_summarize(messages, total):
            return None
        # Over the threshold with nothing LangChain would fold (the prompt and tools alone fill
        # it, or the kept window holds every message): no step for a fold that does not happen.
        return total if self._determine_cutoff_index(messages) > 0 else None

    def _count(
        self, system: SystemMessage | None, messages: list[AnyMessage], tools: Sequence[Any]
    ) -> int:
        counted: list[AnyMessage] = [system, *messages] if system is not None else messages
        counter: Any = self.token_counter  # LangChain's type for it has no ``tools``
        if not tools or self._counter_takes_tools is False:
            return int(counter(counted))
        if self._counter_takes_tools:
            return int(counter(counted, tools=list(tools)))
        try:  # a counter whose signature cannot be read: try it with the tools
            return int(counter(counted, tools=list(tools)))
        except TypeError:
            return int(counter(counted))

    def _parts(
        self, request: ModelRequest[Any], messages: list[AnyMessage]
    ) -> tuple[list[AnyMessage], list[AnyMessage], str, BackendProtocol] | None:
        """What a fold folds and keeps, its session and the backend; ``None``: nothing to fold."""
        cutoff = self._determine_cutoff_index(messages)
        if cutoff <= 0:
            return None
        folded, kept = self._partition_messages(messages, cutoff)
        backend = backend_for_hook(self.backend, request.state, request.runtime)
        return folded, kept, _session(request.state), backend

    def _finish(
        self,
        summary: str,
        kept: list[AnyMessage],
        session: str,
        saved: bool,
        total: int,
        request: ModelRequest[Any],
        done: list[dict[str, Any]],
    ) -> dict[str, Any]:
        """Puts in ``done`` the state update with the summary naming the history file (if
        ``saved``), and returns the fold's facts: the step's output, which the trace shows."""
        path = self.history_path(session)
        (made,) = self._build_new_messages(summary)
        folded = len(request.messages) - len(kept)
        if not saved:
            where = "They could not be saved; only this summary of them remains."
        else:
            where = (
                f"They are saved in full in {path}: read that file (read_file) when you need a "
                f"detail this summary leaves out."
            )
        text = (
            f"The conversation so far grew too long, so its first {folded} messages were "
            f"summarized. {where}\n\n{made.text}"
        )
        new_summary = HumanMessage(
            content=text, id=made.id, additional_kwargs=dict(made.additional_kwargs)
        )
        result: dict[str, Any] = {
            "messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), new_summary, *kept]
        }
        if (request.state or {}).get(SESSION_KEY) != session:
            result[SESSION_KEY] = session
        done.append(result)
        return {
            "messages_folded": folded,
            "tokens_before": total,
            "tokens_after": self._count(
                request.system_message, [new_summary, *kept], request.tools
            ),
            "history_path": path if saved else None,
            "summary": made.text,
        }


def _takes_tools(counter: Any) -> bool | None:
    """Whether ``counter`` takes a ``tools`` keyword; ``None`` when its signature is unknown."""
    try:
        parameters = inspect.signature(counter).parameters.values()
    except (TypeError, ValueError):
        return None
    named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return any(
        p.kind is p.VAR_KEYWORD or (p.name == "tools" and p.kind in named) for p in parameters
    )


def _extended(response: ModelResponse[Any], update: dict[str, Any]) -> ExtendedModelResponse[Any]:
    """The model's response, and the state update that puts the summary in place of the folded
    messages. LangChain applies a middleware's update after the response's own, so the update
    ends with the response's messages, which its ``RemoveMessage`` would otherwise drop."""
    messages = [*update["messages"], *response.result]
    return ExtendedModelResponse(
        model_response=response, command=Command(update={**update, "messages": messages})
    )


def _unsummarized(messages: list[AnyMessage]) -> list[AnyMessage]:
    """``messages`` without the summaries made earlier: what those summarized is already in
    the history file."""
    return [m for m in messages if m.additional_kwargs.get("lc_source") != "summarization"]


def _session(state: Any) -> str:
    existing = (state or {}).get(SESSION_KEY)
    if isinstance(existing, str) and existing:
        return existing
    return f"session_{uuid.uuid4().hex}"


def _section(messages: list[AnyMessage]) -> str:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    body = get_buffer_string(messages, format="xml")
    return f"## {len(messages)} messages summarized at {stamp}\n\n{body}\n\n"


def _text(responses: list[FileDownloadResponse]) -> str:
    (response,) = responses
    if response.error is not None or response.content is None:
        return ""
    return response.content.decode("utf-8", errors="replace")


def _kept(path: str, result: Any) -> bool:
    if result.error:
        log.warning("Could not save the summarized history to %s: %s", path, result.error)
    return not result.error


def _append(backend: BackendProtocol, path: str, section: str) -> bool:
    try:
        old = _text(backend.download_files([path]))
    except Exception:  # a backend that cannot tell: start the file
        old = ""
    try:
        result = backend.edit(path, old, old + section) if old else backend.write(path, section)
    except Exception as error:
        result = WriteResult(error=str(error))
    return _kept(path, result)


async def _aappend(backend: BackendProtocol, path: str, section: str) -> bool:
    try:
        old = _text(await backend.adownload_files([path]))
    except Exception:
        old = ""
    try:
        if old:
            result: Any = await backend.aedit(path, old, old + section)
        else:
            result = await backend.awrite(path, section)
    except Exception as error:
        result = WriteResult(error=str(error))
    return _kept(path, result)


def create_summarization_middleware(
    model: BaseChatModel,
    backend: BackendLike | None = None,
    *,
    summary_prompt: str = DEFAULT_SUMMARY_PROMPT,
    trim_tokens_to_summarize: int | None = None,
    token_counter: Any = count_tokens_approximately,
    summarizer: Any = None,
) -> SummarizationMiddleware:
    """A ``SummarizationMiddleware`` for ``model`` with deepagents' defaults (see
    ``summarization_defaults``); the whole folded history goes to the summarizer."""
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            f"create_summarization_middleware needs a BaseChatModel instance, not "
            f"{type(model).__name__}: resolve a model name with init_chat_model first."
        )
    trigger, keep = summarization_defaults(model)
    return SummarizationMiddleware(
        model,
        backend=backend,
        trigger=trigger,
        keep=keep,
        token_counter=token_counter,
        summary_prompt=summary_prompt,
        trim_tokens_to_summarize=trim_tokens_to_summarize,
        summarizer=summarizer,
    )
