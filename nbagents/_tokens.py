"""Token counts: the one type every layer adds up, built from LangChain's ``UsageMetadata``.

Model calls report ``usage_metadata`` (langchain-core's ``UsageMetadata``); the tracer keeps a
:class:`TokenUsage` per model span and the ``task`` tool sums the sub-agent's into its artifact.
The artifact stores the counts as plain :class:`TokenCounts` dicts so that a ToolMessage stays
JSON data.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.messages.ai import UsageMetadata

__all__ = ["NO_TOKENS", "TokenCounts", "TokenUsage"]


class TokenCounts(TypedDict):
    """Token counts as a ``task`` ToolMessage's artifact carries them."""

    input: int
    output: int
    total: int


@dataclass(frozen=True)
class TokenUsage:
    """Token counts of one model call, or a sum of them.

    ``input`` includes the tokens read from and written to the provider's prompt cache
    (``cache_read``, ``cache_write``), as LangChain counts them; providers bill those at their
    own prices.
    """

    input: int = 0
    output: int = 0
    total: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input + other.input,
            self.output + other.output,
            self.total + other.total,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
        )

    def __bool__(self) -> bool:
        return bool(self.input or self.output or self.total or self.cache_read or self.cache_write)

    @classmethod
    def from_usage_metadata(cls, usage: UsageMetadata | Mapping[str, Any] | None) -> TokenUsage:
        """From LangChain's ``usage_metadata`` (``input_tokens``, ``output_tokens``, …)."""
        if not usage:
            return cls()
        details = usage.get("input_token_details") or {}
        inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        return cls(
            input=inp,
            output=out,
            total=int(usage.get("total_tokens", inp + out)),
            cache_read=int(details.get("cache_read", 0) or 0),
            cache_write=int(details.get("cache_creation", 0) or 0),
        )

    @classmethod
    def from_messages(cls, messages: Iterable[Any]) -> TokenUsage:
        """The sum of ``usage_metadata`` over the AI messages among ``messages``."""
        total = cls()
        for message in messages:
            if isinstance(message, AIMessage):
                total = total + cls.from_usage_metadata(message.usage_metadata)
        return total

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> TokenUsage:
        """From an artifact's :class:`TokenCounts`."""
        return cls(
            input=int(counts.get("input", 0)),
            output=int(counts.get("output", 0)),
            total=int(counts.get("total", 0)),
        )

    def counts(self) -> TokenCounts:
        """As an artifact carries them (no cache details)."""
        return TokenCounts(input=self.input, output=self.output, total=self.total)


NO_TOKENS = TokenUsage()
"""Zero tokens: the usage of every span that is not a model call. Shared, as a frozen value
can be, rather than made for each span."""
