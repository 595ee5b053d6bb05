"""What an agent's Conversation view shows: its transcript as bounded view records.

The transcript (:mod:`nbagents.tracing._transcript`) is the data; this decides the labels,
the cut of long texts (said where it happens) and which texts fold, once, for both the static
snapshot and the live widget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from nbagents.display._format import (
    CONVERSATION_TEXT,
    CONVERSATION_TURNS,
    FOLD_CHARS,
    FOLD_LINES,
    MESSAGE_LIMIT,
    compact_json,
    format_tokens,
    short,
    truncate,
)
from nbagents.display._records import (
    TURN_KINDS,
    ConversationPage,
    ConversationView,
    ToolCallView,
    TurnView,
)

if TYPE_CHECKING:
    from nbagents.tracing import Transcript, TranscriptEntry

__all__ = ["conversation_page", "conversation_view", "page_count"]

KeyOf = Callable[[str | None], str | None]
"""A span id → its view node id (``None`` when the view does not show it)."""


def conversation_view(
    transcript: Transcript, key_of: KeyOf, title_of: Callable[[str], str]
) -> ConversationView:
    """``transcript`` as a :class:`ConversationView`: its first page of ``CONVERSATION_TURNS``
    entries, each text cut at ``CONVERSATION_TEXT`` characters (the cut said). ``title_of``
    names the sub-agent a ``task`` result links to."""
    turns = conversation_page(transcript, 0, key_of, title_of)["turns"]
    return {
        "turns": turns,
        "left_out": len(transcript.entries) - len(turns),
        "messages": len(transcript),
        "model_calls": transcript.turns,
        "entries": len(transcript.entries),
        "page_size": CONVERSATION_TURNS,
    }


def page_count(entries: int) -> int:
    """How many pages a transcript of ``entries`` entries fills (one, empty, for none)."""
    return max(1, -(-entries // CONVERSATION_TURNS))


def conversation_page(
    transcript: Transcript, page: int, key_of: KeyOf, title_of: Callable[[str], str]
) -> ConversationPage:
    """Page ``page`` (from 0) of ``transcript``'s entries: a page past the end is empty, and
    says how many entries there are."""
    entries = transcript.entries
    page = max(page, 0)
    sub = transcript.kind == "subagent"
    shown = entries[page * CONVERSATION_TURNS : (page + 1) * CONVERSATION_TURNS]
    turns = [_turn(e, key_of, title_of, sub) for e in shown]
    return {"page": page, "turns": turns, "entries": len(entries)}


def _turn(
    entry: TranscriptEntry, key_of: KeyOf, title_of: Callable[[str], str], sub: bool
) -> TurnView:
    message = entry.message or {}
    content = truncate(entry.content, CONVERSATION_TEXT)
    calls: list[ToolCallView] = [
        {
            "name": short(c.get("name"), 60),
            "args": truncate(compact_json(c.get("args")), MESSAGE_LIMIT),
        }
        for c in entry.tool_calls
    ]
    meta = ""
    if entry.kind == "reply":
        u = entry.usage
        meta = f"turn {entry.turn}"
        if u:
            meta += f" · {format_tokens(u.input)} in · {format_tokens(u.output)} out"
    link = key_of(entry.subagent_id) if entry.subagent_id else None
    return {
        "kind": entry.kind if entry.kind in TURN_KINDS else "note",
        "turn": entry.turn,
        "label": _label(entry, message, sub),
        "meta": meta,
        "content": content,
        "fold": entry.kind == "system"
        or len(content) > FOLD_CHARS
        or content.count("\n") >= FOLD_LINES,
        "tool_calls": calls,
        "error": entry.kind == "error" or message.get("status") == "error",
        "link": link,
        "link_label": short(title_of(entry.subagent_id), 80) if entry.subagent_id else "",
        "step": key_of(entry.span_id),
    }


def _label(entry: TranscriptEntry, message: Mapping[str, object], sub: bool) -> str:
    kind = entry.kind
    if kind == "system":
        return "system prompt"
    if kind == "input":
        role = str(message.get("type") or "")
        if role in ("human", "user"):
            return "task" if sub and entry.turn == 0 else "user"
        return f"input · {role}"
    if kind == "reply":
        return "final answer" if entry.final else "AI"
    if kind == "tool":
        name = short(message.get("name") or "", 40)
        label = f"tool result · {name}" if name else "tool result"
        if entry.skill:
            label += f" · skill {short(entry.skill, 40)} loaded"
        return label + (" · error" if message.get("status") == "error" else "")
    return {"approval": "approval", "error": "failed", "note": "note"}.get(kind, kind)
