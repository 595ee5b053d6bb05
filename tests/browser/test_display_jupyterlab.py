"""The live view in real JupyterLab (Debian's Chromium): the tree grows while ``%%trace`` runs a
synchronous ``invoke``, and the saved notebook holds the final static HTML snapshot.

Uses the browser harness of ``tests/browser`` (its fixtures come from ``conftest.py``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

TESTS = Path(__file__).parent.parent
ROWS = ".jp-NotebookPanel:not(.lm-mod-hidden) .nba-root.nba-live .nba-row"
ANIMATED_IN_VIEWS = (
    "() => document.getAnimations().filter(a => a.playState === 'running' && a.effect"
    " && a.effect.target && a.effect.target.closest('.nba-root')).length"
)


def test_tree_grows_while_the_cell_runs_and_the_saved_notebook_keeps_it(lab: Any) -> None:
    path = lab.server.add_notebook(
        "display_live_check.ipynb",
        [
            f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
            "from support.display_fixtures import make_agent\n"
            "agent = make_agent(latency=0.4)\n"
            "%load_ext nbagents",
            "%%trace t\nout = agent.invoke({'messages': [('user', 'go')]})",
            "print(t.status, len(t.subagents))",
        ],
    )
    lab.open_notebook(path)
    lab.run_all(wait=False)
    lab.wait_for_selector(ROWS, timeout=60_000)
    seen: list[tuple[float, int, bool]] = []
    animated: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        busy = lab.page.evaluate(
            "() => [...document.querySelectorAll('.jp-NotebookPanel:not(.lm-mod-hidden) "
            ".jp-CodeCell .jp-InputPrompt')].some(p => p.textContent.includes('[*]'))"
        )
        seen.append((time.monotonic(), lab.page.locator(ROWS).count(), busy))
        if busy:
            animated.append(lab.page.evaluate(ANIMATED_IN_VIEWS))
        if not busy and len(seen) > 3:
            break
        time.sleep(0.1)
    lab.wait_for_idle()
    lab.screenshot("live view after the run")
    # The tree must grow while the cell is still busy, not appear whole at the end. How many
    # intermediate sizes the page shows depends on the machine's load (updates are coalesced),
    # so ask for growth seen while busy, below the final size.
    while_busy = sorted({n for _, n, busy in seen if busy})
    assert len(while_busy) >= 2, seen
    assert lab.page.locator(ROWS).count() == 18
    assert while_busy[0] < 18, seen
    # Nothing in the view animates while the run goes on: one pulsing badge cost the page a
    # style pass and a repaint per frame, seconds of CPU taken from the kernel's cores.
    assert animated and not any(animated), animated
    live = lab.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .nba-root.nba-live")
    assert live.locator(".nba-badge").inner_text() == "ok"
    assert live.count() == 1  # one view: the saved output's, its snapshot hidden

    # save; the stored output is the saved HTML: the final snapshot and the view, no widget
    lab.save()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        model = lab.server.api("GET", f"contents/{path}")
        outputs = model["content"]["cells"][1]["outputs"]
        if outputs and "Done: combined." in "".join(outputs[0]["data"].get("text/html", "")):
            break
        time.sleep(0.5)
    data = outputs[0]["data"]
    assert "application/vnd.jupyter.widget-view+json" not in data
    html = "".join(data["text/html"])
    assert "Done: combined." in html and "Dig deeper" in html and "nba-s-ok" in html


def test_a_notebook_reopened_while_its_run_goes_on_shows_the_view_as_it_is_and_follows_it(
    lab: Any, browser: Any, tmp_path: Path
) -> None:
    # The widget holds its first whole view and its last patch; a page loaded anew asks the
    # kernel for the widget's state and must get the view as it is, then follow the patches.
    go = tmp_path / "go"
    path = lab.server.add_notebook(
        "display_live_reopened.ipynb",
        [
            "import os, threading, time\n"
            "from nbagents.tracing import Span, Trace\n"
            "from nbagents.display.live import LiveView\n"
            "step = {'agent': 'main', 'depth': 0, 'start': 0.0, 'end': 0.1, 'status': 'ok'}\n"
            "trace = Trace([Span(id='main', parent_id=None, kind='agent', name='main', **step)])\n"
            "view = LiveView(trace).show(auto_finish=False)  # a run that goes on after the cell\n"
            "def grow(first, last):\n"
            "    for i in range(first, last):\n"
            "        trace.add(Span(id=f't{i}', parent_id='main', kind='tool', name=f'step {i}',"
            " **step))\n"
            "        view.sync()\n"
            "def later():\n"
            f"    while not os.path.exists({str(go)!r}):\n"
            "        time.sleep(0.05)\n"
            "    grow(12, 20)\n"
            "grow(0, 12)\n"
            "threading.Thread(target=later, daemon=True).start()",
        ],
    )
    lab.open_notebook(path)
    lab.run_all()
    lab.page.wait_for_function(f"() => document.querySelectorAll({ROWS!r}).length === 13")
    lab.save()

    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        second = type(lab)(context.new_page(), lab.server, f"{lab.name}-second")
        second.open_notebook(path)
        rows = second.page.locator(ROWS)
        second.page.wait_for_function(
            f"() => document.querySelectorAll({ROWS!r}).length > 0", timeout=60_000
        )
        second.page.wait_for_timeout(500)  # a late whole view would still be drawing
        assert rows.count() == 13, rows.all_inner_texts()
        second.screenshot("reopened while the run goes on")
        go.touch()
        second.page.wait_for_function(
            f"() => document.querySelectorAll({ROWS!r}).length === 21", timeout=60_000
        )
        assert "step 19" in rows.last.inner_text()
        lab.page.wait_for_function(f"() => document.querySelectorAll({ROWS!r}).length === 21")
    finally:
        context.close()
