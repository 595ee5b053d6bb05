"""How a sub-agent that failed under ``on_subagent_error="return"`` looks to stream consumers.

LangGraph's stream projections of sub-agents (``run.subagents`` of ``stream_events(version="v3")``,
``run.subgraphs``, and the ``lifecycle`` channel that LangGraph SDK clients read) take a sub-agent's
end status from the ``tasks`` event of the tool call that ran it: ``failed`` when that task
carries an ``error``, which LangGraph sets only when the task raised. Under nbagents' default
error policy the ``task`` tool does not raise -- the failure becomes an error ``ToolMessage`` so the
parent model can react to it -- so those projections would report ``completed``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from langchain_core.messages import ToolMessage
from langgraph.stream import ProtocolEvent, StreamTransformer

from nbagents._contract import TASK_TOOL

__all__ = ["SubAgentFailureTransformer", "channel_writes", "subagent_failure"]


class SubAgentFailureTransformer(StreamTransformer):
    """Marks the ``task`` call of a sub-agent that failed as a failed task in the stream.

    It runs before LangGraph's own transformers and gives the ``tasks`` result event of that call
    the failure's text as its ``error``, which they read as ``failed``. Only the streamed event is
    changed: the graph state, and so the parent model, still get the error ``ToolMessage``.
    ``SubAgentMiddleware`` declares it, so every agent built with the middleware streams this way.
    """

    # Must see each ``tasks`` event before LangGraph's transformers read its ``error``.
    before_builtins: ClassVar[bool] = True
    supports_sync: ClassVar[bool] = True
    required_stream_modes: ClassVar[tuple[str, ...]] = ("tasks",)

    def init(self) -> dict[str, Any]:
        return {}

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tasks":
            return True
        params = event["params"]
        data = params["data"]
        if not isinstance(data, Mapping) or "result" not in data:
            return True
        if data.get("error") or data.get("interrupts"):
            return True  # already failed or paused: LangGraph reports that itself
        failure = subagent_failure(data["result"])
        if failure is not None:
            # A new dict rather than an edit: other stream modes may hold the same payload.
            params["data"] = {**data, "error": failure}
        return True


STOPPED = frozenset({"error", "limit"})
"""A sub-agent's end, as its ``task`` artifact says, that stream consumers read as ``failed``:
one stopped by its limit did not complete its task either."""


def subagent_failure(result: Any) -> str | None:
    """The error text of a failed sub-agent among the writes of one tool task, if any.

    Only a sub-agent that ran and failed or was stopped by its limit counts (its ``task``
    ToolMessage has ``status="error"`` and an artifact whose status is ``"error"`` or
    ``"limit"``); an unknown ``subagent_type`` or the depth
    limit never started one, so no sub-agent is there to be reported failed.
    """
    if not isinstance(result, Mapping):
        return None
    for message in channel_writes(result.get("messages")):
        if (
            isinstance(message, ToolMessage)
            and message.name == TASK_TOOL
            and message.status == "error"
            and isinstance(message.artifact, Mapping)
            and message.artifact.get("status") in STOPPED
        ):
            return message.text
    return None


def channel_writes(value: Any) -> Iterator[Any]:
    """The values of one channel's writes: one value, a list, or LangGraph's ``$writes`` fold."""
    if isinstance(value, Mapping) and isinstance(value.get("$writes"), list):
        for write in value["$writes"]:
            yield from channel_writes(write)
    elif isinstance(value, list | tuple):
        yield from value
    elif value is not None:
        yield value
