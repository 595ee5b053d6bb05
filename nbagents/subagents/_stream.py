"""How a sub-agent that failed under ``on_subagent_error="return"`` looks to stream consumers.

LangGraph's stream projections of sub-agents (``stream_events(version="v3")``'s
``run.subagents``, the ``lifecycle`` channel) report a sub-agent ``failed`` only when the
``task`` tool raised; under the default error policy it returns an error ``ToolMessage``.
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

    Before LangGraph's own transformers, it gives the call's ``tasks`` result event the failure's
    text as its ``error``. Only the streamed event changes: the state still gets the ToolMessage.
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
    """The error text of a sub-agent that ran and failed (or hit its limit) among the writes of
    one tool task; an unknown ``subagent_type`` or the depth limit started none."""
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
