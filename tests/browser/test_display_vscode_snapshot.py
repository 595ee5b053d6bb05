"""A saved trace snapshot the way VS Code's notebook editor shows it, in Chromium.

VS Code draws a ``text/html`` output inside the notebook's webview: in a trusted workspace its
built-in renderer puts the HTML into an output element as it is (``<style>`` applies; nothing is
sanitized), on a page whose colours come from the editor theme as ``--vscode-*`` variables and
that defines none of JupyterLab's ``--jp-*`` ones. (In an untrusted workspace it shows only the
``text/plain`` of the output, the trace's summary.) VS Code itself cannot run here, so this page
rebuilds that setting: the theme's variables on ``body``, the output inserted with
``innerHTML``. The snapshot must place its bars by the trace's times and stay readable in VS
Code's default dark and light themes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from contrast import CONTRAST
from support.display_fixtures import build_trace

from nbagents.display._viewmodel import build_view

pytestmark = pytest.mark.browser

THEMES = {
    # The editor colours of VS Code's default themes (Dark Modern, Light Modern) that a
    # notebook output's webview receives.
    "dark-modern": {
        "class": "vscode-dark",
        "--vscode-editor-background": "#1f1f1f",
        "--vscode-editor-foreground": "#cccccc",
        "--vscode-descriptionForeground": "#9d9d9d",
        "--vscode-editorError-foreground": "#f14c4c",
        "--vscode-panel-border": "#2b2b2b",
        "--vscode-charts-green": "#89d185",
        "--vscode-charts-blue": "#3794ff",
        "--vscode-charts-yellow": "#cca700",
        "--vscode-editorWarning-foreground": "#cca700",
    },
    "light-modern": {
        "class": "vscode-light",
        "--vscode-editor-background": "#ffffff",
        "--vscode-editor-foreground": "#3b3b3b",
        "--vscode-descriptionForeground": "#3b3b3b",
        "--vscode-editorError-foreground": "#e51400",
        "--vscode-panel-border": "#e5e5e5",
        "--vscode-charts-green": "#388a34",
        "--vscode-charts-blue": "#1a85ff",
        "--vscode-charts-yellow": "#bf8803",
        "--vscode-editorWarning-foreground": "#bf8803",
    },
}

PAGE = """<!doctype html><html><head><meta charset="utf-8"></head>
<body class="{cls}" style="{variables}; background: var(--vscode-editor-background);
  color: var(--vscode-editor-foreground); margin: 0; padding: 8px 20px">
<div class="output"></div>
<script>document.querySelector('.output').innerHTML = {html};</script>
</body></html>"""

TEXTS = ".nba-name, .nba-preview, .nba-stat, .nba-badge, .nba-tl-label, td, th, .nba-kind, summary"
"""Every kind of text the snapshot shows, muted ones included."""


@pytest.mark.parametrize("theme", sorted(THEMES))
def test_a_snapshot_in_a_vscode_notebook_is_placed_right_and_readable(
    browser: Any, theme: str
) -> None:
    trace = build_trace()
    colours = dict(THEMES[theme])
    cls = colours.pop("class")
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.set_content(
            PAGE.format(
                cls=cls,
                variables="; ".join(f"{k}: {v}" for k, v in colours.items()),
                html=json.dumps(trace.to_html()),
            )
        )
        root = page.locator(".output .nba-trace")
        root.wait_for(state="visible")
        # the stylesheet applies here: the character bars for style-less renderers stay hidden
        assert not page.locator(".nba-tl-text").first.is_visible()

        rows = root.locator(".nba-tl-row")
        expected = build_view(trace)["timeline"]
        assert rows.count() == len(expected) > 0
        horizon = max(s.end or s.start for s in trace.spans)
        for i, row in enumerate(expected):
            left, width = rows.nth(i).evaluate(
                """r => {
                    const t = r.querySelector('.nba-tl-track').getBoundingClientRect();
                    const b = r.querySelector('.nba-bar').getBoundingClientRect();
                    return [(b.left - t.left) / t.width, b.width / t.width];
                }"""
            )
            end = row["end"] if row["end"] is not None else horizon
            assert left == pytest.approx(row["start"] / horizon, abs=0.02), (i, left)
            assert width == pytest.approx((end - row["start"]) / horizon, abs=0.02), (i, width)

        seen = root.evaluate(CONTRAST, TEXTS)
        dark = sum(seen["page"][:3]) < 3 * 128
        assert dark == (cls == "vscode-dark"), seen["page"]
        low = [t for t in seen["texts"] if t[1] < 4.5]  # WCAG AA for text
        assert seen["texts"] and not low, low
        faint = [b for b in seen["bars"] if b[1] < 1.5]  # bars stand out from the page
        assert seen["bars"] and not faint, faint
        assert not errors, errors
    finally:
        page.close()
