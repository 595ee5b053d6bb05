"""The snapshot's Timeline pane: each agent's bar in its track, its calls inside it, its plan's
ticks under it.

Laid out with inline ``display:inline-block``, ``width`` and ``background-color`` only, which
Jupyter's sanitizer keeps where it strips the ``<style>`` element. Percent widths of inline
blocks are of their container: the gap and the bar of the track, the calls (and the gaps between
them) of the bar.
"""

from __future__ import annotations

from collections.abc import Sequence

from nbagents.display._htmlparts import dot, e, status_cls, t
from nbagents.display._records import TimelineRow

__all__ = ["timeline_html"]

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
TRACK = 'style="display:block;width:100%;white-space:nowrap;font-size:0;line-height:0"'


def timeline_html(rows: Sequence[TimelineRow], horizon: float, more: str) -> str:
    """The rows' bars (``more``: what says how many were left out), and the legend."""
    out = ['<div class="nba-tl">']
    for row in rows:
        indent = "\u2003" * row["depth"]
        end = row["end"] if row["end"] is not None else horizon
        # The times the bar stands for, for tools and tests that check the layout against them.
        times = f'data-start="{row["start"]:g}" data-end="{end:g}" data-horizon="{horizon:g}"'
        out.append(
            f'<div class="nba-tl-row {status_cls(row["status"])}" {times}>'
            f'<span class="nba-tl-label">{indent}{dot(row["status"], row["glyph"])} '
            f"{e(row['name'])}</span> "
            f'<span class="nba-tl-time">{t(row["time"])}</span>'
            f'<span class="nba-tl-track" {TRACK}>{_bar(row, horizon)}</span>'
            f"{_marks(row, horizon)}</div>"
        )
    swatches = [
        f'<span class="nba-swatch nba-seg-{kind}" style="display:inline-block;width:10px;'
        f'height:8px;background-color:{SEGMENT_COLOURS[kind]}"></span>'
        for kind in ("model", "tool")
    ]
    out.append(
        f'{more}<div class="nba-legend">bar: agent run, {swatches[0]} model call, '
        f"{swatches[1]} tool call</div></div>"
    )
    return "".join(out)


def _block(
    width: float, colour: str | None, cls: str, title: str = "", inner: str | None = None
) -> str:
    style = f"display:inline-block;width:{min(max(width, 0.0), 100.0):.2f}%;height:12px"
    style += ";vertical-align:top"
    if inner is not None:  # a bar, holding its calls' blocks
        style += ";white-space:nowrap;font-size:0;line-height:0"
    if colour:
        style += f";background-color:{colour}"
    attr = f' title="{e(title)}"' if title else ""
    return f'<span class="{cls}" style="{style}"{attr}>{inner or ""}</span>'


def _bar(row: TimelineRow, horizon: float) -> str:
    """An agent's bar placed in its track, its calls laid out in order inside it (overlapping
    calls one after the other)."""
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
    colour = BAR_COLOURS.get(row["status"], BAR_COLOURS["running"])
    bar = _block(width, colour, "nba-bar", inner="".join(inner))
    return _block(left, None, "nba-gap") + bar


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
    return f'<span class="nba-tl-track nba-tl-marks" {TRACK}>{"".join(ticks)}</span>'
