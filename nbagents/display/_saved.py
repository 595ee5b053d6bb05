"""A trace's view as an output that needs no kernel: the snapshot, and the view drawn from it
where the output is trusted.

A widget output draws only while its widget's model is in the page: a notebook saved without
widget state showed "model not found" where the run had been. So when a run ends, the live view
replaces its output with this HTML, and a displayed trace shows as it too:

- the static snapshot (:func:`~nbagents.display._html.render_view`), which untrusted notebooks,
  GitHub and sanitizing exports show;
- the final view and the viewer's code, each deflated and base64-encoded in an HTML comment,
  which every sanitizer drops;
- ``static/saved.js``, which, where the output is trusted, imports the viewer (``static/live/``
  joined, the widget's own code) and draws the run from the saved view with no kernel.

A comment ends at the first ``>`` after ``--``; base64 has neither, so nothing from the run can
close the comment, the output or the nbval markers around it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zlib
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from nbagents.display._format import dumps
from nbagents.display._html import live_module, render_view, static_text, unseen
from nbagents.display._records import TurnView
from nbagents.display._viewmodel import ViewBuilder
from nbagents.tracing.model import Trace

__all__ = [
    "PACK_LEVEL",
    "SAVED_PAGES_LIMIT",
    "SAVED_VIEW_LIMIT",
    "conversation_pages",
    "packed",
    "saved_html",
    "trace_saved_html",
    "unpacked",
]

SAVED_VIEW_LIMIT = 16_000_000
"""Characters of view JSON saved with the output; past it the output holds the snapshot only."""
SAVED_PAGES_LIMIT = 4_000_000
"""Characters of conversation pages past the first (which the view holds) saved with the
output, which has no kernel to ask for them."""


def saved_html(builder: ViewBuilder, uid: str = "") -> str:
    """The static snapshot of ``builder``'s whole view plus the view itself, as of its last
    update. ``uid``: the widget's whose output this replaces (its view hands what the user chose
    to the saved one), or ``""``."""
    view = builder.snapshot_view()
    view_json = dumps(view)
    if len(view_json) > SAVED_VIEW_LIMIT:
        return render_view(view) + (
            '<div class="nba-empty">This run is too large to keep its interactive view in the '
            f"notebook ({len(view_json) / 1e6:.0f} MB); the snapshot above is bounded, and "
            "<code>t.to_dataframe()</code> has every step.</div>"
        )
    pages = conversation_pages(builder, SAVED_PAGES_LIMIT)
    if pages != "{}":
        view_json = view_json[:-1] + f',"pages":{pages}}}'
    # zlib lets go of the GIL: the view is packed on another core while the snapshot is drawn.
    with ThreadPoolExecutor(1) as pool:
        packing = pool.submit(packed, view_json)
        snapshot = render_view(view)
    return "".join(
        (
            f'<div class="nba-saved" data-nba-uid="{_hex(uid)}">',
            f"<!--nba-code:{_code()}-->",
            f"<!--nba-view:{packing.result()}-->",
            snapshot,
            unseen(f"<script>{static_text('saved.js')}</script>"),
            "</div>",
        )
    )


def conversation_pages(builder: ViewBuilder, limit: int) -> str:
    """The pages past the first of the long conversations, as JSON text: view node id → page
    number (from 1) → its turns. At most about ``limit`` characters, in run order."""
    kept: dict[str, dict[str, list[TurnView]]] = {}
    used = 0
    for key in builder.long_conversations():
        for page in builder.conversation_pages(key):
            used += len(dumps(page["turns"]))
            if used > limit:
                return dumps(kept)
            kept.setdefault(key, {})[str(page["page"])] = page["turns"]
    return dumps(kept)


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
"""zlib's effort for the saved view: the cell waits for it at the run's end, and at the default
level (6) deflating took longer than drawing the snapshot beside it, for a quarter less size."""


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
    js, css = live_module(), static_text("live.css")
    key = hashlib.sha256((js + css).encode()).hexdigest()[:16]
    return f"{key}:{packed(json.dumps({'js': js, 'css': css}, ensure_ascii=False))}"
