"""The static HTML snapshot of a trace: self-contained, no script, no network.

Collapse and expand use ``<details>``/``<summary>``, so it reads the same on GitHub, nbviewer, in
VS Code or a browser with JavaScript off. Every text from the trace goes through
``html.escape(…, quote=True)``; the only values placed in attributes are ours (kinds and statuses
from a fixed set, node positions, numbers). Wall times vary between runs, so every time, duration
and percentage is wrapped in markup that ``notebooks/sanitize.cfg`` recognises:
``<span class="nba-t">…</span>`` and ``style="--l:…%;--w:…%"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from html import escape
from importlib.resources import files
from typing import TYPE_CHECKING, Any

from nbagents.display._viewmodel import (
    KINDS,
    STATUSES,
    Json,
    build_view,
    format_duration,
    format_tokens,
)

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["render_view", "trace_css", "trace_html"]

MINUS = "\u2212"
STYLE_OPEN = '<style class="nba-css">'
"""Opens the inline stylesheet; the sanitize file blanks it, so CSS changes never fail nbval."""


def trace_html(trace: Trace) -> str:
    """The whole trace as one self-contained HTML fragment (inline CSS, no script)."""
    return render_view(build_view(trace))


@cache
def trace_css() -> str:
    """The stylesheet shared by the snapshot and the live widget (scoped under ``.nba-root``)."""
    return (files("nbagents.display") / "static" / "trace.css").read_text(encoding="utf-8")


def render_view(view: Json) -> str:
    """Render a view built by :func:`~nbagents.display._viewmodel.build_view`."""
    out: list[str] = [
        # tex2jax_ignore/mathjax_ignore: JupyterLab typesets outputs with MathJax, and a result
        # saying "costs $5 and $10" is user text, not math.
        '<div class="nba-root nba-trace tex2jax_ignore mathjax_ignore">',
        STYLE_OPEN,
        trace_css(),
        "</style>",
        _header(view),
    ]
    nodes: list[Json] = view["nodes"]
    by_id = {n["id"]: n for n in nodes}
    roots = [n for n in nodes if n["parent"] is None]
    out.append('<details class="nba-sec" open><summary>Call tree</summary>')
    if roots:
        out.append('<ul class="nba-tree">')
        for root in roots:
            _node(root, by_id, out)
        out.append("</ul>")
    else:
        out.append('<div class="nba-empty">No spans recorded yet.</div>')
    out.append("</details>")
    if view["agent_rows"]:
        out.append('<details class="nba-sec" open><summary>Tokens per agent</summary>')
        out.append(_token_table(view))
        out.append("</details>")
    if view["timeline"]:
        out.append('<details class="nba-sec" open><summary>Timeline</summary>')
        out.append(_timeline(view))
        out.append("</details>")
    out.append("</div>")
    return "\n".join(out)


# -- pieces -----------------------------------------------------------------------------------


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def _t(seconds: float | None) -> str:
    """A time: varies between runs, so it is wrapped for the sanitizer."""
    return f'<span class="nba-t">{_e(format_duration(seconds))}</span>'


def _pos(left: float, width: float) -> str:
    return f'style="--l:{float(left):.2f}%;--w:{float(width):.2f}%"'


def _status_cls(status: Any) -> str:
    return f"nba-s-{status if status in STATUSES else 'running'}"


def _kind_cls(kind: Any) -> str:
    return f"nba-k-{kind if kind in KINDS else 'chain'}"


STATUS_GLYPHS = {"ok": "\u2713", "error": "\u2717", "running": "\u25cc", "interrupted": "\u2016"}
"""A status as a character: readable where the colours are stripped (GitHub, untrusted)."""


def _dot(status: Any) -> str:
    name = status if status in STATUSES else "running"
    return f'<span class="nba-dot" title="{name}">{STATUS_GLYPHS[name]}</span>'


def _kind_label(kind: Any) -> str:
    """What the tree calls a kind; a visible ``chain`` is a node of the user's own graph."""
    return str(kind) if kind in KINDS and kind != "chain" else "step"


def _duration(start: float | None, end: float | None) -> float | None:
    return None if start is None or end is None else max(end - start, 0.0)


def _header(view: Json) -> str:
    tokens = view["tokens"]
    stats = [
        f'<span class="nba-badge {_status_cls(view["status"])}">{_e(view["status"])}</span>',
    ]
    if view["title"]:
        stats.append(f'<span class="nba-title">{_e(view["title"])}</span>')
    stats += [
        f'<span class="nba-stat">time <b>{_t(view["duration"])}</b></span>',
        f'<span class="nba-stat">agents <b>{view["agents"]:d}</b></span>',
        f'<span class="nba-stat">sub-agent spawns <b>{view["spawns"]:d}</b></span>',
        f'<span class="nba-stat">tokens <b>{format_tokens(tokens["total"])}</b> '
        f"({format_tokens(tokens['input'])} in, {format_tokens(tokens['output'])} out)</span>",
    ]
    if view.get("waiting"):
        stats.append('<span class="nba-stat nba-waiting"><b>waiting for a decision</b></span>')
    if view.get("cost") is not None:
        stats.append(f'<span class="nba-stat">cost <b>{_e(view["cost"])}</b></span>')
    if view["errors"]:
        stats.append(f'<span class="nba-stat nba-err">failed <b>{view["errors"]:d}</b></span>')
    sep = '<span class="nba-sep"> · </span>'
    return '<div class="nba-header">' + sep.join(stats) + "</div>"


def _line(node: Json) -> str:
    parts = [
        '<span class="nba-line">' + _dot(node["status"]),
        f'<span class="nba-kind">{_e(_kind_label(node["kind"]))}</span>',
        f'<span class="nba-name">{_e(node["name"])}</span>',
    ]
    if node["preview"]:
        parts.append(f'<span class="nba-preview">{_e(node["preview"])}</span>')
    if node["status"] == "error":
        parts.append('<span class="nba-err">failed</span>')
    meta = [_t(_duration(node["start"], node["end"]))]
    if node["tokens"]["total"]:
        meta.append(f"{format_tokens(node['tokens']['total'])} tok")
    parts.append(f'<span class="nba-meta">{" · ".join(meta)}</span>')
    # spaces between the parts keep the line readable where the CSS is stripped
    return " ".join(parts) + "</span>"


def _node(node: Json, by_id: Mapping[str, Json], out: list[str]) -> None:
    kids = [by_id[k] for k in node["children"]]
    classes = f"nba-node {_kind_cls(node['kind'])} {_status_cls(node['status'])}"
    out.append(f'<li class="{classes}" data-node="{_e(node["id"])}">')
    info = _info(node)
    if kids:
        opened = " open" if node["kind"] in ("agent", "subagent", "task") else ""
        out.append(f"<details{opened}><summary>{_line(node)}</summary>")
        if info:
            out.append(f'<details class="nba-info"><summary>details</summary>{info}</details>')
        out.append("<ul>")
        for kid in kids:
            _node(kid, by_id, out)
        out.append("</ul></details>")
    elif info:
        out.append(f"<details><summary>{_line(node)}</summary>")
        out.append(f'<div class="nba-info">{info}</div></details>')
    else:
        out.append(_line(node))
    out.append("</li>")


def _info(node: Json) -> str:
    parts = [_field(f) for f in node["details"]]
    if "diff" in node:
        parts.append(
            '<div class="nba-field"><div class="nba-label">State</div>'
            + _diff(node["diff"])
            + "</div>"
        )
    return "".join(parts)


def _field(field: Json) -> str:
    kind, value = field["type"], field["value"]
    label = f'<div class="nba-label">{_e(field["label"])}</div>'
    if kind == "messages":
        body = "".join(_message(m) for m in value)
    elif kind == "code":
        body = f"<pre>{_e(value)}</pre>"
    elif kind == "error":
        body = f'<pre class="nba-error-text">{_e(value)}</pre>'
    elif kind == "kv":
        body = (
            '<table class="nba-table"><tbody>'
            + "".join(
                f'<tr><th>{_e(k)}</th><td class="nba-num">{_e(v)}</td></tr>' for k, v in value
            )
            + "</tbody></table>"
        )
    else:
        body = f'<div class="nba-text">{_e(value)}</div>'
    return f'<div class="nba-field">{label}{body}</div>'


def _message(msg: Json) -> str:
    role = msg["role"] + (f" · {msg['name']}" if msg.get("name") else "")
    cls = " nba-error-text" if msg.get("error") else ""
    parts = [f'<div class="nba-msg"><span class="nba-role">{_e(role)}</span>']
    if msg["content"]:
        parts.append(f'<div class="nba-text{cls}">{_e(msg["content"])}</div>')
    for call in msg["tool_calls"]:
        parts.append(f'<div class="nba-call">→ {_e(call["name"])}({_e(call["args"])})</div>')
    parts.append("</div>")
    return "".join(parts)


def _diff(diff: Json) -> str:
    rows: list[str] = []
    for key, size in diff["withheld"]:
        rows.append(
            f'<div class="nba-diff-row nba-diff-del">{MINUS} {_e(key)}'
            f' <span class="nba-diff-note">{_e(size)} · withheld</span></div>'
        )
    for key, size in diff["passed"]:
        rows.append(
            f'<div class="nba-diff-row nba-diff-ctx">  {_e(key)}'
            f' <span class="nba-diff-note">{_e(size)} · passed</span></div>'
        )
    for key in diff["returned"]:
        rows.append(
            f'<div class="nba-diff-row nba-diff-add">+ {_e(key)}'
            ' <span class="nba-diff-note">returned</span></div>'
        )
    if not rows:
        rows.append('<div class="nba-diff-row nba-diff-note">no state keys</div>')
    return '<div class="nba-diff">' + "".join(rows) + "</div>"


def _costs(row: Json) -> str:
    return "".join(
        f'<td class="nba-num">{_e(row.get(key, ""))}</td>' for key in ("cost_own", "cost_total")
    )


def _num(n: int) -> str:
    return f'<td class="nba-num">{format_tokens(n)}</td>'


def _token_table(view: Json) -> str:
    priced = view.get("cost") is not None
    cost_head = (
        '<th class="nba-num">own cost</th><th class="nba-num">cost incl. sub-agents</th>'
        if priced
        else ""
    )
    head = (
        "<thead><tr><th>agent</th><th>task</th><th>status</th><th>time</th>"
        '<th class="nba-num">in</th><th class="nba-num">out</th>'
        '<th class="nba-num">own total</th><th class="nba-num">incl. sub-agents</th>'
        f"{cost_head}</tr></thead>"
    )
    rows = []
    for row in view["agent_rows"]:
        indent = "\u2003" * int(row["depth"])
        own, total = row["own"], row["total"]
        rows.append(
            f'<tr class="{_status_cls(row["status"])}" data-node="{_e(row["id"])}">'
            f"<td>{indent}{_dot(row['status'])} {_e(row['name'])}</td>"
            f"<td>{_e(row['description'])}</td>"
            f"<td>{_e(row['status'])}</td>"
            f"<td>{_t(_duration(row['start'], row['end']))}</td>"
            f"{_num(own['input'])}{_num(own['output'])}{_num(own['total'])}{_num(total['total'])}"
            f"{_costs(row) if priced else ''}</tr>"
        )
    tokens = view["tokens"]
    rows.append(
        '<tr class="nba-total"><td>all</td><td></td><td></td><td></td>'
        f"{_num(tokens['input'])}{_num(tokens['output'])}{_num(tokens['total'])}"
        f"{_num(tokens['total'])}"
        + (f'<td class="nba-num">{_e(view["cost"])}</td>' * 2 if priced else "")
        + "</tr>"
    )
    return f'<table class="nba-table nba-tokens">{head}<tbody>{"".join(rows)}</tbody></table>'


def _timeline(view: Json) -> str:
    rows = []
    by_id = {n["id"]: n for n in view["nodes"]}
    for row in view["timeline"]:
        node = by_id[row["id"]]
        indent = int(row["depth"]) * 12
        segs = "".join(
            f'<span class="nba-seg nba-seg-{"tool" if s["kind"] == "tool" else "model"}" '
            f"{_pos(s['left'], s['width'])}></span>"
            for s in row["segments"]
        )
        rows.append(
            f'<div class="nba-tl-row {_status_cls(row["status"])}" data-node="{_e(row["id"])}">'
            f'<span class="nba-tl-label" style="padding-left:{indent}px">'
            f"{_dot(row['status'])} {_e(row['name'])}</span>"
            f'<span class="nba-tl-track"><span class="nba-bar" '
            f"{_pos(row['left'], row['width'])}></span>{segs}</span>"
            f' <span class="nba-tl-time">{_t(node["start"])} → {_t(node["end"])}</span>'
            "</div>"
        )
    legend = (
        '<div class="nba-legend">bar: agent run, '
        '<span class="nba-swatch nba-seg-model"></span>model call, '
        '<span class="nba-swatch nba-seg-tool"></span>tool call</div>'
    )
    return '<div class="nba-tl">' + "".join(rows) + legend + "</div>"
