"""The Tools pane of the snapshot: the table of :mod:`nbagents.display._toolbook`, each row
opening its calls with their arguments and results, each call linked to its step in the tree.

A call's link is a fragment link (no script) to an id made of the view's ``anchor`` (a UUID the
sanitize rules mask) and the step's place in the tree. JupyterLab's sanitizer renames the id
``data-jupyter-id``, which JupyterLab's own handling of a ``#…`` link looks up.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from nbagents.display._detailshtml import field_html
from nbagents.display._format import truncate
from nbagents.display._htmlparts import Columns, dot, e, status_cls, t
from nbagents.display._records import DetailField, ToolRow, ToolsView, View, ViewNode
from nbagents.display._toolbook import CALL_LIMIT, COST_COLUMN

__all__ = ["LEGEND", "node_anchor", "plain_tools", "tool_targets", "tools_html"]

CALL_TEXT = 2_000
"""Longest argument or result text shown with a call in the snapshot (its step in the tree,
and ``trace.tool_usage("call")``, have it whole)."""
CALLS_BUDGET = 200_000
"""Characters of arguments and results in one snapshot's Tools pane; past it, calls show their
line and link only."""
CALLS_CELL = "word-break:break-all;text-align:left"
"""Inline on the cell that holds a tool's calls, where no stylesheet applies: a word of a call's
arguments may break anywhere (a table is as wide as its longest word), and the text reads from
the left (JupyterLab aligns table cells right)."""
TOOL_ROWS = 200
"""Tools drawn in the snapshot's table, as many as the token table's agents; the rest are
counted."""
LEGEND = (
    "turns: the model replies that asked for the tool; in, out and cost are theirs, "
    "a reply counted once per tool it asked for."
)


def tool_targets(view: View) -> tuple[str, Collection[str]]:
    """The view's anchor and the node ids of the calls its Tools pane links to."""
    tools = view.get("tools")
    if not tools or not tools["anchor"]:
        return "", ()
    return tools["anchor"], {c["id"] for row in tools["rows"] for c in row["calls"]}


def tools_html(
    view: View,
    nodes: Mapping[str, ViewNode],
    paths: Mapping[str, str],
) -> str:
    """The Tools section of the snapshot, or ``""`` when the run called no tool.

    ``paths``: the tree position of each call the call tree drew (its ``<li>`` has the id a
    call's link names).
    """
    tools = view.get("tools")
    if not tools or not tools["order"]:
        return ""
    names = tools["columns"]
    costs = {i for i, c in enumerate(names) if c == COST_COLUMN}
    columns = Columns(names, numeric_from=2, times={4}, costs=costs)
    rows = {row["id"]: row for row in tools["rows"]}
    budget = [CALLS_BUDGET]
    body: list[str] = []
    for n, name in enumerate(tools["order"][:TOOL_ROWS]):
        row = rows.get(name)
        if row is None:
            continue
        body.append(columns.row(row["status"], row["glyph"], 0, row["cells"], f' data-row="{n}"'))
        calls = _calls(row, tools, nodes, paths, budget)
        cell = f'<td colspan="{len(names)}" style="{CALLS_CELL}">{calls}</td>'
        body.append(f'<tr class="nba-tool-calls">{cell}</tr>')
    body.append(columns.total(tools["totals"]))
    extra = len(tools["order"]) - TOOL_ROWS
    more = (
        f'<div class="nba-empty">… and {extra:,} more tools. The live view shows them all; so '
        "does <code>trace.tool_usage()</code>.</div>"
        if extra > 0
        else ""
    )
    return (
        '<details class="nba-sec nba-tools-sec" open><summary>Tools</summary>'
        + columns.table("nba-table nba-tools", body)
        + f'{more}<div class="nba-legend">{e(LEGEND)}</div></details>'
    )


def _calls(
    row: ToolRow,
    tools: ToolsView,
    nodes: Mapping[str, ViewNode],
    paths: Mapping[str, str],
    budget: list[int],
) -> str:
    """A tool's calls, folded under its row: each call's line, its link into the tree, and its
    arguments and result."""
    # In tree order, which equal runs share (the row lists calls as they started).
    refs = sorted(row["calls"], key=lambda c: _position(paths.get(c["id"])))
    items: list[str] = []
    for ref in refs:
        node = nodes[ref["id"]]
        where = paths.get(ref["id"])
        if where is not None:
            href = e(f"#{node_anchor(tools['anchor'], where)}")
            link = f'<a class="nba-tree-link" href="{href}">\u2191 its step in the call tree</a>'
        else:
            link = '<span class="nba-empty">(its step is past what this snapshot draws)</span>'
        head = (
            f'<span class="nba-line">{dot(node["status"], node["glyph"])} '
            f'<span class="nba-name">{e(ref["agent"])}</span> '
            f'<span class="nba-preview">{e(node["preview"])}</span> '
            f'<span class="nba-meta">{t(node["time"])}</span></span> {link}'
        )
        info = ""
        if budget[0] > 0:
            info = "".join(field_html(_cut(f)) for f in node.get("details", ()))
            budget[0] -= len(info)
        items.append(f'<div class="nba-tool-call {status_cls(node["status"])}">{head}{info}</div>')
    more = ""
    if row["more"]:
        more = (
            f'<div class="nba-empty">… and {row["more"]:,} more calls. The live view lists the '
            f'first {CALL_LIMIT:,}; <code>trace.tool_usage("call")</code> has every one.</div>'
        )
    count = len(row["calls"]) + row["more"]
    title = f"{count:,} call{'' if count == 1 else 's'} of {row['cells'][0]}"
    return (
        f'<details class="nba-tool-list"><summary>{e(title)}</summary>'
        f"{''.join(items)}{more}</details>"
    )


def _position(path: str | None) -> tuple[float, ...]:
    return tuple(int(p) for p in path.split(".")) if path is not None else (float("inf"),)


def node_anchor(anchor: str, path: str) -> str:
    """The id of the call tree's ``<li>`` at ``path``, which a call's link names."""
    return f"nba-{anchor}-{path}"


def _cut(item: DetailField) -> DetailField:
    value = item["value"]
    if isinstance(value, str) and len(value) > CALL_TEXT:
        return {**item, "value": truncate(value, CALL_TEXT)}
    return item


def plain_tools(view: View) -> str:
    """The tools as a line of text under the plain version's header, or ``""``."""
    tools = view.get("tools")
    if not tools or not tools["order"]:
        return ""
    rows = {row["id"]: row for row in tools["rows"]}
    parts = []
    for name in tools["order"]:
        cells = rows[name]["cells"] if name in rows else None
        if cells:
            failed = f", {cells[3]} failed" if cells[3] != "0" else ""
            parts.append(f"{cells[0]} \u00d7{cells[2]} (by {cells[1]}{failed})")
    return "<br>" + e("tools: " + " · ".join(parts))
