"""A step's details pane in the snapshot: its fields (texts, messages, tables, the plan), a
sub-agent's state diff and an agent's conversation, every text escaped. The Tools pane draws its
calls' fields with :func:`field_html` too."""

from __future__ import annotations

from nbagents.display._htmlparts import e
from nbagents.display._records import (
    TURN_KINDS,
    ConversationView,
    DetailField,
    MessageView,
    PlanItemView,
    StateDiffView,
    ToolCallView,
    TurnView,
    ViewNode,
)

__all__ = ["MINUS", "details_html", "field_html"]

MINUS = "\u2212"


def details_html(node: ViewNode) -> str:
    """A step's details pane: its fields, tokens, state diff and conversation."""
    parts = [field_html(f) for f in node.get("details", [])]
    if node["token_table"]:
        parts.append(field_html({"label": "Tokens", "type": "kv", "value": node["token_table"]}))
    if "diff" in node:
        parts.append(_diff(node["diff"]))
    if "conversation" in node:
        parts.append(_conversation(node["conversation"]))
    return "".join(parts)


def _conversation(conv: ConversationView) -> str:
    """An agent's Conversation: one block per message, long texts folded in ``<details>``."""
    count = f"{conv['messages']:,} messages, {conv['model_calls']:,} model calls"
    out = [
        '<details class="nba-field nba-conv" open>'
        f'<summary class="nba-label">Conversation ({count})</summary>'
    ]
    out += [_turn(turn) for turn in conv["turns"]]
    if conv["left_out"]:
        out.append(
            f'<div class="nba-empty">… and {conv["left_out"]:,} more entries, left out to '
            "keep this snapshot small. The live view shows them, and "
            "<code>trace.transcript(…)</code> has them all.</div>"
        )
    out.append("</details>")
    return "".join(out)


def _turn(turn: TurnView) -> str:
    kind = turn["kind"] if turn["kind"] in TURN_KINDS else "note"
    err = " nba-error-text" if turn["error"] else ""
    head = f'<span class="nba-role">{e(turn["label"])}</span>'
    if turn["meta"]:
        head += f' <span class="nba-meta">{e(turn["meta"])}</span>'
    if turn["link_label"]:
        head += (
            f' <span class="nba-conv-link">→ the conversation of {e(turn["link_label"])}'
            " (its sub-agent, in the tree)</span>"
        )
    body = ""
    if turn["content"]:
        text = f'<div class="nba-text{err}">{e(turn["content"])}</div>'
        if turn["fold"]:
            first = " ".join(turn["content"].split())[:100]
            size = f"{len(turn['content']):,} chars"
            text = (
                f'<details class="nba-fold"><summary><span class="nba-preview">{e(first)}'
                f"</span> <small>({size})</small></summary>{text}</details>"
            )
        body += text
    body += _calls(turn["tool_calls"])
    return f'<div class="nba-msg nba-turn nba-turn-{kind}">{head}{body}</div>'


def field_html(field: DetailField) -> str:
    kind, value = field["type"], field["value"]
    label = f'<div class="nba-label">{e(field["label"])}</div>'
    if kind == "messages":
        body = "".join(_message(m) for m in value)
    elif kind == "code":
        body = f"<pre>{e(value)}</pre>"
    elif kind == "error":
        body = f'<pre class="nba-error-text">{e(value)}</pre>'
    elif kind == "kv":
        body = (
            '<table class="nba-table"><tbody>'
            + "".join(f'<tr><th>{e(k)}</th><td class="nba-num">{e(v)}</td></tr>' for k, v in value)
            + "</tbody></table>"
        )
    elif kind == "checklist":
        body = '<ul class="nba-plan">' + "".join(_plan_item(item) for item in value) + "</ul>"
    else:
        body = f'<div class="nba-text">{e(value)}</div>'
    return f'<div class="nba-field">{label}{body}</div>'


def _plan_item(item: PlanItemView) -> str:
    when = f' <small><span class="nba-t">{e(item["when"])}</span></small>' if item["when"] else ""
    return (
        f'<li class="nba-plan-{item["status"]}"><span class="nba-plan-mark">{e(item["mark"])}'
        f"</span> {e(item['text'])}{when}</li>"
    )


def _message(msg: MessageView) -> str:
    role = msg["role"] + (f" · {msg['name']}" if msg.get("name") else "")
    cls = " nba-error-text" if msg.get("error") else ""
    parts = [f'<div class="nba-msg"><span class="nba-role">{e(role)}</span>']
    if msg["content"]:
        parts.append(f'<div class="nba-text{cls}">{e(msg["content"])}</div>')
    parts.append(_calls(msg["tool_calls"]) + "</div>")
    return "".join(parts)


def _calls(calls: list[ToolCallView]) -> str:
    return "".join(f'<div class="nba-call">→ {e(c["name"])}({e(c["args"])})</div>' for c in calls)


def _diff(diff: StateDiffView) -> str:
    """A sub-agent's State field: the keys withheld from it, passed to it, and returned."""
    rows = [(MINUS, key, f"{size} · withheld", "del") for key, size in diff["withheld"]]
    rows += [(" ", key, f"{size} · passed", "ctx") for key, size in diff["passed"]]
    rows += [("+", key, "returned", "add") for key in diff["returned"]]
    lines = [
        f'<div class="nba-diff-row nba-diff-{cls}">{sign} {e(key)}'
        f' <span class="nba-diff-note">{e(note)}</span></div>'
        for sign, key, note, cls in rows
    ]
    if not lines:
        lines.append('<div class="nba-diff-row nba-diff-note">no state keys</div>')
    label = '<div class="nba-label">State</div>'
    return f'<div class="nba-field">{label}<div class="nba-diff">{"".join(lines)}</div></div>'
