"""How a view words and bounds text: limits, one-line previews, durations and token counts."""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "CONVERSATION_TEXT",
    "CONVERSATION_TURNS",
    "DETAIL_LIMIT",
    "FOLD_CHARS",
    "FOLD_LINES",
    "INPUT_MESSAGES",
    "LABEL_LIMIT",
    "MESSAGE_LIMIT",
    "SYSTEM_LIMIT",
    "as_text",
    "compact_json",
    "dumps",
    "format_duration",
    "format_tokens",
    "pretty_json",
    "short",
    "truncate",
]

LABEL_LIMIT = 80
"""Longest text shown in a tree line or a table cell."""
DETAIL_LIMIT = 10_000
"""Longest text shown in a details pane; the full text stays in the trace data."""
MESSAGE_LIMIT = 1_000
"""Longest message content in a model call's input messages (its reply is shown in full)."""
SYSTEM_LIMIT = 300
"""Longest system prompt shown with a model call: it repeats on every call of an agent."""
INPUT_MESSAGES = 4
"""A model call shows this many of its latest input messages (the rest are counted)."""

CONVERSATION_TEXT = 4_000
"""Longest text of one message in a conversation view (the transcript has it whole)."""
CONVERSATION_TURNS = 200
"""Entries of one agent's conversation a view holds: its first page. The static snapshot counts
the rest; the live view asks the kernel for them a page at a time, and a saved view holds them
(:mod:`nbagents.display._saved`), so a patch never carries a long transcript whole."""
FOLD_CHARS = 400
"""A conversation text longer than this (or of more than ``FOLD_LINES`` lines) is folded."""
FOLD_LINES = 8

# -- formatting -------------------------------------------------------------------------------


def short(text: Any, limit: int = LABEL_LIMIT) -> str:
    """One line, whitespace collapsed, at most ``limit`` characters (``…`` marks a cut)."""
    flat = " ".join(as_text(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 1, 0)] + "…"


def truncate(text: Any, limit: int = DETAIL_LIMIT) -> str:
    """``text`` as it is, cut at ``limit`` characters with a note of how much was left out."""
    full = as_text(text)
    if len(full) <= limit:
        return full
    return f"{full[:limit]}… [{len(full) - limit} more characters]"


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return "…"
    # Thresholds sit where rounding would carry over: 9.996 is "10.0 s", 59.96 is "1 min 00 s".
    if seconds < 9.995:
        return f"{seconds:.2f} s"
    if seconds < 59.95:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def format_tokens(n: int) -> str:
    return f"{n:,}"


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return pretty_json(value)


# One encoder each: ``json.dumps`` with any option makes a new one per call, which cost a view
# as much as encoding the small values it shows (a tool call's arguments).
dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""A view's records as compact JSON text."""
_pretty = json.JSONEncoder(ensure_ascii=False, indent=1, sort_keys=True, default=str).encode
_compact = json.JSONEncoder(ensure_ascii=False, sort_keys=True, default=str).encode


def pretty_json(value: Any) -> str:
    try:
        return _pretty(value)
    except (TypeError, ValueError):
        return str(value)


def compact_json(value: Any) -> str:
    try:
        return _compact(value)
    except (TypeError, ValueError):
        return str(value)
