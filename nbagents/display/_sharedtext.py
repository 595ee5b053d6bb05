"""Long texts of a view sent once: messages and conversation turns point to a table of them.

The same text comes back again and again in a run's view (a sub-agent's system prompt is in its
conversation and in every one of its model calls' inputs). So a message or turn whose
``content`` is at least :data:`SHARED_CHARS` long holds ``content_ref`` instead, the key of its
text in the view's ``texts`` table: a whole view carries the table, a patch the texts new since
the last update. :func:`fill_view` puts them back; ``static/live/`` does on intake.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SHARED_CHARS", "SharedTexts", "fill_node", "fill_view"]

SHARED_CHARS = 200
"""Content this long or longer goes in the table (a reference costs ~20 characters)."""


class SharedTexts:
    """One view's table of long texts, keyed by short ids in the order they were first seen."""

    def __init__(self) -> None:
        self.table: dict[str, str] = {}
        self._keys: dict[str, str] = {}

    def share(self, records: Iterable[Any], new: set[str]) -> None:
        """Replace each record's long ``content`` with a ``content_ref``; keys first made here
        are added to ``new`` (what the next patch must carry)."""
        for record in records:
            content = record.get("content")
            if not isinstance(content, str) or len(content) < SHARED_CHARS:
                continue
            key = self._keys.get(content)
            if key is None:
                key = self._keys[content] = str(len(self._keys))
                self.table[key] = content
                new.add(key)
            record["content"] = ""
            record["content_ref"] = key

    def details(self, fields: list[Any], new: set[str]) -> list[Any]:
        """``fields`` (a details pane) with its messages' long contents shared."""
        for field in fields:
            if field["type"] == "messages":
                self.share(field["value"], new)
        return fields


def _fill(records: Iterable[Any], texts: Mapping[str, str]) -> None:
    """Put back the content of each record that holds a ``content_ref``, in place."""
    for record in records:
        if isinstance(record, dict) and "content_ref" in record:
            record["content"] = texts.get(record.pop("content_ref"), "")


def fill_node(node: Any, texts: Mapping[str, str]) -> Any:
    """``node`` (a view node record) with every shared content put back, in place."""
    for field in node.get("details") or ():
        if field.get("type") == "messages" and isinstance(field.get("value"), list):
            _fill(field["value"], texts)
    conversation = node.get("conversation")
    if isinstance(conversation, dict) and isinstance(conversation.get("turns"), list):
        _fill(conversation["turns"], texts)
    return node


def fill_view(record: dict[str, Any], texts: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A view or patch as sent, parsed: its ``texts`` taken out and put back into its nodes (or
    ``texts`` given, a table that holds them), in place."""
    sent = record.pop("texts", None) or {}
    for node in record["nodes"]:
        fill_node(node, sent if texts is None else texts)
    return record
