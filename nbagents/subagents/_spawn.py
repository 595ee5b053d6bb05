"""Running one sub-agent: isolate its input, invoke it, and package what comes back."""

from __future__ import annotations

import functools
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableConfig, ensure_config
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from langsmith.run_helpers import get_tracing_context, tracing_context

from nbagents._contract import (
    DEPTH_KEY,
    FORK_TASK_ID_PREFIX,
    SPAWN_KEY,
    TASK_TOOL,
    LimitReached,
    SpawnRecord,
    describe_size,
)
from nbagents._gc import in_flight
from nbagents._tokens import TokenUsage
from nbagents.subagents._results import StateDiff, SubAgentArtifact, nested_tokens, result_text
from nbagents.subagents._stop import run_stoppable, stop_check
from nbagents.subagents.limits import LimitGuard, Limits, StepGuard, guarded_config

__all__ = ["SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY", "OnError", "Spawn"]

OnError = Literal["return", "raise"]

SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY = "__deepagents_subagent_response_format"
"""``configurable`` key of a ``task`` call's config naming the response format of that call's
sub-agent (deepagents' key, so a caller written for upstream works unchanged)."""


@dataclass(frozen=True)
class Spawn:
    """One ``task`` call about to run: everything known before the sub-agent starts."""

    name: str
    description: str
    runnable: Runnable[Any, Any]
    parent_state: Mapping[str, Any]
    tool_call_id: str
    depth: int
    excluded: Collection[str]
    on_error: OnError
    accumulating: Collection[str] = ()  # keys with a reducer: they get what was added
    deleting: Collection[str] = ()  # of those, keys that get None for each entry removed
    limits: Limits | None = None  # the spec's: each run gets a guard of its own
    fork: bool = False  # "mode": "fork": start from the parent's conversation so far
    compiled: bool = False
    """A ``CompiledSubAgent``: its own smaller ``recursion_limit`` holds, and it does not admit
    its model calls (nbagents did not build it), so a :class:`StepGuard` stops it at its next
    step."""
    response_format: str | None = None  # the name of the format the caller chose, for the trace

    def child_input(self) -> dict[str, Any]:
        state = {k: v for k, v in self.parent_state.items() if k not in self.excluded}
        if not self.fork:
            state["messages"] = [HumanMessage(content=self.description)]
            return state
        # Copies, so that parallel forks never share a message object a graph may update.
        inherited = [m.model_copy() for m in self._inherited()]
        task = HumanMessage(content=self.description, id=FORK_TASK_ID_PREFIX + self.tool_call_id)
        state["messages"] = [*inherited, task]
        return state

    def _inherited(self) -> list[BaseMessage]:
        """The parent's conversation before the AI message that makes this ``task`` call.

        That message is left out: its tool calls have no answers yet, which providers refuse.
        """
        messages = [
            m for m in self.parent_state.get("messages") or () if isinstance(m, BaseMessage)
        ]
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AIMessage) and any(
                c.get("id") == self.tool_call_id for c in message.tool_calls
            ):
                return messages[:index]
        return messages

    def child_config(self) -> RunnableConfig:
        withheld, passed = self._sizes
        # The caller's tags and metadata (a customer id, a session) reach the sub-agent, as
        # upstream's do: LangGraph graphs would merge them anyway, other runnables would not.
        parent = ensure_config()
        config = RunnableConfig(
            run_name=self.name,
            tags=list(parent.get("tags") or []),
            metadata={
                **(parent.get("metadata") or {}),
                "lc_agent_name": self.name,
                DEPTH_KEY: self.depth,
                SPAWN_KEY: SpawnRecord(
                    subagent=self.name,
                    description=self.description,
                    depth=self.depth,
                    tool_call_id=self.tool_call_id,
                    withheld=withheld,
                    passed=passed,
                    response_format=self.response_format,
                ),
            },
        )
        if "recursion_limit" in parent:
            # The caller's bound on steps holds in every graph of its run: LangGraph would
            # give a sub-agent invoked from a tool its own default. A compiled sub-agent's own
            # smaller bound (runnable.with_config(recursion_limit=...)) holds too, as upstream.
            own = _own_recursion_limit(self.runnable) if self.compiled else None
            limit = parent["recursion_limit"]
            config["recursion_limit"] = limit if own is None else min(limit, own)
        if (parent.get("configurable") or {}).get(SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY) is not None:
            # The format is what the caller wants back from this call; the sub-agent's own
            # delegations answer it in whatever form it asks for.
            config["configurable"] = {SUBAGENT_RESPONSE_FORMAT_CONFIG_KEY: None}
        # Handlers of the sub-agent's own go first (see guarded_config); a config's own
        # callbacks replace the caller's in a plain runnable, so the caller's are passed on.
        kind = StepGuard if self.compiled else LimitGuard
        guard = kind(self.limits, f"sub-agent {self.name!r}") if self.limits else None
        handlers = [h for h in (stop_check(), guard) if h is not None]
        if handlers:
            config = guarded_config({**config, "callbacks": parent.get("callbacks")}, *handlers)
        return config

    def run(self) -> Command[Any] | ToolMessage:
        started, sent = time.perf_counter(), self.child_input()
        try:
            config = self.child_config()
            with _marked_for_langsmith(), in_flight():
                result = run_stoppable(lambda: self.runnable.invoke(sent, config))
            return self._finish(result, sent, started)
        except Exception as error:
            return self._failed(error, started)

    async def arun(self) -> Command[Any] | ToolMessage:
        started, sent = time.perf_counter(), self.child_input()
        try:
            config = self.child_config()
            with _marked_for_langsmith(), in_flight():
                result = await self.runnable.ainvoke(sent, config)
            return self._finish(result, sent, started)
        except Exception as error:
            return self._failed(error, started)

    def _finish(self, result: Any, sent: Mapping[str, Any], started: float) -> Command[Any]:
        if not isinstance(result, Mapping) or "messages" not in result:
            got = f"keys {sorted(result)}" if isinstance(result, Mapping) else type(result).__name__
            raise ValueError(
                f"Sub-agent {self.name!r} must return a state with a 'messages' key; it returned "
                f"{got}."
            )
        messages = result["messages"]
        # Only changed keys go back: unchanged copies from parallel siblings would otherwise
        # collide as concurrent updates of the same parent key.
        update = {
            k: _added(sent[k], v, removes=k in self.deleting)
            if k in sent and k in self.accumulating
            else v
            for k, v in result.items()
            if k not in self.excluded and (k not in sent or _changed(sent[k], v))
        }
        own = TokenUsage.from_messages(messages)
        artifact = self._artifact(
            "ok", started, own, own + nested_tokens(messages), sorted(update), None
        )
        message = ToolMessage(
            content=result_text(result, self.name),
            tool_call_id=self.tool_call_id,
            name=TASK_TOOL,
            artifact=artifact,
        )
        return Command(update={**update, "messages": [message]})

    def _failed(self, error: Exception, started: float) -> ToolMessage:
        # Interrupts and parent commands must reach LangGraph, which pauses or reroutes the run.
        # A limit is the caller's rule, not the sub-agent's fault: never raised, whatever
        # on_subagent_error says, so that parallel siblings finish.
        limited = isinstance(error, LimitReached)
        if isinstance(error, GraphBubbleUp) or (self.on_error == "raise" and not limited):
            raise error
        if limited:
            text = (
                f"Sub-agent {self.name!r} stopped before its next model call: {error}. "
                f"Its work is lost; do the rest yourself or give it a smaller task."
            )
        else:
            text = f"Sub-agent {self.name!r} failed: {type(error).__name__}: {error}"
        status = "limit" if limited else "error"
        return ToolMessage(
            content=text,
            tool_call_id=self.tool_call_id,
            name=TASK_TOOL,
            status="error",
            artifact=self._artifact(status, started, TokenUsage(), TokenUsage(), [], text),
        )

    def _artifact(
        self,
        status: str,
        started: float,
        own: TokenUsage,
        total: TokenUsage,
        returned: list[str],
        error: str | None,
    ) -> SubAgentArtifact:
        withheld, passed = self._sizes
        return SubAgentArtifact(
            subagent=self.name,
            description=self.description,
            status=status,
            depth=self.depth,
            duration_s=round(time.perf_counter() - started, 6),
            tokens=own.counts(),
            tokens_including_descendants=total.counts(),
            state=StateDiff(withheld=withheld, passed=passed, returned=returned),
            error=error,
        )

    @functools.cached_property
    def _sizes(self) -> tuple[dict[str, str], dict[str, str]]:
        """The parent keys withheld from and passed to the sub-agent, with their sizes."""
        withheld: dict[str, str] = {}
        passed: dict[str, str] = {}
        for key, value in self.parent_state.items():
            (withheld if key in self.excluded else passed)[key] = describe_size(value)
        if self.fork:
            withheld.pop("messages", None)
            n = len(self._inherited())
            passed["messages"] = f"inherited {n} message" + ("" if n == 1 else "s")
        return withheld, passed


@contextmanager
def _marked_for_langsmith() -> Iterator[None]:
    """Mark the runs inside as a sub-agent's for LangSmith (``ls_agent_type="subagent"``, its
    filter), as upstream deepagents does: through LangSmith's tracing context, which only its
    tracer reads, so the metadata callbacks and streams see is the caller's own."""
    current = get_tracing_context()
    metadata = {**(current.get("metadata") or {}), "ls_agent_type": "subagent"}
    with tracing_context(**{**current, "metadata": metadata}):
        yield


def _own_recursion_limit(runnable: Runnable[Any, Any]) -> int | None:
    """The ``recursion_limit`` a runnable was configured with (a compiled graph's config, or a
    ``with_config`` binding's), if any."""
    while True:
        config = getattr(runnable, "config", None)
        if isinstance(config, Mapping) and isinstance(config.get("recursion_limit"), int):
            return int(config["recursion_limit"])
        if not isinstance(runnable, RunnableBinding):
            return None
        runnable = runnable.bound


def _added(before: Any, after: Any, *, removes: bool = False) -> Any:
    """What a sub-agent added to a value the parent accumulates with a reducer (its whole value
    would repeat what the parent has); with ``removes``, the entries it removed as ``None``."""
    if isinstance(before, list) and isinstance(after, list) and after[: len(before)] == before:
        return after[len(before) :]
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        gone = dict.fromkeys(k for k in before if k not in after) if removes else {}
        return gone | {k: v for k, v in after.items() if k not in before or _changed(before[k], v)}
    return after


def _changed(before: Any, after: Any) -> bool:
    if before is after:
        return False
    try:
        return not bool(before == after)
    except Exception:
        # Values such as DataFrames compare element-wise and have no single truth value.
        return True
