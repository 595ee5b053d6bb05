"""A timeline bar drawn in characters, for the snapshot's plain version (``_plain`` in
:mod:`nbagents.display._html`), shown where every ``style`` attribute is dropped and the
inline-styled bars would collapse to nothing. :data:`CELLS` monospace cells span the run.
"""

from __future__ import annotations

from nbagents.display._records import TimelineRow

__all__ = ["CELLS", "LEGEND", "text_bar"]

CELLS = 60
TRACK, RUN, MODEL, TOOL = "\u00b7", "\u2591", "\u2593", "\u2588"
LEGEND = f"{RUN} agent run  {MODEL} model call  {TOOL} tool call"


def text_bar(row: TimelineRow, horizon: float) -> str:
    """``▕··░░▓▓░░█░···▏``: the row's run and its calls across ``CELLS`` cells."""
    if horizon <= 0:
        return "\u2595" + TRACK * CELLS + "\u258f"
    end = row["end"] if row["end"] is not None else horizon
    cells = [TRACK] * CELLS
    first, last = _span(row["start"], end, horizon)
    for i in range(first, last):
        cells[i] = RUN
    for seg in row["segments"]:
        s_end = seg["end"] if seg["end"] is not None else end
        a, b = _span(seg["start"], s_end, horizon)
        for i in range(max(a, first), min(b, last)):
            cells[i] = MODEL if seg["kind"] == "model" else TOOL
    return "\u2595" + "".join(cells) + "\u258f"


def _span(start: float, end: float, horizon: float) -> tuple[int, int]:
    """The cells from ``start`` to ``end``: edges rounded to the nearest cell, at least one."""
    a = min(max(round(start / horizon * CELLS), 0), CELLS - 1)
    b = min(max(round(end / horizon * CELLS), a + 1), CELLS)
    return a, b
