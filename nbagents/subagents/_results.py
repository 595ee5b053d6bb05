"""Turning a finished sub-agent run into what the parent sees: content, state update, artifact."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from langchain_core.messages import AIMessage, ToolMessage
from pydantic_core import to_jsonable_python

from nbagents._tokens import TokenCounts, TokenUsage

__all__ = ["StateDiff", "SubAgentArtifact", "TokenCounts", "result_text"]


class StateDiff(TypedDict):
    """Which parent state keys the sub-agent was given and which it gave back."""

    withheld: dict[str, str]
    """Excluded keys present in the parent state → their size ("messages: 12 items")."""
    passed: dict[str, str]
    """Keys copied into the sub-agent's input → their size."""
    returned: list[str]
    """Keys whose new values the sub-agent sent back to the parent (``messages`` aside)."""


class SubAgentArtifact(TypedDict):
    """The ``artifact`` of a ``task`` ToolMessage."""

    subagent: str
    description: str
    status: str
    """``"ok"``, ``"error"``, or ``"limit"`` when one of its limits stopped it."""
    depth: int
    duration_s: float
    tokens: TokenCounts
    """Tokens of the sub-agent's own model calls."""
    tokens_including_descendants: TokenCounts
    state: StateDiff
    error: str | None


def result_text(result: Mapping[str, Any], name: str) -> str:
    """JSON of ``structured_response`` when set, else the last non-empty AI message's text."""
    structured = result.get("structured_response")
    if structured is not None:
        plain = to_jsonable_python(structured, fallback=str)
        return json.dumps(plain, ensure_ascii=False)
    for message in reversed(result["messages"]):
        if isinstance(message, AIMessage) and message.text.strip():
            return message.text.rstrip()
    return f"Sub-agent {name!r} finished without a text answer."


def nested_tokens(messages: Sequence[Any]) -> TokenUsage:
    """Tokens reported by nested ``task`` calls' artifacts in a conversation."""
    total = TokenUsage()
    for m in messages:
        artifact = getattr(m, "artifact", None) if isinstance(m, ToolMessage) else None
        if isinstance(artifact, Mapping) and "tokens_including_descendants" in artifact:
            total = total + TokenUsage.from_counts(artifact["tokens_including_descendants"])
    return total
