"""A committed tutorial exported with nbconvert (as nbviewer and many sites show notebooks),
opened in Chromium: with the exporter's HTML sanitizer off (the default) each trace output's
script draws its view; with it on (``--sanitize-html``, what nbviewer-like tools should use,
which drops every inline style and escapes the stylesheet, the script and the snapshot's
``<details>`` into text) each output shows its plain version instead, and none of that escaped
text. Either way the timeline bars sit where the saved times say.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from labharness import unavailable

from nbagents.display._textbar import CELLS

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "03_parallel_fanout.ipynb"
ROW_TIMES = re.compile(r'data-start="([^"]+)" data-end="([^"]+)" data-horizon="([^"]+)"')


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        unavailable("Chromium is not installed")
    from playwright import sync_api

    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


def _saved_times() -> list[tuple[float, float, float]]:
    nb = json.loads(NOTEBOOK.read_text(encoding="utf-8"))
    rows: list[tuple[float, float, float]] = []
    for cell in nb["cells"]:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            html = "".join(data.get("text/html", ""))
            rows += [(float(a), float(b), float(c)) for a, b, c in ROW_TIMES.findall(html)]
    return rows


@pytest.mark.parametrize("sanitize", [False, True], ids=["as-exported", "sanitized"])
def test_an_exported_tutorial_places_its_timeline_by_the_saved_times(
    browser: Any, tmp_path: Path, sanitize: bool
) -> None:
    expected = _saved_times()
    assert expected, "the tutorial shows no static timeline"
    command = [sys.executable, "-m", "nbconvert", "--to", "html", "--output-dir", str(tmp_path)]
    if sanitize:
        command.append("--sanitize-html")
    subprocess.run([*command, str(NOTEBOOK)], check=True, capture_output=True, timeout=120)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((tmp_path / NOTEBOOK.with_suffix(".html").name).as_uri())
        # Each output (the live view's, the trace displayed after) is its snapshot and its view.
        saved_views = page.locator(".nba-saved .nba-saved-view .nba-root.nba-live")
        outputs = page.locator(".nba-saved").count()
        assert outputs >= 2
        if sanitize:  # no script, no style: each output shows its plain version
            page.locator(".nba-saved > .nba-trace").first.wait_for(state="visible")
            assert saved_views.count() == 0
            _check_the_plain_version(page, outputs, expected)
            return
        # each output's script draws its view, as the live widget drew it
        saved_views.first.wait_for(state="visible")
        assert saved_views.count() == outputs
        assert not page.locator(".nba-saved > .nba-trace").first.is_visible()
        assert not page.locator(".nba-plain").first.is_visible()
        shown = ".nba-saved-view"
        rows = page.locator(f"{shown} .nba-tl-row")
        rows.first.wait_for(state="visible")
        assert rows.count() == len(expected)
        for k, (start, end, horizon) in enumerate(expected):
            left, width = rows.nth(k).evaluate(
                """r => {
                    const t = r.querySelector('.nba-tl-track').getBoundingClientRect();
                    const b = r.querySelector('.nba-bar').getBoundingClientRect();
                    return [(b.left - t.left) / t.width, b.width / t.width];
                }"""
            )
            assert left == pytest.approx(min(start / horizon, 0.995), abs=0.02), k
            assert width == pytest.approx(max((end - start) / horizon, 0.005), abs=0.02), k
        assert page.locator(f"{shown} .nba-name").first.is_visible()
        assert not errors, errors
    finally:
        page.close()


def _check_the_plain_version(
    page: Any, outputs: int, expected: list[tuple[float, float, float]]
) -> None:
    """nbconvert's sanitizer drops every style attribute and escapes <style>, <script>,
    <details> and <th> into text: the page's own styles hide the stylesheet, the loader and
    the rich snapshot, and the plain version shows the run as lines, its timeline drawn in
    characters at the saved times."""
    assert page.locator(".nba-trace style, .nba-trace [style]").count() == 0
    bars: list[str] = []
    for k in range(outputs):
        box = page.locator(".nba-saved").nth(k)
        shown = box.inner_text()
        assert "nba-root {" in box.text_content() and "nba-root {" not in shown
        for escaped in ("DecompressionStream", "<style", "<script", "<details", "<summary", "<th"):
            assert escaped not in shown, escaped
        assert not box.locator(".nba-rich").is_visible()
        plain = box.locator(".nba-plain")
        assert plain.is_visible()
        assert "agent main" in plain.locator(".nba-plain-tree").inner_text()
        texts = plain.locator(".nba-plain-tl .nba-tl-text")
        bars += [texts.nth(i).inner_text() for i in range(texts.count() - 1)]  # last: legend
        assert texts.last.inner_text().startswith("\u2591 agent run")
    assert len(bars) == len(expected)
    for k, (start, end, horizon) in enumerate(expected):
        cells = bars[k].strip().strip("\u2595\u258f")
        assert len(cells) == CELLS
        drawn = [i for i, c in enumerate(cells) if c != "\u00b7"]
        assert abs(drawn[0] / CELLS - start / horizon) <= 1 / CELLS, (k, cells)
        assert abs((drawn[-1] + 1) / CELLS - end / horizon) <= 1 / CELLS, (k, cells)
