"""Token counts: the one type every layer adds up, built from LangChain's ``UsageMetadata``.

Model calls report ``usage_metadata`` (langchain-core's ``UsageMetadata``); the tracer keeps a
:class:`TokenUsage` per model span and the ``task`` tool sums the sub-agent's into its artifact.
The artifact stores the counts as plain :class:`TokenCounts` dicts so that a ToolMessage stays
JSON data.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
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
    own prices. ``cache_write_1h`` is the part of ``cache_write`` written to a one-hour cache
    (Anthropic's, billed higher than its five-minute writes).

    ``output`` includes ``reasoning``: the tokens a reasoning model spent thinking before it
    answered (OpenAI's reasoning tokens, Anthropic's thinking, Gemini's thoughts), which are
    billed as output but never shown.
    """

    input: int = 0
    output: int = 0
    total: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    cache_write_1h: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*map(operator.add, vars(self).values(), vars(other).values()))

    def __sub__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(*map(operator.sub, vars(self).values(), vars(other).values()))

    def __bool__(self) -> bool:
        return any(vars(self).values())

    @classmethod
    def from_usage_metadata(cls, usage: UsageMetadata | Mapping[str, Any] | None) -> TokenUsage:
        """From LangChain's ``usage_metadata`` (``input_tokens``, ``output_tokens``, …).

        The details come from ``input_token_details`` (``cache_read``, ``cache_creation``) and
        ``output_token_details`` (``reasoning``), where every LangChain provider package puts
        them. Two spellings of the same counts are read too: langchain-openai prefixes them
        with the service tier (``priority_reasoning``, ``flex_cache_read``), and
        langchain-anthropic reports cache writes by lifetime (``ephemeral_5m_input_tokens``,
        ``ephemeral_1h_input_tokens``) and then sets ``cache_creation`` to zero (the larger of
        the two readings is kept, so a version that reports both is not counted twice).
        """
        if not usage:
            return cls()
        inputs = usage.get("input_token_details") or {}
        outputs = usage.get("output_token_details") or {}
        inp, out = int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        one_hour = _count(inputs, "ephemeral_1h_input_tokens")
        return cls(
            input=inp,
            output=out,
            total=int(usage.get("total_tokens", inp + out)),
            cache_read=_tiered(inputs, "cache_read"),
            cache_write=max(
                _tiered(inputs, "cache_creation"),
                _count(inputs, "ephemeral_5m_input_tokens") + one_hour,
            ),
            reasoning=_tiered(outputs, "reasoning"),
            cache_write_1h=one_hour,
        )

    @classmethod
    def from_messages(cls, messages: Iterable[Any]) -> TokenUsage:
        """The sum of ``usage_metadata`` over the AI messages among ``messages``."""
        usages = (
            cls.from_usage_metadata(m.usage_metadata) for m in messages if isinstance(m, AIMessage)
        )
        return sum(usages, cls())

    @classmethod
    def from_counts(cls, counts: Mapping[str, Any]) -> TokenUsage:
        """From an artifact's :class:`TokenCounts`."""
        return cls(
            input=int(counts.get("input", 0)),
            output=int(counts.get("output", 0)),
            total=int(counts.get("total", 0)),
        )

    def to_dict(self) -> dict[str, int]:
        """As a trace file stores them. The counts added after the file format was first
        released (``reasoning``, ``cache_write_1h``) are written only when not zero: a trace
        without them stays readable by the earlier versions, which reject keys they do not
        know. A file that lacks them reads as zero."""
        return {k: v for k, v in asdict(self).items() if v or k not in _NEWER_FIELDS}

    def counts(self) -> TokenCounts:
        """As an artifact carries them (no cache details)."""
        return TokenCounts(input=self.input, output=self.output, total=self.total)


def _count(details: Mapping[str, Any], key: str) -> int:
    """``details[key]`` as a count: missing, ``None`` or anything but a positive number is 0."""
    value = details.get(key)
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value)
    return 0


def _tiered(details: Mapping[str, Any], key: str) -> int:
    """``key``'s count, whichever service tier langchain-openai filed it under."""
    return sum(_count(details, name) for name in (key, *(f"{t}_{key}" for t in _TIERS)))


_NEWER_FIELDS = ("reasoning", "cache_write_1h")

_TIERS = ("priority", "flex")
"""The service tiers whose counts langchain-openai files under prefixed keys."""


NO_TOKENS = TokenUsage()
"""Zero tokens: the usage of every span that is not a model call. Shared, as a frozen value
can be, rather than made for each span."""
