"""Focus, keys and conversation pages in the live widget's front end (static/live/), in
Debian's Chromium without JupyterLab: the stand-in model of ``test_display_widget_js``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.display_fixtures import build_trace
from test_display_widget_js import _set, fresh_view, page

from nbagents.display._viewmodel import build_view

sys.path.insert(0, str(Path(__file__).parents[1]))
from test_display_conversation import _long_agent

pytestmark = pytest.mark.browser
__all__ = ["fresh_view", "page"]

TREE = "#host .nba-live-tree"
PANE = "#host .nba-live-details"


def _rows(page: Any) -> list[str]:
    return list(page.locator(f"{TREE} .nba-row").evaluate_all("rs => rs.map(r => r.dataset.node)"))


def _key(page: Any, key: str) -> None:
    page.keyboard.press(key)


def _focused(page: Any) -> str | None:
    return page.evaluate("() => (document.activeElement || {dataset: {}}).dataset.node || null")


def test_focus_on_a_sub_agent_shows_its_subtree_and_a_breadcrumb_back(page: Any) -> None:
    _set(page, build_view(build_trace()))
    whole = _rows(page)
    page.locator(f"{TREE} .nba-row[data-node='13']").click()  # general-purpose, under B
    page.locator(f"{PANE} button.nba-focus-button").click()
    assert _rows(page) == ["13", "14"]
    crumbs = page.locator("#host .nba-crumbs")
    path = " \u203a ".join(["Whole run", "main", "researcher", "general-purpose"])
    assert crumbs.text_content().startswith(path)
    # its conversation stays in view while one of its steps is selected
    page.locator(f"{TREE} .nba-row[data-node='14']").click()
    assert "Conversation of the focused agent, general-purpose" in page.locator(PANE).inner_text()
    assert page.locator(f"{PANE} .nba-turn-current").count() == 1
    # an ancestor in the breadcrumb focuses on it; "Whole run" shows every step again
    crumbs.locator("button", has_text="researcher").click()
    assert _rows(page) == ["6", "9", "12", "13", "14", "16"]
    assert page.locator(f"{PANE} .nba-details-head").inner_text().startswith("✓")
    crumbs.locator("button", has_text="Whole run").click()
    assert _rows(page) == whole and crumbs.is_hidden()
    assert not page.errors


def test_keys_move_between_rows_turns_siblings_in_and_out(page: Any) -> None:
    _set(page, build_view(build_trace()))
    page.locator(f"{TREE} .nba-row[data-node='0']").focus()
    _key(page, "ArrowDown")
    assert _focused(page) == "1"
    _key(page, "ArrowDown")
    _key(page, "ArrowUp")
    assert _focused(page) == "1"
    # turns: main's model calls, not its sub-agents'
    _key(page, "]")
    assert _focused(page) == "17" and page.evaluate("() => 1") == 1
    assert "Done: combined." in page.locator(PANE).inner_text()
    _key(page, "[")
    assert _focused(page) == "1"
    # siblings: the sub-agents main spawned
    page.locator(f"{TREE} .nba-row[data-node='8']").focus()  # a step of researcher A
    _key(page, "}")
    assert _focused(page) == "6"
    _key(page, "}")
    assert _focused(page) == "7"
    _key(page, "}")
    assert _focused(page) == "7"  # the last
    _key(page, "{")
    assert _focused(page) == "6"
    # in: focus on it; out: its parent agent, then the whole run
    _key(page, "f")
    assert _rows(page)[0] == "6" and "13" in _rows(page) and "3" not in _rows(page)
    assert _focused(page) == "6"
    _key(page, "ArrowDown")
    _key(page, "ArrowDown")
    _key(page, "f")  # on the task that spawned general-purpose: in to it
    assert _rows(page) == ["13", "14"]
    _key(page, "Backspace")
    assert _rows(page)[0] == "6"
    _key(page, "}")  # in focus, a sibling takes the focus
    assert _rows(page) == ["7", "10"]
    _key(page, "Backspace")
    assert _rows(page)[0] == "0" and len(_rows(page)) > 10
    assert _focused(page) == "0"
    _key(page, "f")
    _key(page, "Escape")
    assert len(_rows(page)) > 10 and page.locator("#host .nba-crumbs").is_hidden()
    # out, not in focus: the selection goes up to the parent agent
    page.locator(f"{TREE} .nba-row[data-node='14']").focus()
    _key(page, "Backspace")
    assert _focused(page) == "13"
    _key(page, "Backspace")
    assert _focused(page) == "6"
    assert not page.errors


def test_keys_the_row_uses_do_not_reach_the_page_and_others_do(page: Any) -> None:
    _set(page, build_view(build_trace()))
    page.evaluate(
        """() => { window.nbaKeys = [];
        document.addEventListener('keydown', (e) => window.nbaKeys.push(e.key)); }"""
    )
    page.locator(f"{TREE} .nba-row[data-node='0']").focus()
    for key in ["ArrowDown", "ArrowUp", "]", "[", "}", "{", "ArrowLeft", "ArrowRight", "a", "b"]:
        _key(page, key)
    assert page.evaluate("() => window.nbaKeys") == ["a", "b"]
    assert page.locator("#host .nba-keys").inner_text().startswith("Keys on a row:")
    assert not page.errors


def test_a_long_conversation_pages_and_asks_the_kernel_for_other_pages(page: Any) -> None:
    from nbagents.display.live import LiveView

    live = LiveView(_long_agent(1_500))  # 3,001 entries
    live.sync()
    sent: list[Any] = []
    live.widget.send = sent.append
    page.evaluate("() => { window.nbaModel.sent = []; }")
    _set(page, json.loads(live.builder.view_json()))
    page.locator(f"{TREE} .nba-k-agent > .nba-row").first.click()
    pane = page.locator(PANE)
    where = pane.locator(".nba-page-where").first
    assert where.inner_text() == "entries 1\u2013200 of 3,001 · page 1 of 16"
    assert pane.locator(".nba-turn").count() == 200
    pane.locator("button", has_text="last »").first.click()
    assert "loading entries 3,001\u20133,001" in pane.inner_text()
    (asked,) = page.evaluate("() => window.nbaModel.sent")
    assert asked == {"type": "turns", "id": "0", "page": 15}
    live._on_msg(live.widget, asked, [])
    page.evaluate("(m) => window.nbaModel.emit(m)", sent[-1])
    assert where.inner_text() == "entries 3,001\u20133,001 of 3,001 · page 16 of 16"
    assert pane.locator(".nba-turn").count() == 1
    pane.locator("button", has_text="\u2039 previous").first.click()
    (_, again) = page.evaluate("() => window.nbaModel.sent")
    live._on_msg(live.widget, again, [])
    page.evaluate("(m) => window.nbaModel.emit(m)", sent[-1])
    assert pane.locator(".nba-turn").count() == 200
    assert "turn 1450 · 1 in" in pane.inner_text() and "turn 1399 " not in pane.inner_text()
    page.evaluate("() => { window.nbaModel.sent = []; }")
    assert not page.errors
