"""The static HTML snapshot of a trace: self-contained, no script, no network.

It draws the records of :mod:`nbagents.display._records` and formats nothing itself.
Collapse and expand use ``<details>``/``<summary>``, so it reads the same on GitHub, nbviewer, in
VS Code or with JavaScript off. Every text from the trace is escaped; the only values placed in
attributes are ours (kinds and statuses from a fixed set, node positions, numbers).

Where the ``<style>`` element is stripped (an untrusted notebook in JupyterLab) it keeps its
layout by the inline styles that sanitizer keeps. ``nbconvert --sanitize-html`` drops every inline
style and escapes ``<style>``, ``<details>`` and ``<th>`` into text: there the page's own styles
hide the stylesheet (:func:`unseen`) and the rich snapshot, and a plain version shows (``_plain``).

The snapshot is bounded (:data:`NODE_LIMIT`, :data:`DETAILS_BUDGET`, :data:`ROW_LIMIT`) and says
what it left out. Times and costs vary between runs, so each is wrapped in markup the sanitize
rules nbagents ships for nbval recognise (``pytest_nbagents``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib.resources import files
from typing import TYPE_CHECKING

from nbagents.display._detailshtml import MINUS, details_html
from nbagents.display._htmlparts import Columns, cost, dot, e, kind_cls, status_cls, t
from nbagents.display._records import Header, Stat, View, ViewNode
from nbagents.display._rows import COST_COLUMNS, COST_LABEL
from nbagents.display._textbar import LEGEND, text_bar
from nbagents.display._timelineview import timeline_html
from nbagents.display._toolsview import node_anchor, plain_tools, tool_targets, tools_html
from nbagents.display._viewmodel import build_view

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = [
    "DETAILS_BUDGET",
    "MINUS",
    "NODE_LIMIT",
    "ROW_LIMIT",
    "live_module",
    "render_view",
    "static_text",
    "stylesheet",
    "trace_css",
    "trace_html",
    "unseen",
]

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


@cache
def live_module() -> str:
    """The live view's one ES module (the widget's ``_esm``, the saved view's viewer): the parts
    in ``static/live/``, each under 450 lines, joined in the order of their names."""
    parts = sorted(p.name for p in (files("nbagents.display") / "static" / "live").iterdir())
    return "\n".join(static_text(f"live/{name}") for name in parts if name.endswith(".js"))


def trace_css() -> str:
    """The stylesheet shared by the snapshot and the live widget (scoped under ``.nba-root``)."""
    return static_text("trace.css")


def stylesheet() -> str:
    """The inline stylesheet, in a box that hides it where it would show as text."""
    return unseen(f"{STYLE_OPEN}\n{trace_css()}\n</style>")


def unseen(html: str) -> str:
    """``html``, a ``<style>`` or a ``<script>``, in a box the page styles of JupyterLab and of
    the classic notebook hide: ``nbconvert --sanitize-html`` escapes those elements into text but
    keeps classes. Elsewhere a style applies and a script runs from a hidden box."""
    return f'<div class="{HIDDEN_IN_EXPORTS}">{html}</div>'


def render_view(view: View) -> str:
    """Render a view built by :func:`~nbagents.display._viewmodel.build_view`."""
    out: list[str] = [
        # tex2jax_ignore/mathjax_ignore: JupyterLab typesets outputs with MathJax, and a result
        # saying "costs $5 and $10" is user text, not math.
        f'<div class="nba-root nba-trace tex2jax_ignore mathjax_ignore" style="{WRAP_LONG_WORDS}">',
        stylesheet(),
    ]
    nodes = {n["id"]: n for n in view["nodes"]}
    out.append(_plain(view, nodes))
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
        tree = _Tree(view, nodes)
        out += tree.out
        paths = tree.paths
        if tree.left_out:
            out.append(_left_out(tree.left_out, len(view["nodes"]), "steps"))
        if tree.without_details:
            out.append(
                '<div class="nba-empty">'
                f"{tree.without_details:,} steps are shown without their details to keep "
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
    out.append(tools_html(view, nodes, paths))
    timeline = view["timeline"]
    if timeline:
        out.append('<details class="nba-sec" open><summary>Timeline</summary>')
        extra = len(timeline) - ROW_LIMIT
        more = _left_out(extra, len(timeline), "agents") if extra > 0 else ""
        out.append(timeline_html(timeline[:ROW_LIMIT], view["duration"], more))
        out.append("</details>")
    out.append("</div></div>")
    return "\n".join(out)


def _plain(view: View, nodes: Mapping[str, ViewNode]) -> str:
    """The run as plain lines (header, call tree, timeline drawn in characters) for pages that
    drop every inline style: ``nbconvert --sanitize-html`` also escapes ``<details>``,
    ``<summary>`` and ``<th>`` into visible text, so there the rich snapshot is hidden by the
    page's own styles (:data:`HIDDEN_IN_EXPORTS`) and this shows instead. Only tags that
    sanitizer keeps; everywhere else its inline ``display:none`` hides it."""
    header = view["header"]
    stats = [e(text) for text in (header["status"], header["title"]) if text]
    stats += [f"{e(s['label'])} {_stat_value(s)}".strip() for s in header["stats"]]
    lines: list[str] = []
    stack = [(root, 0) for root in reversed(view["roots"])]
    while stack and len(lines) < PLAIN_LINES:
        key, level = stack.pop()
        node = nodes[key]
        stack.extend((kid, level + 1) for kid in reversed(node.get("children", [])))
        preview = f" {node['preview'][:80]}" if node["preview"] else ""
        tokens = f" · {node['tokens']}" if node["tokens"] else ""
        lines.append(
            e(f"{'  ' * level}{node['glyph']} {node['kind_label']} {node['name']}{preview} · ")
            + t(node["time"])
            + e(tokens)
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
            + e(f"{'  ' * row['depth']}{row['glyph']} {row['name']} ")
            + t(row["time"])
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
    return f'<code class="nba-tl-text" style="display:none">{e(text)}</code>'


def _left_out(count: int, total: int, what: str) -> str:
    return (
        f'<div class="nba-empty">… and {count:,} more {what} ({total - count:,} of {total:,} '
        "shown). The live view shows them all; so do <code>trace.to_dataframe()</code> "
        "and <code>trace.token_usage()</code>.</div>"
    )


# -- pieces -----------------------------------------------------------------------------------


def _header(header: Header) -> str:
    status = header["status"]
    stats = [f'<span class="nba-badge {status_cls(status)}">{e(status)}</span>']
    if header["title"]:
        stats.append(f'<span class="nba-title">{e(header["title"])}</span>')
    for stat in header["stats"]:
        cls = {"error": " nba-err", "waiting": " nba-waiting"}.get(stat["emphasis"], "")
        value = _stat_value(stat)
        label = f"{e(stat['label'])} " if stat["label"] else ""
        note = f" {e(stat['note'])}" if stat["note"] else ""
        stats.append(f'<span class="nba-stat{cls}">{label}<b>{value}</b>{note}</span>')
    sep = '<span class="nba-sep"> · </span>'
    return '<div class="nba-header">' + sep.join(stats) + "</div>"


def _stat_value(stat: Stat) -> str:
    """A header figure, wrapped for the sanitize rules when it varies (a time, a cost)."""
    if stat["label"] == COST_LABEL:
        return cost(stat["value"])
    return t(stat["value"]) if stat["varies"] else e(stat["value"])


def _line(node: ViewNode) -> str:
    parts = [
        '<span class="nba-line">' + dot(node["status"], node["glyph"]),
        f'<span class="nba-kind">{e(node["kind_label"])}</span>',
        f'<span class="nba-name">{e(node["name"])}</span>',
    ]
    if node["preview"]:
        parts.append(f'<span class="nba-preview">{e(node["preview"])}</span>')
    if node["failed"]:
        parts.append('<span class="nba-err">failed</span>')
    for request in node.get("pending", ()):
        answers = f" ({' / '.join(request['allowed'])})" if request["allowed"] else ""
        parts.append(
            f'<span class="nba-waiting">waits for a decision: {e(request["title"])}'
            f"{e(answers)}</span>"
        )
    meta = t(node["time"]) + (f" · {e(node['tokens'])}" if node["tokens"] else "")
    parts.append(f'<span class="nba-meta">{meta}</span>')
    # spaces between the parts keep the line readable where the CSS is stripped
    return " ".join(parts) + "</span>"


class _Tree:
    """The call tree's list (``out``), drawn within the snapshot's budgets."""

    def __init__(self, view: View, nodes: Mapping[str, ViewNode]) -> None:
        self.nodes = nodes
        self.budget = NODE_LIMIT
        self.details = DETAILS_BUDGET
        self.left_out = len(view["nodes"])
        self.without_details = 0
        self.anchor, self.targets = tool_targets(view)
        self.paths: dict[str, str] = {}
        """Where the tree drew each of ``targets``, the calls the Tools pane links to."""
        self.out = ['<ul class="nba-tree">']
        for i, root in enumerate(view["roots"]):
            self._node(nodes[root], str(i))
        self.out.append("</ul>")

    def _node(self, node: ViewNode, path: str) -> None:
        out = self.out
        self.budget -= 1
        self.left_out -= 1
        classes = f"nba-node {kind_cls(node['kind'])} {status_cls(node['status'])}"
        # data-node is the position in the tree: the same for equal runs, unlike the view's ids
        anchor = ""
        if node["id"] in self.targets:
            self.paths[node["id"]] = path
            anchor = f' id="{e(node_anchor(self.anchor, path))}"'
        out.append(f'<li class="{classes}" data-node="{path}"{anchor}>')
        info = ""
        if self.details > 0:
            info = details_html(node)
            self.details -= len(info)
        elif node.get("details") or "diff" in node:
            self.without_details += 1
        line = _line(node)
        kids = node["children"] if self.budget > 0 else []
        if kids:
            opened = " open" if node["kind"] in ("agent", "subagent", "task") else ""
            out.append(f"<details{opened}><summary>{line}</summary>")
            if info:
                out.append(f'<details class="nba-info"><summary>details</summary>{info}</details>')
            out.append("<ul>")
            for i, kid in enumerate(kids):
                if self.budget <= 0:
                    break
                self._node(self.nodes[kid], f"{path}.{i}")
            out.append("</ul></details>")
        elif info:
            out.append(f"<details><summary>{line}</summary>")
            out.append(f'<div class="nba-info">{info}</div></details>')
        else:
            out.append(line)
        out.append("</li>")


def _token_table(view: View) -> str:
    names = view["columns"]
    costs = {i for i, c in enumerate(names) if c in COST_COLUMNS}
    # the agent's name and its task can be of any length
    columns = Columns(names, numeric_from=4, times={3}, costs=costs)
    rows = [
        columns.row(row["status"], row["glyph"], row["depth"], row["cells"], f' data-row="{n}"')
        for n, row in enumerate(view["agent_rows"][:ROW_LIMIT])
    ]
    rows.append(columns.total(view["totals"]))
    table = columns.table("nba-table nba-tokens", rows)
    extra = len(view["agent_rows"]) - ROW_LIMIT
    return table + (_left_out(extra, len(view["agent_rows"]), "agents") if extra > 0 else "")
