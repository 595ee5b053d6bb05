"""The ``messages`` channel of the agents nbagents builds takes a step's writes in one merge.

LangGraph's reducer channel applies a step's writes one at a time, each ``add_messages`` call
copying and indexing the whole list: N parallel ``task`` results ending in one step cost O(N²).
When no write removes a message, ``add_messages`` of the concatenated writes gives the same list,
so :class:`BatchedMessages` merges such a step at once and leaves any other to LangGraph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.graph.message import add_messages

__all__ = ["BatchedMessages", "batch_message_writes"]

G = TypeVar("G")


class BatchedMessages(BinaryOperatorAggregate):  # type: ignore[type-arg]
    """``add_messages`` over all of a step's writes at once (see the module's docstring)."""

    def update(self, values: Sequence[Any]) -> bool:
        if len(values) < 2 or self.operator is not add_messages or not self.is_available():
            return bool(super().update(values))
        written: list[Any] = []  # add_messages takes any message-like; these are messages
        for value in values:
            items = value if isinstance(value, list) else [value]
            for item in items:
                if not isinstance(item, BaseMessage) or isinstance(item, RemoveMessage):
                    return bool(super().update(values))  # LangGraph's loop decides these
                written.append(item)
        self.value = add_messages(self.value, written)
        return True


def batch_message_writes(graph: G) -> G:
    """``graph`` (a compiled agent) with its ``messages`` channel batched, if it is LangGraph's
    ``add_messages`` channel; any other channel is left as it is."""
    channels = getattr(graph, "channels", None)
    if not isinstance(channels, dict):
        return graph
    channel = channels.get("messages")
    if type(channel) is BinaryOperatorAggregate and channel.operator is add_messages:
        batched = BatchedMessages(channel.typ, channel.operator)
        batched.key = channel.key
        channels["messages"] = batched
    return graph
