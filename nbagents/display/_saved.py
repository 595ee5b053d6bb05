"""A trace's view as an output that needs no kernel: the snapshot, and the view drawn from it
where the output is trusted.

A widget output only draws while its widget's model is in the page. A notebook saved without
widget state (JupyterLab's default) and reopened showed "Error displaying widget: model not
found" where the run had been. So when a run ends, :class:`~nbagents.display.live.LiveView`
replaces its widget output with this HTML, and a displayed trace (``t``) shows as it too:

- the static snapshot (:func:`~nbagents.display._html.render_view`), which untrusted notebooks,
  GitHub and sanitizing exports show;
- the final view and the viewer's code, each deflated and base64-encoded in an HTML comment:
  every sanitizer drops comments, so neither shows as text anywhere, and deflated, a 500-way
  run's 4 MB view takes 0.2 MB of the notebook;
- a short script, ``static/saved.js``. Where the output is trusted (the session that ran it, the
  user's own notebook reopened, an exported page) it imports the viewer, which is ``live.js``,
  the widget's own code, and draws the run from the saved view as the widget drew it, with no
  kernel. Where scripts do not run, the snapshot stays.

A comment ends at the first ``>`` that follows ``--``; base64 has neither ``-`` nor ``>``, so
nothing from the run can close the comment, the output or the nbval markers around it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import zlib
from functools import cache

from nbagents.display._html import render_view, static_text, unseen
from nbagents.display._viewmodel import ViewBuilder
from nbagents.tracing.model import Trace

__all__ = ["PACK_LEVEL", "SAVED_VIEW_LIMIT", "packed", "saved_html", "trace_saved_html", "unpacked"]

SAVED_VIEW_LIMIT = 16_000_000
"""Characters of view JSON saved with the output (a 500-way run of ~4,500 steps is about 4
million, and its whole output 1.6 MB); past it the output holds the snapshot only."""


def saved_html(builder: ViewBuilder, uid: str = "") -> str:
    """The static snapshot of ``builder``'s whole view plus the view itself, as of its last
    update.

    ``uid`` is the widget's whose output this replaces (its view hands what the user chose to
    the saved one), or ``""``.
    """
    view_json = builder.view_json()
    if len(view_json) > SAVED_VIEW_LIMIT:
        return render_view(builder.snapshot_view()) + (
            '<div class="nba-empty">This run is too large to keep its interactive view in the '
            f"notebook ({len(view_json) / 1e6:.0f} MB); the snapshot above is bounded, and "
            "<code>t.to_dataframe()</code> has every step.</div>"
        )
    # zlib lets go of the GIL while it deflates: the view is packed on another core while
    # this thread draws the snapshot (for a wide run both take a while).
    packing: list[str] = []
    packer = threading.Thread(target=lambda: packing.append(packed(view_json)), daemon=True)
    packer.start()
    snapshot = render_view(builder.snapshot_view())
    packer.join()
    if not packing:
        raise RuntimeError("The saved view could not be packed.")
    return "".join(
        (
            f'<div class="nba-saved" data-nba-uid="{_hex(uid)}">',
            f"<!--nba-code:{_code()}-->",
            f"<!--nba-view:{packing[0]}-->",
            snapshot,
            unseen(f"<script>{static_text('saved.js')}</script>"),
            "</div>",
        )
    )


def trace_saved_html(trace: Trace) -> str:
    """:func:`saved_html` of the whole view of ``trace``: how a displayed trace shows."""
    builder = ViewBuilder(trace)
    builder.update()
    return saved_html(builder)


def _hex(uid: str) -> str:
    if not all(c in "0123456789abcdef" for c in uid):
        raise ValueError(f"A widget uid is hexadecimal, not {uid!r}.")
    return uid


PACK_LEVEL = 3
"""zlib's effort for the saved view. Level 3 deflates a wide run's view in well under half the
time of zlib's default (6), for a somewhat larger result: the cell waits for it at the run's
end, where the deflating had become longer than drawing the snapshot beside it."""


def packed(text: str) -> str:
    """``text`` as the saved output holds it: zlib-deflated (what the browser's
    ``DecompressionStream("deflate")`` reads), then base64."""
    return base64.b64encode(zlib.compress(text.encode(), PACK_LEVEL)).decode("ascii")


def unpacked(data: str) -> str:
    """The text :func:`packed` made ``data`` from."""
    return zlib.decompress(base64.b64decode(data)).decode()


@cache
def _code() -> str:
    """``key:packed code``: pages holding several outputs import the viewer once per key."""
    js, css = static_text("live.js"), static_text("live.css")
    key = hashlib.sha256((js + css).encode()).hexdigest()[:16]
    return f"{key}:{packed(json.dumps({'js': js, 'css': css}, ensure_ascii=False))}"
