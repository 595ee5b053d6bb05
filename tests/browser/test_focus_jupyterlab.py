"""Focus on one agent, the tree's keys and a long conversation's pages in real JupyterLab
(Debian's Chromium): in a live widget whose kernel sends the pages asked for, and in a run's
saved view, which holds them. The keys a row uses never reach JupyterLab's command mode."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from labharness import ARTIFACTS, CURRENT_NOTEBOOK, LabPage

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_display_conversation import real_trace

pytestmark = pytest.mark.browser

OUT = f"{CURRENT_NOTEBOOK} .jp-Cell .jp-OutputArea-output"
VIEW = f"{OUT} .nba-root.nba-live"
DOCS_IMAGE = Path(__file__).parents[2] / "docs" / "images" / "focus-view.png"

TESTS = Path(__file__).parents[1]
CELLS = [
    "import sys\nfrom nbagents import Trace\nfrom nbagents.display.live import LiveView\n"
    f"sys.path.insert(0, {str(TESTS)!r})\n"
    "from test_display_conversation import _long_agent",
    "nested = LiveView(Trace.load('nested.json')).show(auto_finish=False)",
    # built in the kernel: its model calls each hold the conversation so far, too much
    # to go through a trace file quickly
    "long_trace = _long_agent(500)  # 1,001 entries: 6 pages\n"
    "long = LiveView(long_trace).show(auto_finish=False)",
    "long_trace",
]


def _rows(view: Any) -> list[str]:
    names = view.locator(".nba-live-tree .nba-row").evaluate_all(
        "rows => rows.map(r => r.querySelector('.nba-name').textContent + ' ' + "
        "(r.querySelector('.nba-preview') || {textContent: ''}).textContent)"
    )
    return [str(n).strip() for n in names]


def _focused(lab: LabPage) -> str:
    return str(
        lab.page.evaluate(
            """() => { const r = document.activeElement;
            return r && r.classList.contains('nba-row') ? r.textContent : 'not a row'; }"""
        )
    )


def _notebook_state(lab: LabPage) -> tuple[int, int, bool]:
    """The active cell's index, how many cells, and whether the notebook is in command mode."""
    return tuple(  # type: ignore[return-value]
        lab.page.evaluate(
            f"""() => {{ const nb = document.querySelector('{CURRENT_NOTEBOOK} .jp-Notebook');
            const cells = [...nb.querySelectorAll(':scope .jp-Cell')];
            return [cells.findIndex(c => c.classList.contains('jp-mod-active')), cells.length,
                    nb.classList.contains('jp-mod-commandMode')]; }}"""
        )
    )


@pytest.fixture
def opened(lab: LabPage) -> LabPage:
    real_trace().save(lab.server.root_dir / "nested.json")
    lab.open_notebook(lab.server.add_notebook("focus.ipynb", CELLS))
    lab.run_all()
    lab.page.locator(VIEW).nth(2).wait_for(state="visible")
    return lab


def test_focus_on_a_sub_agent_and_the_keys_in_jupyterlab(opened: LabPage) -> None:
    lab = opened
    view = lab.page.locator(VIEW).first
    whole = _rows(view)
    view.locator(".nba-row", has_text="Research B").first.click()
    view.locator(".nba-row.nba-selected").wait_for()
    view.locator(".nba-k-subagent > .nba-row", has_text="B is fine").first.click()
    view.locator(".nba-live-details button", has_text="Focus on this agent").click()
    rows = _rows(view)
    assert rows[0].startswith("researcher") and "B is fine" in rows[0]
    assert any("general-purpose" in r for r in rows)
    assert not any("Write C" in r or "Research A" in r or "Done: combined" in r for r in rows)
    crumbs = view.locator(".nba-crumbs")
    assert crumbs.text_content().startswith("Whole run \u203a main \u203a researcher")
    assert "Conversation (" in view.locator(".nba-live-details").inner_text()
    lab.page.set_viewport_size({"width": 1400, "height": 900})
    view.locator(".nba-row", has_text="general-purpose").first.click()
    view.scroll_into_view_if_needed()
    shot = ARTIFACTS / "focus-view.png"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    view.locator(":scope > details.nba-sec").first.screenshot(path=str(shot))  # the call tree
    if DOCS_IMAGE.parent.is_dir() and not DOCS_IMAGE.exists():
        shutil.copyfile(shot, DOCS_IMAGE)
    # the breadcrumb leads back: to main (the whole tree under it), then the whole run
    crumbs.locator("button", has_text="main").click()
    assert _rows(view) == whole and crumbs.is_visible()
    crumbs.locator("button", has_text="Whole run").click()
    assert _rows(view) == whole and crumbs.is_hidden()

    # keys, on main's row: rows, turns, siblings, in, out
    view.locator(".nba-k-agent > .nba-row").first.click()
    before = _notebook_state(lab)
    assert before[2], before
    lab.page.keyboard.press("ArrowDown")
    assert _focused(lab).startswith("✓") and "calls task" in _focused(lab)
    lab.page.keyboard.press("ArrowDown")
    assert "Research" in _focused(lab)
    lab.page.keyboard.press("ArrowUp")
    assert "calls task" in _focused(lab)
    lab.page.keyboard.press("]")  # main's next model call: its last, past the sub-agents
    assert "Done: combined." in _focused(lab)
    assert "Done: combined." in view.locator(".nba-live-details .nba-details-head").inner_text()
    lab.page.keyboard.press("[")
    assert "calls task" in _focused(lab)
    view.locator(".nba-row", has_text="calls search").first.click()  # in researcher A
    lab.page.keyboard.press("}")
    assert "B is fine" in _focused(lab) and "researcher" in _focused(lab)
    lab.page.keyboard.press("}")
    assert "writer" in _focused(lab)
    lab.page.keyboard.press("{")
    assert "B is fine" in _focused(lab)
    lab.page.keyboard.press("f")  # in: researcher B's subtree alone
    assert _rows(view)[0].startswith("researcher") and len(_rows(view)) < len(whole)
    lab.page.keyboard.press("Backspace")  # out: main, its parent agent
    assert crumbs.text_content().startswith("Whole run \u203a main")
    lab.page.keyboard.press("Backspace")  # out of main: the whole run
    assert crumbs.is_hidden() and _rows(view) == whole
    lab.page.keyboard.press("f")
    lab.page.keyboard.press("Escape")
    assert crumbs.is_hidden()
    # JupyterLab saw none of it: the same cell active, no cell added, still in command mode
    assert _notebook_state(lab) == before
    assert re.search(r"Keys on a row: .*\[ \] previous, next turn", view.inner_text())
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_a_long_transcript_pages_live_and_saved_in_jupyterlab(opened: LabPage) -> None:
    lab = opened
    for n, source in ((1, "the kernel"), (2, "the saved view")):
        view = lab.page.locator(VIEW).nth(n)
        view.locator(".nba-k-agent > .nba-row").first.click()
        pane = view.locator(".nba-live-details")
        where = pane.locator(".nba-page-where").first
        assert where.inner_text() == "entries 1\u2013200 of 1,001 \u00b7 page 1 of 6", source
        assert pane.locator(".nba-turn").count() == 200
        pane.locator("button", has_text="last \u00bb").first.click()
        where.filter(has_text="page 6 of 6").wait_for()
        pane.locator(".nba-turn").first.wait_for()  # from the kernel: once it answered
        assert pane.locator(".nba-turn").count() == 1
        assert pane.locator(".nba-turn-tool").count() == 1  # the last entry: a tool result
        pane.locator("button", has_text="\u2039 previous").first.click()
        where.filter(has_text="page 5 of 6").wait_for()
        pane.locator(".nba-turn").nth(199).wait_for()
        assert pane.locator(".nba-turn").count() == 200
        pane.locator("button", has_text="\u00ab first").first.click()
        where.filter(has_text="page 1 of 6").wait_for()
    lab.screenshot("long transcript paged")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
