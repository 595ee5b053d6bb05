"""Transcripts: what one agent saw and said, in order (``_transcript_read`` builds them).

A transcript is a sequence of LangChain messages with richer entries beside them (approvals,
failures, notes, turns, tokens, links to sub-agents' transcripts).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from langchain_core.messages import BaseMessage

from nbagents._tokens import TokenUsage
from nbagents.tracing.messages import compact_json, message_text, to_message, tool_calls
from nbagents.tracing.span import SpanStatus

__all__ = ["EntryKind", "Transcript", "TranscriptEntry", "TranscriptMatch"]

EntryKind = Literal["system", "input", "reply", "tool", "approval", "error", "note"]
"""What an entry is: the system prompt; a message the agent started from (or a human message
that arrived later); a model reply; a tool result; a pause for a human; a failure; a note on
what the record lacks or the step still running."""


@dataclass(frozen=True)
class TranscriptEntry:
    """One step of a transcript. ``message`` is set for messages (system prompt, input,
    replies, tool results), in the form the trace stores them (``type``, ``content``,
    ``tool_calls``, ``tool_call_id``, ``name``, ``status``); :meth:`to_message` makes it a
    LangChain message."""

    kind: EntryKind
    turn: int
    """The model call this entry belongs to, from 1: its reply and the tool results of that
    reply; 0 for the system prompt and the messages the agent started from."""
    message: Mapping[str, Any] | None = None
    text: str = ""
    """What an approval, a failure or a note says (empty for a message: see ``content``)."""
    span_id: str | None = None
    """The step it came from: the model call of a reply, the tool call of a result, the span
    that paused or failed."""
    usage: TokenUsage = field(default_factory=TokenUsage)
    """A reply's tokens (its model call's); zero for other entries."""
    subagent_id: str | None = None
    """A ``task`` result's: the span id of the sub-agent it spawned (its transcript's id)."""
    subagent: str = ""
    """A ``task`` result's: that sub-agent as ``type: task``."""
    skill: str | None = None
    """A tool result that loaded a skill: the skill's name."""
    final: bool = False
    """The agent's final answer: its last reply, which called no tool."""

    @property
    def content(self) -> str:
        """The message's text (content blocks joined), or the entry's :attr:`text`."""
        return message_text(self.message) if self.message is not None else self.text

    @property
    def tool_calls(self) -> list[Mapping[str, Any]]:
        """A reply's tool calls as stored (``name``, ``args``, ``id``)."""
        return tool_calls(self.message) if self.message is not None else []

    def searchable(self) -> str:
        """Every text of the entry a search looks in: content, tool names and arguments."""
        parts = [self.content]
        for call in self.tool_calls:
            parts += [str(call.get("name") or ""), compact_json(call.get("args"))]
        if self.message is not None and self.message.get("name"):
            parts.append(str(self.message["name"]))
        return "\n".join(p for p in parts if p)

    def to_message(self) -> BaseMessage | None:
        """The entry's message as a LangChain message; ``None`` for other entries."""
        return to_message(self.message) if self.message is not None else None


@dataclass(frozen=True, repr=False)
class TranscriptMatch:
    """Where a search found its text: which agent, which turn, which entry."""

    transcript: Transcript
    entry: TranscriptEntry
    index: int
    """The entry's position in ``transcript.entries``."""
    start: int
    """Where the match starts in ``entry.searchable()``."""

    @property
    def snippet(self) -> str:
        """The match with up to 40 characters either side, on one line."""
        text = self.entry.searchable()
        lo = max(self.start - 40, 0)
        hi = self.start + 80
        cut = " ".join(text[lo:hi].split())
        return ("…" if lo else "") + cut + ("…" if hi < len(text) else "")

    def __repr__(self) -> str:
        return (
            f"<TranscriptMatch in {self.transcript.title!r}, turn {self.entry.turn}, "
            f"{self.entry.kind}: {self.snippet!r}>"
        )


@dataclass(frozen=True, eq=False)
class Transcript(Sequence[BaseMessage]):
    """The conversation of one agent: what it saw and said, in order.

    A sequence of LangChain messages (``list(transcript)``, ``transcript[-1]``): the system
    prompt, the messages it started from, each reply and each tool result. :attr:`entries`
    holds the same steps and more (approvals, failures, notes) with their turn, tokens and
    links; :meth:`to_markdown` writes it for a report or a pull request.
    """

    span_id: str
    """The agent's span id: what ``trace.transcript()`` takes to find it again."""
    agent: str
    """The agent's name (a sub-agent's type)."""
    kind: Literal["agent", "subagent"]
    task: str
    """A sub-agent's task (the ``task`` call's description); empty for the main agent."""
    status: SpanStatus
    parent_id: str | None
    """The span id of the agent that spawned this one (``None`` for the main agent)."""
    depth: int
    entries: tuple[TranscriptEntry, ...]

    @property
    def messages(self) -> list[BaseMessage]:
        """The messages, in order, as LangChain messages (a new list each time)."""
        return [m for m in (e.to_message() for e in self.entries) if m is not None]

    @overload
    def __getitem__(self, index: int) -> BaseMessage: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[BaseMessage]: ...
    def __getitem__(self, index: int | slice) -> BaseMessage | Sequence[BaseMessage]:
        return self.messages[index]

    def __len__(self) -> int:
        return sum(1 for e in self.entries if e.message is not None)

    def __iter__(self) -> Iterator[BaseMessage]:
        return iter(self.messages)

    @property
    def title(self) -> str:
        """``researcher: Research alpha``, or the main agent's name."""
        return f"{self.agent}: {self.task}" if self.task else self.agent

    @property
    def turns(self) -> int:
        """How many model calls the agent made."""
        return max((e.turn for e in self.entries), default=0)

    def usage(self) -> TokenUsage:
        """Tokens of the agent's own model calls (what its replies cost)."""
        return sum((e.usage for e in self.entries if e.kind == "reply"), TokenUsage())

    @property
    def final_answer(self) -> str | None:
        """The text of the final answer, or ``None`` when the agent gave none (yet)."""
        return next((e.content for e in reversed(self.entries) if e.final), None)

    def find(self, text: str) -> list[TranscriptMatch]:
        """Every entry containing ``text`` (case-insensitive), first match of each."""
        needle = text.casefold()
        found = ((i, e, e.searchable().casefold().find(needle)) for i, e in enumerate(self.entries))
        return [TranscriptMatch(self, e, i, at) for i, e, at in found if at >= 0] if needle else []

    def to_markdown(self, *, fold: int = 1_500) -> str:
        """The transcript as Markdown: a heading per turn, each text in a fenced block, texts
        longer than ``fold`` characters (and the system prompt) folded in ``<details>``.

        Nothing is cut: a text the tracer cut already says so where it was cut.
        """
        from nbagents.tracing._transcript_md import transcript_markdown

        return transcript_markdown(self, fold=fold)

    def __repr__(self) -> str:
        return (
            f"<Transcript {self.title!r}: {len(self)} messages, {self.turns} turns, "
            f"{self.usage().total} tokens, {self.status}>"
        )
