"""The static HTML snapshot of a trace: self-contained, no script, no network.

It draws the records of :mod:`nbagents.display._records` and formats nothing itself.
Collapse and expand use ``<details>``/``<summary>``, so it reads the same on GitHub, nbviewer, in
VS Code or a browser with JavaScript off. Every text from the trace goes through
``html.escape(…, quote=True)``; the only values placed in attributes are ours (kinds and statuses
from a fixed set, node positions, numbers).

It must read the same where the ``<style>`` element is stripped (an untrusted notebook in
JupyterLab, whose sanitizer keeps classes and only some inline styles): the timeline's bars are
laid out with inline ``display:inline-block``, ``width`` and ``background-color`` only, which
Jupyter's sanitizer keeps; a word too long for its line (a URL, a blob) breaks by inline
``overflow-wrap`` and ``word-break``, which it keeps too. ``nbconvert --sanitize-html`` drops
every inline style and escapes ``<style>``, ``<script>``, ``<details>`` and ``<th>`` into
visible text: there the page's own styles hide the stylesheet (:func:`unseen`) and the rich
snapshot, and a plain version (``_plain``: header, tree and timeline as lines) shows.

The snapshot is bounded (:data:`NODE_LIMIT`, :data:`DETAILS_BUDGET`, :data:`ROW_LIMIT`): past them
it says how much it left out and where to see it. Wall times vary between runs and costs between
price tables, so each is wrapped in markup the sanitize rules nbagents ships for nbval recognise
(``pytest_nbagents``): ``<span class="nba-t">…</span>``, ``<span class="nba-cost">…</span>``, and
the timeline's ``display:inline-block;width:…%`` and ``data-start``/``-end``/``-horizon``.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from nbagents.display._htmlparts import Columns
from nbagents.display._htmlparts import cost as _cost
from nbagents.display._htmlparts import dot as _dot
from nbagents.display._htmlparts import e as _e
from nbagents.display._htmlparts import kind_cls as _kind_cls
from nbagents.display._htmlparts import status_cls as _status_cls
from nbagents.display._htmlparts import t as _t
from nbagents.display._records import (
    TURN_KINDS,
    ConversationView,
    DetailField,
    Header,
    KeptNode,
    MessageView,
    NodeTexts,
    PlanItemView,
    Stat,
    StateDiffView,
    TimelineRow,
    TurnView,
    View,
    ViewNode,
)
from nbagents.display._textbar import LEGEND, text_bar
from nbagents.display._toolsview import node_anchor, plain_tools, tool_targets, tools_html
from nbagents.display._viewmodel import COST_COLUMNS, COST_LABEL, build_view

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = [
    "DETAILS_BUDGET",
    "NODE_LIMIT",
    "ROW_LIMIT",
    "render_view",
    "static_text",
    "stylesheet",
    "trace_css",
    "trace_html",
    "unseen",
]

MINUS = "\u2212"
NEWLINE = "\n"
STYLE_OPEN = '<style class="nba-css">'
"""Opens the inline stylesheet; the sanitize file blanks it, so CSS changes never fail nbval."""
NODE_LIMIT = 400
"""Steps drawn in the snapshot's call tree; the rest are counted."""
DETAILS_BUDGET = 1_000_000
"""Characters of details panes in one snapshot; past it, steps show their line only."""
ROW_LIMIT = 200
"""Rows of the token table and the timeline."""
PLAIN_LINES = 60
"""Steps, and agents of the timeline, in the plain version (``_plain``)."""
HIDDEN_IN_EXPORTS = "lm-Widget lm-mod-hidden hidden"
"""Classes hidden by JupyterLab's page styles (``.lm-Widget.lm-mod-hidden``) and the classic
notebook's (``.hidden``), which the pages nbconvert exports carry (see :func:`unseen`)."""
BAR_COLOURS = {
    "ok": "#8fb0d9",
    "error": "#e0707a",
    "running": "#7fb2e5",
    "interrupted": "#d9b45f",
    "limit": "#c9a227",
}
SEGMENT_COLOURS = {"model": "#6a4bc4", "tool": "#c98a0b"}
PLAN_COLOURS = {"started": "#8a9bb0", "finished": "#2e8b57"}
"""Mid tones: readable on light and dark themes, where no stylesheet applies."""
WRAP_LONG_WORDS = "overflow-wrap:break-word"
"""Inline on the root, inherited by every text: where the stylesheet is stripped, a word longer
than its line (a URL, a blob) still breaks instead of widening the output thousands of pixels."""


def trace_html(trace: Trace) -> str:
    """The whole trace as one self-contained HTML fragment (inline CSS, no script)."""
    return render_view(build_view(trace))


@cache
def static_text(name: str) -> str:
    """A file of ``nbagents/display/static`` (the views' scripts and stylesheets)."""
    return (files("nbagents.display") / "static" / name).read_text(encoding="utf-8")


def trace_css() -> str:
    """The stylesheet shared by the snapshot and the live widget (scoped under ``.nba-root``)."""
    return static_text("trace.css")


def stylesheet() -> str:
    """The inline stylesheet, in a box that hides it where it would show as text."""
    return unseen(f"{STYLE_OPEN}\n{trace_css()}\n</style>")


def unseen(html: str) -> str:
    """``html``, a ``<style>`` or a ``<script>``, in a box that the page styles of JupyterLab
    and of the classic notebook hide. ``nbconvert --sanitize-html`` escapes those two elements
    into text (hundreds of lines of CSS and script above the snapshot) but keeps classes, and
    the pages it exports carry those styles. Sanitizers that remove the elements leave the box
    empty; everywhere else the elements work as ever: a style applies and a script runs from a
    hidden box."""
    return f'<div class="{HIDDEN_IN_EXPORTS}">{html}</div>'


def render_view(view: View) -> str:
    """Render a view built by :func:`~nbagents.display._viewmodel.build_view`."""
    out: list[str] = [
        # tex2jax_ignore/mathjax_ignore: JupyterLab typesets outputs with MathJax, and a result
        # saying "costs $5 and $10" is user text, not math.
        f'<div class="nba-root nba-trace tex2jax_ignore mathjax_ignore" style="{WRAP_LONG_WORDS}">',
        stylesheet(),
    ]
    nodes = view["nodes"]
    entry = _entries(nodes)
    out.append(_plain(view, entry))
    # Shown by its inline style, which outranks the classes that hide it where every inline
    # style is dropped (see `_plain`); JupyterLab's sanitizer keeps both declarations.
    out.append(
        f'<div class="nba-rich {HIDDEN_IN_EXPORTS}" style="display:block !important;'
        'overflow:visible">'
    )
    out.append(_header(view["header"]))
    out.append('<details class="nba-sec" open><summary>Call tree</summary>')
    paths: dict[str, str] = {}
    if view["roots"]:
        budget = _tree(view, entry, out)
        paths = budget.paths
        if budget.left_out:
            out.append(_left_out(budget.left_out, len(nodes), "steps"))
        if budget.without_details:
            out.append(
                '<div class="nba-empty">'
                f"{budget.without_details:,} steps are shown without their details to keep "
                "this snapshot small; the live view and <code>trace.to_dataframe()</code> "
                "have them.</div>"
            )
    else:
        out.append('<div class="nba-empty">No spans recorded yet.</div>')
    out.append("</details>")
    if view["agent_rows"]:
        out.append('<details class="nba-sec" open><summary>Tokens per agent</summary>')
        out.append(_token_table(view))
        out.append("</details>")
    out.append(tools_html(view, entry, paths, _field))
    if view["timeline"]:
        out.append('<details class="nba-sec" open><summary>Timeline</summary>')
        out.append(_timeline(view))
        out.append("</details>")
    out.append("</div></div>")
    return "\n".join(out)


def _entries(nodes: Sequence[ViewNode]) -> Callable[[str], KeptNode]:
    """The view's nodes by id, with what was drawn of them (kept by the builder when the
    nodes are its texts)."""
    if isinstance(nodes, NodeTexts):
        return nodes.entry
    kept = {n["id"]: KeptNode("", n) for n in nodes}
    return kept.__getitem__


def _tree(view: View, entry: Callable[[str], KeptNode], out: list[str]) -> _Budget:
    """The call tree's list into ``out``; what its budget left out."""
    budget = _Budget(len(view["nodes"]), *tool_targets(view))
    out.append('<ul class="nba-tree">')
    for i, root in enumerate(view["roots"]):
        _node(entry(root), str(i), entry, out, budget)
    out.append("</ul>")
    return budget


def _plain(view: View, entry: Callable[[str], KeptNode]) -> str:
    """The run as plain lines (header, call tree, timeline drawn in characters) for pages that
    drop every inline style: ``nbconvert --sanitize-html`` also escapes ``<details>``,
    ``<summary>`` and ``<th>`` into visible text, so there the rich snapshot is hidden by the
    page's own styles (:data:`HIDDEN_IN_EXPORTS`) and this shows instead. Only tags that
    sanitizer keeps; everywhere else its inline ``display:none`` hides it."""
    header = view["header"]
    stats = [_e(text) for text in (header["status"], header["title"]) if text]
    stats += [f"{_e(s['label'])} {_stat_value(s)}".strip() for s in header["stats"]]
    lines: list[str] = []
    stack = [(root, 0) for root in reversed(view["roots"])]
    while stack and len(lines) < PLAIN_LINES:
        key, level = stack.pop()
        node = entry(key).node
        stack.extend((kid, level + 1) for kid in reversed(node.get("children", [])))
        preview = f" {node['preview'][:80]}" if node["preview"] else ""
        tokens = f" · {node['tokens']}" if node["tokens"] else ""
        lines.append(
            _e(f"{'  ' * level}{node['glyph']} {node['kind_label']} {node['name']}{preview} · ")
            + _t(node["time"])
            + _e(tokens)
        )
    if len(view["nodes"]) > len(lines):
        lines.append(f"… and {len(view['nodes']) - len(lines):,} more steps")
    out = [
        '<div class="nba-plain" style="display:none">',
        f"<b>{' · '.join(stats)}</b>",
        plain_tools(view),
        f'<pre class="nba-plain-tree">{NEWLINE.join(lines)}</pre>',
    ]
    timeline = view["timeline"]
    if timeline:
        horizon = view["duration"]
        rows = [
            f"{_bar_text(text_bar(row, horizon))} "
            + _e(f"{'  ' * row['depth']}{row['glyph']} {row['name']} ")
            + _t(row["time"])
            for row in timeline[:PLAIN_LINES]
        ]
        if len(timeline) > PLAIN_LINES:
            rows.append(f"… and {len(timeline) - PLAIN_LINES:,} more agents")
        rows.append(_bar_text(LEGEND))
        out.append(f'<pre class="nba-plain-tl">{NEWLINE.join(rows)}</pre>')
    out.append("</div>")
    return "".join(out)


def _bar_text(text: str) -> str:
    # The markup the sanitize rule "nbagents-timeline-text" masks: bars follow wall times.
    return f'<code class="nba-tl-text" style="display:none">{_e(text)}</code>'


class _Budget:
    """How much of a large trace the snapshot still draws."""

    def __init__(self, total: int, anchor: str = "", targets: Container[str] = ()) -> None:
        self.nodes = NODE_LIMIT
        self.details = DETAILS_BUDGET
        self.left_out = total
        self.without_details = 0
        self.anchor, self.targets = anchor, targets
        self.paths: dict[str, str] = {}
        """Where the tree drew each of ``targets``, the calls the Tools pane links to."""


def _left_out(count: int, total: int, what: str) -> str:
    return (
        f'<div class="nba-empty">… and {count:,} more {what} ({total - count:,} of {total:,} '
        "shown). The live view shows them all; so do <code>trace.to_dataframe()</code> "
        "and <code>trace.token_usage()</code>.</div>"
    )


# -- pieces -----------------------------------------------------------------------------------


def _header(header: Header) -> str:
    status = header["status"]
    stats = [f'<span class="nba-badge {_status_cls(status)}">{_e(status)}</span>']
    if header["title"]:
        stats.append(f'<span class="nba-title">{_e(header["title"])}</span>')
    for stat in header["stats"]:
        cls = {"error": " nba-err", "waiting": " nba-waiting"}.get(stat["emphasis"], "")
        value = _stat_value(stat)
        label = f"{_e(stat['label'])} " if stat["label"] else ""
        note = f" {_e(stat['note'])}" if stat["note"] else ""
        stats.append(f'<span class="nba-stat{cls}">{label}<b>{value}</b>{note}</span>')
    sep = '<span class="nba-sep"> · </span>'
    return '<div class="nba-header">' + sep.join(stats) + "</div>"


def _stat_value(stat: Stat) -> str:
    """A header figure, wrapped for the sanitize rules when it varies (a time, a cost)."""
    if stat["label"] == COST_LABEL:
        return _cost(stat["value"])
    return _t(stat["value"]) if stat["varies"] else _e(stat["value"])


def _line(node: ViewNode) -> str:
    parts = [
        '<span class="nba-line">' + _dot(node["status"], node["glyph"]),
        f'<span class="nba-kind">{_e(node["kind_label"])}</span>',
        f'<span class="nba-name">{_e(node["name"])}</span>',
    ]
    if node["preview"]:
        parts.append(f'<span class="nba-preview">{_e(node["preview"])}</span>')
    if node["failed"]:
        parts.append('<span class="nba-err">failed</span>')
    for request in node.get("pending", ()):
        answers = f" ({' / '.join(request['allowed'])})" if request["allowed"] else ""
        parts.append(
            f'<span class="nba-waiting">waits for a decision: {_e(request["title"])}'
            f"{_e(answers)}</span>"
        )
    meta = _t(node["time"]) + (f" · {_e(node['tokens'])}" if node["tokens"] else "")
    parts.append(f'<span class="nba-meta">{meta}</span>')
    # spaces between the parts keep the line readable where the CSS is stripped
    return " ".join(parts) + "</span>"


def _node(
    kept: KeptNode,
    path: str,
    entry: Callable[[str], KeptNode],
    out: list[str],
    budget: _Budget,
) -> None:
    node = kept.node
    budget.nodes -= 1
    budget.left_out -= 1
    classes = f"nba-node {_kind_cls(node['kind'])} {_status_cls(node['status'])}"
    # data-node is the position in the tree: the same for equal runs, unlike the view's ids
    anchor = ""
    if node["id"] in budget.targets:
        budget.paths[node["id"]] = path
        anchor = f' id="{_e(node_anchor(budget.anchor, path))}"'
    out.append(f'<li class="{classes}" data-node="{path}"{anchor}>')
    info = ""
    if budget.details > 0:
        if kept.info is None:
            kept.info = _info(node)
        info = kept.info
        budget.details -= len(info)
    elif node.get("details") or "diff" in node:
        budget.without_details += 1
    if kept.line is None:
        kept.line = _line(node)
    line = kept.line
    kids = node["children"] if budget.nodes > 0 else []
    if kids:
        opened = " open" if node["kind"] in ("agent", "subagent", "task") else ""
        out.append(f"<details{opened}><summary>{line}</summary>")
        if info:
            out.append(f'<details class="nba-info"><summary>details</summary>{info}</details>')
        out.append("<ul>")
        for i, kid in enumerate(kids):
            if budget.nodes <= 0:
                break
            # Read (parsed, in a snapshot of a builder) only when drawn: past the budget, a
            # wide step's hundreds of children are not.
            _node(entry(kid), f"{path}.{i}", entry, out, budget)
        out.append("</ul></details>")
    elif info:
        out.append(f"<details><summary>{line}</summary>")
        out.append(f'<div class="nba-info">{info}</div></details>')
    else:
        out.append(line)
    out.append("</li>")


def _info(node: ViewNode) -> str:
    parts = [_field(f) for f in node.get("details", [])]
    if node["token_table"]:
        parts.append(_field({"label": "Tokens", "type": "kv", "value": node["token_table"]}))
    if "diff" in node:
        parts.append(
            '<div class="nba-field"><div class="nba-label">State</div>'
            + _diff(node["diff"])
            + "</div>"
        )
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
    out += [_turn(t) for t in conv["turns"]]
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
    head = f'<span class="nba-role">{_e(turn["label"])}</span>'
    if turn["meta"]:
        head += f' <span class="nba-meta">{_e(turn["meta"])}</span>'
    if turn["link_label"]:
        head += (
            f' <span class="nba-conv-link">→ the conversation of {_e(turn["link_label"])}'
            " (its sub-agent, in the tree)</span>"
        )
    body = ""
    if turn["content"]:
        text = f'<div class="nba-text{err}">{_e(turn["content"])}</div>'
        if turn["fold"]:
            first = " ".join(turn["content"].split())[:100]
            size = f"{len(turn['content']):,} chars"
            text = (
                f'<details class="nba-fold"><summary><span class="nba-preview">{_e(first)}'
                f"</span> <small>({size})</small></summary>{text}</details>"
            )
        body += text
    for call in turn["tool_calls"]:
        body += f'<div class="nba-call">→ {_e(call["name"])}({_e(call["args"])})</div>'
    return f'<div class="nba-msg nba-turn nba-turn-{kind}">{head}{body}</div>'


def _field(field: DetailField) -> str:
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
    elif kind == "checklist":
        body = '<ul class="nba-plan">' + "".join(_plan_item(item) for item in value) + "</ul>"
    else:
        body = f'<div class="nba-text">{_e(value)}</div>'
    return f'<div class="nba-field">{label}{body}</div>'


def _plan_item(item: PlanItemView) -> str:
    when = f' <small><span class="nba-t">{_e(item["when"])}</span></small>' if item["when"] else ""
    return (
        f'<li class="nba-plan-{item["status"]}"><span class="nba-plan-mark">{_e(item["mark"])}'
        f"</span> {_e(item['text'])}{when}</li>"
    )


def _message(msg: MessageView) -> str:
    role = msg["role"] + (f" · {msg['name']}" if msg.get("name") else "")
    cls = " nba-error-text" if msg.get("error") else ""
    parts = [f'<div class="nba-msg"><span class="nba-role">{_e(role)}</span>']
    if msg["content"]:
        parts.append(f'<div class="nba-text{cls}">{_e(msg["content"])}</div>')
    for call in msg["tool_calls"]:
        parts.append(f'<div class="nba-call">→ {_e(call["name"])}({_e(call["args"])})</div>')
    parts.append("</div>")
    return "".join(parts)


def _diff(diff: StateDiffView) -> str:
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


def _token_table(view: View) -> str:
    names = view["columns"]
    costs = {i for i, c in enumerate(names) if c in COST_COLUMNS}
    # the agent's name and its task can be of any length
    columns = Columns(names, numeric_from=4, times={3}, costs=costs, breaking={0, 1})
    rows = [
        columns.row(row["status"], row["glyph"], row["depth"], row["cells"], f' data-row="{n}"')
        for n, row in enumerate(view["agent_rows"][:ROW_LIMIT])
    ]
    rows.append(columns.total(view["totals"]))
    table = columns.table("nba-table nba-tokens", rows)
    extra = len(view["agent_rows"]) - ROW_LIMIT
    return table + (_left_out(extra, len(view["agent_rows"]), "agents") if extra > 0 else "")


def _pct(value: float) -> str:
    return f"{min(max(value, 0.0), 100.0):.2f}%"


def _block(width: float, colour: str | None, cls: str, title: str = "") -> str:
    # Inline styles Jupyter's sanitizer and nbconvert's both keep: no position, no custom props.
    style = f"display:inline-block;width:{_pct(width)};height:12px;vertical-align:top"
    if colour:
        style += f";background-color:{colour}"
    attr = f' title="{_e(title)}"' if title else ""
    return f'<span class="{cls}" style="{style}"{attr}></span>'


def _bar(row: TimelineRow, horizon: float) -> str:
    """An agent's bar placed in its track, and its calls laid out in order inside it.

    Percent widths of inline blocks are of their container: the gap and the bar of the track,
    the calls (and the gaps between them) of the bar. Overlapping calls are drawn one after
    the other.
    """
    if horizon <= 0:
        return ""
    end = row["end"] if row["end"] is not None else horizon
    span = max(end - row["start"], 0.0)
    # One gap and one block per call whatever the timings, so equal runs differ only in widths.
    inner: list[str] = []
    cursor, used = row["start"], 0.0
    for seg in sorted(row["segments"], key=lambda s: s["start"]):
        s_start = max(seg["start"], cursor)
        s_end = max(seg["end"] if seg["end"] is not None else end, s_start)
        gap = min((s_start - cursor) / span * 100, 100.0 - used) if span > 0 else 0.0
        width = min(max((s_end - s_start) / span * 100, 0.5), 100.0 - used - gap) if span else 0.0
        inner.append(_block(gap, None, "nba-gap"))
        inner.append(_block(width, SEGMENT_COLOURS[seg["kind"]], f"nba-seg nba-seg-{seg['kind']}"))
        used += gap + width
        cursor = s_end
    left = min(row["start"] / horizon * 100, 99.5)
    width = min(max(span / horizon * 100, 0.5), 100.0 - left)
    bar_style = (
        f"display:inline-block;width:{_pct(width)};height:12px;vertical-align:top;"
        "white-space:nowrap;font-size:0;line-height:0;"
        f"background-color:{BAR_COLOURS.get(row['status'], BAR_COLOURS['running'])}"
    )
    return (
        _block(left, None, "nba-gap")
        + f'<span class="nba-bar" style="{bar_style}">'
        + "".join(inner)
        + "</span>"
    )


def _marks(row: TimelineRow, horizon: float) -> str:
    """A track under an agent's bar with a tick where each item of its plan started (hollow)
    and finished (filled); each tick's title names the item."""
    marks = row.get("marks")
    if not marks or horizon <= 0:
        return ""
    ticks, cursor = [], 0.0
    for mark in marks:
        at = min(max(mark["at"] / horizon * 100, cursor), 99.5)
        ticks.append(_block(at - cursor, None, "nba-gap"))
        colour = PLAN_COLOURS[mark["kind"]]
        ticks.append(_block(0.5, colour, f"nba-mark nba-mark-{mark['kind']}", mark["label"]))
        cursor = at + 0.5
    return (
        '<span class="nba-tl-track nba-tl-marks" style="display:block;width:100%;'
        f'white-space:nowrap;font-size:0;line-height:0">{"".join(ticks)}</span>'
    )


def _timeline(view: View) -> str:
    rows = []
    horizon = view["duration"]
    for row in view["timeline"][:ROW_LIMIT]:
        indent = "\u2003" * row["depth"]
        end = row["end"] if row["end"] is not None else horizon
        # The times the bar stands for, for tools and tests that check the layout against them.
        times = f'data-start="{row["start"]:g}" data-end="{end:g}" data-horizon="{horizon:g}"'
        rows.append(
            f'<div class="nba-tl-row {_status_cls(row["status"])}" {times}>'
            f'<span class="nba-tl-label">{indent}{_dot(row["status"], row["glyph"])} '
            f"{_e(row['name'])}</span> "
            f'<span class="nba-tl-time">{_t(row["time"])}</span>'
            '<span class="nba-tl-track" style="display:block;width:100%;white-space:nowrap;'
            f'font-size:0;line-height:0">{_bar(row, horizon)}</span>'
            f"{_marks(row, horizon)}</div>"
        )
    extra = len(view["timeline"]) - ROW_LIMIT
    legend = (
        '<div class="nba-legend">bar: agent run, '
        + _swatch("model")
        + " model call, "
        + _swatch("tool")
        + " tool call</div>"
    )
    more = _left_out(extra, len(view["timeline"]), "agents") if extra > 0 else ""
    return '<div class="nba-tl">' + "".join(rows) + more + legend + "</div>"


def _swatch(kind: str) -> str:
    return (
        f'<span class="nba-swatch nba-seg-{kind}" style="display:inline-block;width:10px;'
        f'height:8px;background-color:{SEGMENT_COLOURS[kind]}"></span>'
    )
