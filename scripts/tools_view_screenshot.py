"""Draw docs/images/tools-view.png: the interactive view of a nested run (tests/support/tool_run.py,
its model priced as gpt-4o) in Debian's Chromium, a tool opened and one of its calls followed to
its step of the call tree.

    .venv/bin/python scripts/tools_view_screenshot.py [out.png]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "browser")]

from playwright.sync_api import sync_playwright  # noqa: E402
from support.tool_run import tool_trace  # noqa: E402
from test_display_widget_js import HARNESS  # noqa: E402

from nbagents.display._viewmodel import build_view  # noqa: E402
from nbagents.display.live import TraceWidget  # noqa: E402


def main(out: Path) -> None:
    view = build_view(tool_trace(model_name="gpt-4o"))
    widget = TraceWidget()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1000, "height": 900}, device_scale_factor=1)
        page.set_content("<!doctype html><html><head></head><body></body></html>")
        page.add_script_tag(content=HARNESS)
        page.evaluate("([esm, css]) => window.nbaMount(esm, css)", [widget._esm, widget._css])
        page.evaluate("(v) => window.nbaModel.set('view_json', v)", json.dumps(view))
        page.locator("#host details.nba-sec").nth(1).evaluate("d => { d.open = false; }")
        page.locator("#host tr.nba-tool-row").first.click()
        call = page.locator("#host .nba-tool-call", has_text='{"query": "a2"}')
        call.locator(".nba-tree-link").click()
        page.mouse.move(0, 0)
        page.locator("#host .nba-root").screenshot(path=str(out))
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs" / "images" / "tools-view.png")
