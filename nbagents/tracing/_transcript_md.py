"""A transcript as Markdown, for a report or a pull request.

Every text that came from a model, a tool or state goes into a fenced code block (its fence
longer than any run of backticks in it) or an inline code span, so a renderer shows it as
text: a message holding HTML or Markdown cannot change the page it is pasted into. Long texts
fold in ``<details>``, which GitHub and most Markdown renderers support.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from nbagents.tracing._transcript import TranscriptEntry
from nbagents.tracing.messages import compact_json

if TYPE_CHECKING:
    from nbagents.tracing._transcript import Transcript

__all__ = ["transcript_markdown"]

_LABELS = {"system": "System prompt", "error": "Failed", "note": "Note", "approval": "Approval"}


def transcript_markdown(transcript: Transcript, *, fold: int = 1_500) -> str:
    """See :meth:`Transcript.to_markdown`."""
    usage = transcript.usage()
    where = "sub-agent" if transcript.kind == "subagent" else "agent"
    out = [
        f"## {_inline(transcript.agent)}"
        + (f" — {_inline(transcript.task)}" if transcript.task else ""),
        "",
        f"*{where} · {transcript.status} · {transcript.turns} model call(s) · "
        f"{usage.total:,} tokens ({usage.input:,} in, {usage.output:,} out)*",
        "",
    ]
    turn = 0
    for entry in transcript.entries:
        if entry.turn != turn and entry.kind == "reply":
            turn = entry.turn
            tokens = entry.usage
            out += [f"### Turn {turn} · {tokens.input:,} in, {tokens.output:,} out", ""]
        out += _entry(entry, fold)
    return "\n".join(out).rstrip() + "\n"


def _entry(entry: TranscriptEntry, fold: int) -> list[str]:
    message = entry.message
    if entry.kind == "system":
        return [f"**{_LABELS['system']}**", "", *_folded(entry.content, 0), ""]
    if entry.kind == "input":
        role = str(message.get("type") or "") if message is not None else ""
        label = "Task" if role in ("human", "user") else f"Input ({role})"
        return [f"**{label}**", "", *_folded(entry.content, fold), ""]
    if entry.kind == "reply":
        label = "Final answer" if entry.final else "AI"
        lines = [f"**{label}**", ""]
        if entry.content.strip():
            lines += [*_folded(entry.content, fold), ""]
        for call in entry.tool_calls:
            args = compact_json(call.get("args"))
            lines.append(f"- calls {_inline(str(call.get('name') or ''))} with {_inline(args)}")
        if entry.tool_calls:
            lines.append("")
        return lines
    if entry.kind == "tool":
        name = str(message.get("name") or "") if message is not None else ""
        failed = message is not None and message.get("status") == "error"
        label = f"**Tool result** {_inline(name)}" if name else "**Tool result**"
        if failed:
            label += " (error)"
        if entry.skill:
            label += f" — loaded the skill {_inline(entry.skill)}"
        if entry.subagent_id:
            label += f" — the answer of the sub-agent {_inline(entry.subagent)}"
        return [label, "", *_folded(entry.content, fold), ""]
    return [f"**{_LABELS[entry.kind]}**: {_inline(entry.text)}", ""]


def _folded(text: str, fold: int) -> list[str]:
    """``text`` in a fence; folded in ``<details>`` past ``fold`` characters (0: always)."""
    block = _fence(text)
    if fold and len(text) <= fold:
        return block
    first = " ".join(text.split())[:60]
    summary = (
        f"{len(text):,} characters: {first}…" if len(text) > 60 else f"{len(text):,} characters"
    )
    # The summary is text in HTML: its brackets and ampersands are escaped.
    summary = summary.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return [f"<details><summary>{summary}</summary>", "", *block, "", "</details>"]


def _fence(text: str) -> list[str]:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", text, fence]


def _inline(text: str) -> str:
    """One line of untrusted text as an inline code span."""
    flat = " ".join(text.split())
    if not flat:
        return "``"
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"
