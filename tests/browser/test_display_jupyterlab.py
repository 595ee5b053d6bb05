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
