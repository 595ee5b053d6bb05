"""The static HTML of a comparison: two runs' agents aligned row by row, and several runs'
totals side by side. Self-contained, no script, like the trace snapshot.

It reads the same where the stylesheet and classes are stripped (an untrusted notebook): the
change of each row is a word in its own column, a changed row is coloured with an inline
``background-color``, and the result's diff marks words with ``<del>``/``<ins>`` and inline
colours, all of which Jupyter's sanitizer keeps. Every text from the runs is escaped. Times
vary between runs, so they are wrapped in ``<span class="nba-t">``, and costs (which vary with
the price table) in ``<span class="nba-cost">``, for the sanitize rules nbagents ships.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

from nbagents.display import MINUS, WRAP_LONG_WORDS, stylesheet

if TYPE_CHECKING:
    from nbagents.comparison._compare import Comparison, Row, Side, Totals
    from nbagents.comparison._table import RunsTable

ROW_LIMIT = 500
"""Aligned agents drawn; the rest are counted (``to_dataframe()`` has them all)."""
CHANGE_COLOURS = {"changed": "#f5e6b8", "added": "#cfe8cf", "removed": "#f2cccc"}
"""Light tones that dark text reads on, in a light or a dark theme alike."""
DIFF_STYLE = {
    "del": "background-color:#f2cccc;text-decoration:line-through",
    "ins": "background-color:#cfe8cf;text-decoration:none",
}
TEXT_LIMIT = 120
"""Characters of a task description shown on its row."""


def _open(kind: str) -> list[str]:
    return [
        f'<div class="nba-root nba-compare {kind} tex2jax_ignore mathjax_ignore" '
        f'style="{WRAP_LONG_WORDS}">',
        stylesheet(),
    ]


def _tokens(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _cost(value: float | None) -> str:
    # Wrapped like the trace view's costs: they vary with the installed price table.
    return "—" if value is None else f'<span class="nba-cost">${value:,.6f}</span>'


def _seconds(value: float | None) -> str:
    return "—" if value is None else f'<span class="nba-t">{value:.2f} s</span>'


def _delta(value: float | None, fmt: str) -> str:
    if value is None:
        return "—"
    if fmt == "tokens":
        return f"{int(value):+,}" if value else "0"
    if fmt == "cost":
        return f'<span class="nba-cost">{value:+,.6f}</span>' if value else "0"
    return f'<span class="nba-t">{value:+.2f} s</span>'


_FIGURES: tuple[tuple[str, str, Callable[[Any], str]], ...] = (
    ("tokens", "tokens", _tokens),
    ("cost", "cost", _cost),
    ("seconds", "time", _seconds),
)
"""A figure of a run: its attribute, its label and how it is shown."""


def _num(text: str) -> str:
    return f'<td class="nba-num" style="text-align:right">{text}</td>'


def comparison_html(comparison: Comparison) -> str:
    a, b = comparison.totals
    out = _open("nba-compare-two")
    out.append(
        '<div class="nba-header"><b>Compare</b> '
        f"<span>{escape(a.label, quote=True)}</span> with "
        f"<span>{escape(b.label, quote=True)}</span>: "
        f"{len(comparison.changed())} of {len(comparison.rows)} agents differ</div>"
    )
    out.append(_totals_table((a, b), deltas=True))
    out.append('<details class="nba-sec" open><summary>Agents, aligned</summary>')
    out.append(_rows_table(comparison))
    out.append("</details></div>")
    return "\n".join(out)


def _totals_table(runs: tuple[Totals, ...], *, deltas: bool) -> str:
    head = "".join(f"<th>{escape(t.label, quote=True)}</th>" for t in runs)
    if deltas:
        head += f"<th>Δ (B {MINUS} A)</th>"
    lines = [f'<table class="nba-table nba-compare-totals"><thead><tr><th></th>{head}</tr></thead>']
    lines.append("<tbody>")
    rows = [
        ("status", [escape(t.status) for t in runs], None),
        ("tokens", [_tokens(t.tokens) for t in runs], ("tokens", "tokens")),
        ("cost", [_cost(t.cost) for t in runs], ("cost", "cost")),
        ("time", [_seconds(t.seconds) for t in runs], ("seconds", "seconds")),
        ("spawns", [str(t.spawns) for t in runs], ("spawns", "tokens")),
        ("failures", [str(t.failures) for t in runs], ("failures", "tokens")),
    ]
    for label, cells, delta in rows:
        line = f"<tr><th>{label}</th>" + "".join(_num(c) for c in cells)
        if deltas:
            if delta is None:
                line += _num("")
            else:
                first, last = getattr(runs[0], delta[0]), getattr(runs[-1], delta[0])
                change = None if first is None or last is None else last - first
                line += _num(_delta(change, delta[1]))
        lines.append(line + "</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _rows_table(comparison: Comparison) -> str:
    head = (
        "<tr><th>agent</th><th>task</th><th>change</th>"
        "<th>status A</th><th>status B</th>"
        "<th>tokens A</th><th>tokens B</th><th>Δ tokens</th>"
        "<th>cost A</th><th>cost B</th><th>Δ cost</th>"
        "<th>time A</th><th>time B</th><th>Δ time</th></tr>"
    )
    lines = [f'<table class="nba-table nba-compare-rows"><thead>{head}</thead><tbody>']
    lines += [_row(row) for row in comparison.rows[:ROW_LIMIT]]
    lines.append("</tbody></table>")
    hidden = len(comparison.rows) - ROW_LIMIT
    if hidden > 0:
        lines.append(
            f'<div class="nba-empty">… and {hidden:,} more agents; '
            "<code>comparison.to_dataframe()</code> has them all.</div>"
        )
    return "\n".join(lines)


def _row(row: Row) -> str:
    colour = CHANGE_COLOURS.get(row.change)
    style = f' style="background-color:{colour};color:#1a1a1a"' if colour else ""
    indent = f"padding-left:{0.3 + 1.2 * row.depth:.1f}em"
    task = row.description
    if len(task) > TEXT_LIMIT:
        task = task[: TEXT_LIMIT - 1] + "…"
    cells = [
        f'<td style="{indent};word-break:break-all">{escape(row.type, quote=True)}</td>',
        f'<td style="word-break:break-all">{escape(task, quote=True)}</td>',
        f'<td class="nba-change nba-change-{row.change}">{row.change}</td>',
        f"<td>{_status(row.a)}</td><td>{_status(row.b)}</td>",
    ]
    for what, _, show in _FIGURES:
        a, b = getattr(row.a, what), getattr(row.b, what)
        cells += [_num(show(a)), _num(show(b)), _num(_delta(row.delta(what), what))]
    line = f'<tr class="nba-compare-{row.change}"{style}>' + "".join(cells) + "</tr>"
    if row.diff is None:
        return line
    return line + (
        f'<tr class="nba-compare-diff"{style}><td></td><td colspan="13">'
        "<details><summary>result differs (A → B, word by word)</summary>"
        '<div class="nba-text" style="white-space:pre-wrap;word-break:break-all">'
        f"{_diff(row.diff)}</div>"
        "</details></td></tr>"
    )


def _status(side: Side) -> str:
    return "—" if side.status is None else escape(side.status)


def _diff(parts: list[tuple[str, str]]) -> str:
    out: list[str] = []
    previous = "same"
    for kind, text in parts:
        if kind == "same":
            out.append(escape(text, quote=True))
        else:
            if kind == "ins" and previous == "del":
                out.append(" ")  # "login is" replaced by "and": not "login isand"
            out.append(f'<{kind} style="{DIFF_STYLE[kind]}">{escape(text, quote=True)}</{kind}>')
        previous = kind
    return "".join(out)


def runs_table_html(table: RunsTable) -> str:
    out = _open("nba-compare-many")
    out.append(f'<div class="nba-header"><b>Compare</b> {len(table.runs)} runs</div>')
    out.append(_totals_table(tuple(table.totals), deltas=False))
    if table.per_type:
        head = "".join(f"<th>{escape(t.label, quote=True)}</th>" for t in table.totals)
        out.append('<details class="nba-sec" open><summary>Per agent type</summary>')
        out.append(f'<table class="nba-table"><thead><tr><th>agent</th><th></th>{head}</tr>')
        out.append("</thead><tbody>")
        for agent, cells in table.per_type.items():
            for n, (_, label, show) in enumerate(_FIGURES):
                name = escape(agent, quote=True) if n == 0 else ""
                shown = "".join(_num(show(c[n])) for c in cells)
                out.append(f"<tr><th>{name}</th><th>{label}</th>{shown}</tr>")
        out.append("</tbody></table></details>")
    out.append("</div>")
    return "\n".join(out)
