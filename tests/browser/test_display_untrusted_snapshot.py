"""A saved trace snapshot opened in JupyterLab by someone who did not run it (untrusted).

JupyterLab's sanitizer then strips the ``<style>`` element and every inline style it does not
know. The tree, the token table and the timeline must still read right: bars at the right
place and of the right width, calls inside them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from contrast import CONTRAST
from labharness import LabPage
from overflow import LONG, OPEN_ALL, OVERFLOW
from support.display_fixtures import build_trace

from nbagents.display._viewmodel import build_view

pytestmark = pytest.mark.browser

OUTPUT = ".jp-Notebook .jp-Cell .jp-OutputArea-output"


def _write_untrusted(lab: LabPage, name: str, html: str) -> str:
    return lab.server.add_saved_output(name, html)


def _box(locator: Any) -> dict[str, float]:
    box = locator.bounding_box()
    assert box is not None
    return dict(box)


def test_the_timeline_is_placed_right_in_an_untrusted_notebook(lab: LabPage) -> None:
    trace = build_trace()
    lab.open_notebook(_write_untrusted(lab, "untrusted.ipynb", trace.to_html()))
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-trace")
    root.wait_for(state="visible")
    # the sanitizer did its work: no stylesheet, so only inline layout can place the bars
    assert out.locator("style").count() == 0
    # the character bars meant for style-less renderers stay hidden: inline styles survived
    assert (
        out.locator(".nba-tl-text").count() == 6
        and not out.locator(".nba-tl-text").first.is_visible()
    )
    assert root.locator("details").count() > 10  # the tree still folds
    assert root.locator("table.nba-tokens tbody tr").count() == 6

    rows = root.locator(".nba-tl-row")
    assert rows.count() == 5
    expected_rows = build_view(trace)["timeline"]
    horizon = max(s.end or s.start for s in trace.spans)
    track = _box(rows.nth(0).locator(".nba-tl-track"))
    assert track["width"] > 200
    for i, expected in enumerate(expected_rows):
        bar = _box(rows.nth(i).locator(".nba-bar"))
        row_track = _box(rows.nth(i).locator(".nba-tl-track"))
        left = (bar["x"] - row_track["x"]) / row_track["width"]
        width = bar["width"] / row_track["width"]
        assert left == pytest.approx(expected["start"] / horizon, abs=0.02), (i, left)
        end = expected["end"] if expected["end"] is not None else horizon
        assert width == pytest.approx((end - expected["start"]) / horizon, abs=0.02), (i, width)
        # the calls sit inside their agent's bar, each with some width
        for seg in rows.nth(i).locator(".nba-seg").all():
            s = _box(seg)
            assert s["width"] > 0 and bar["x"] - 1 <= s["x"] <= bar["x"] + bar["width"] + 1
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_long_unbroken_strings_stay_inside_an_untrusted_output(lab: LabPage) -> None:
    """``LONG`` in every text of the trace, every ``<details>`` open, no stylesheet: no element
    reaches past the output."""
    lab.open_notebook(_write_untrusted(lab, "long.ipynb", build_trace(LONG).to_html()))
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-trace")
    root.wait_for(state="visible")
    assert out.locator("style").count() == 0
    assert root.evaluate(OPEN_ALL) >= 30  # sections, folded steps and their details panes
    assert root.locator(".nba-call").count() >= 5
    spills = root.evaluate(OVERFLOW)
    assert not spills, spills
    assert LONG in root.inner_text()  # there to read, wrapped or scrolled
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_a_sub_agents_conversation_opens_in_an_untrusted_notebook(lab: LabPage) -> None:
    """The nested sub-agent's details pane, unfolded by a click, shows its Conversation:
    system prompt folded, its task, its reply; hostile text in it stays text."""
    payload = "<img src=x onerror=window.__pwned=1>"
    lab.open_notebook(_write_untrusted(lab, "conv.ipynb", build_trace(payload).to_html()))
    root = lab.page.locator(OUTPUT).first.locator(".nba-trace")
    root.wait_for(state="visible")
    nested = root.locator("li.nba-k-subagent li.nba-k-subagent").first  # the nested spawn
    conv = nested.locator(".nba-conv").first
    assert not conv.is_visible()  # folded in the step's details until asked for
    nested.locator("details.nba-info > summary").first.click()
    conv.wait_for(state="visible")
    text = conv.inner_text()
    assert "Conversation (" in text
    assert "deep result" + payload in text  # its answer, as text
    assert conv.locator("img").count() == 0
    assert lab.page.evaluate("() => window.__pwned === undefined")
    # the main agent's conversation names the sub-agents its task results came from
    main = root.locator("li.nba-k-agent").first
    main.locator("details.nba-info > summary").first.click()
    links = main.locator(".nba-conv").first.locator(".nba-conv-link")
    assert links.count() == 3
    assert "the conversation of researcher: Research A" in links.first.inner_text()
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


# -- every committed tutorial, as a newcomer opens it ---------------------------------------------

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
ROW_TIMES = re.compile(
    r'class="nba-tl-row [^"]*" data-start="([^"]+)" data-end="([^"]+)" data-horizon="([^"]+)"'
)


def _saved_rows(nb: dict[str, Any]) -> dict[tuple[int, int], list[tuple[float, float, float]]]:
    """(code cell, output) -> the times of each timeline row its saved ``text/html`` draws."""
    found = {}
    code_cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(code_cells):
        for j, output in enumerate(cell.get("outputs", [])):
            html = "".join(output.get("data", {}).get("text/html", ""))
            rows = [tuple(map(float, m)) for m in ROW_TIMES.findall(html)]
            if rows:
                found[(i, j)] = rows
    return found


def _placed(row: Any) -> tuple[float, float]:
    """A row's bar as fractions of its track, measured in one go once the layout is still
    (JupyterLab lays a notebook out in steps while it opens and scrolls)."""
    row.scroll_into_view_if_needed()
    measure = """r => {
        const t = r.querySelector('.nba-tl-track').getBoundingClientRect();
        const b = r.querySelector('.nba-bar').getBoundingClientRect();
        return [(b.left - t.left) / t.width, b.width / t.width];
    }"""
    last = row.evaluate(measure)
    for _ in range(50):
        row.page.wait_for_timeout(50)
        now = row.evaluate(measure)
        if now == last:
            return float(now[0]), float(now[1])
        last = now
    raise AssertionError("the timeline never stopped moving")


def _with_timelines() -> list[str]:
    names = sorted(
        p.name
        for p in NOTEBOOKS.glob("*.ipynb")
        if _saved_rows(json.loads(p.read_text(encoding="utf-8")))
    )
    # every tutorial draws a timeline but those that show no trace view: the export one, and the
    # experiments one (its views are an experiment's results and a comparison)
    without = {p.name for p in NOTEBOOKS.glob("*.ipynb")} - set(names)
    assert without <= {"11_export_and_cost.ipynb", "15_experiments.ipynb"}, without
    return names


@pytest.mark.parametrize("name", _with_timelines())
def test_each_tutorial_timeline_matches_its_times_untrusted(lab: LabPage, name: str) -> None:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    saved = _saved_rows(nb)
    (lab.server.root_dir / name).write_text(json.dumps(nb))  # copied: untrusted here
    lab.open_notebook(name)
    code_cells = lab.page.locator(".jp-Notebook .jp-CodeCell")
    checked = 0
    for (i, j), rows in saved.items():
        output = code_cells.nth(i).locator(".jp-OutputArea-output").nth(j)
        # JupyterLab draws a long notebook's cells a few at a time after it opens: wait until
        # this output shows the snapshot or the widget before telling which one it is.
        output.locator(".nba-trace, .nba-live").first.wait_for(state="attached")
        drawn = output.locator(".nba-trace .nba-tl-row")
        if drawn.count() == 0:
            continue  # drawn as the widget (its saved state), not from the snapshot
        drawn.first.wait_for(state="visible")
        assert drawn.count() == len(rows), (name, i, j)
        for k, (start, end, horizon) in enumerate(rows):
            left, width = _placed(drawn.nth(k))
            # within a few pixels (2 % of the track), as the saved times say
            assert left == pytest.approx(min(start / horizon, 0.995), abs=0.02), (name, i, k)
            expected = max((end - start) / horizon, 0.005)
            assert width == pytest.approx(expected, abs=0.02), (name, i, k)
            checked += 1
    assert checked, f"no timeline of {name} was drawn from its snapshot"
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


# -- readable in JupyterLab's dark theme ----------------------------------------------------------


def _theme(lab: LabPage, name: str) -> None:
    lab.page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Settings$")).click()
    lab.page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).click()
    lab.page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{name}$")).click()
    lab.page.wait_for_function(
        "dark => document.body.dataset.jpThemeLight === String(!dark)", arg="Dark" in name
    )
    lab.page.locator("#jupyterlab-splash").wait_for(state="detached")


def test_the_snapshot_stays_readable_in_the_dark_theme_untrusted(lab: LabPage) -> None:
    trace = build_trace()
    lab.open_notebook(_write_untrusted(lab, "dark.ipynb", trace.to_html()))
    root = lab.page.locator(OUTPUT).first.locator(".nba-trace")
    root.wait_for(state="visible")
    try:
        _theme(lab, "JupyterLab Dark")
        lab.screenshot("dark")
        seen = root.evaluate(CONTRAST)
        assert sum(seen["page"][:3]) < 3 * 128, seen["page"]  # the page did turn dark
        low = [t for t in seen["texts"] if t[1] < 4.5]  # WCAG AA for text
        assert seen["texts"] and not low, low
        faint = [b for b in seen["bars"] if b[1] < 1.5]  # bars stand out from the page
        assert seen["bars"] and not faint, faint
    finally:
        _theme(lab, "JupyterLab Light")


def test_the_timeline_is_placed_right_in_notebook_7_untrusted(lab: LabPage) -> None:
    """The same saved snapshot in Jupyter Notebook 7 (its own page, the same server)."""
    # Notebook 7 logs page errors of its own (seen with a plain <b> output too): open a control
    # notebook first, so that only errors our output adds count.
    control = _write_untrusted(lab, "control_nb7.ipynb", "<b>plain output</b>")
    other = lab.page.context.new_page()
    its_own: set[str] = set()
    other.on("pageerror", lambda exc: its_own.add(f"pageerror: {exc}"))
    other.goto(lab.server.url(f"notebooks/{control}"))
    other.locator(OUTPUT).first.wait_for(state="visible", timeout=60_000)
    other.wait_for_timeout(1000)
    other.close(run_before_unload=False)
    trace = build_trace()
    name = _write_untrusted(lab, "untrusted_nb7.ipynb", trace.to_html())
    lab.page.goto(lab.server.url(f"notebooks/{name}"))
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-trace")
    root.wait_for(state="visible", timeout=60_000)
    assert out.locator("style").count() == 0  # untrusted: the stylesheet is gone here too
    expected_rows = build_view(trace)["timeline"]
    horizon = max(s.end or s.start for s in trace.spans)
    rows = root.locator(".nba-tl-row")
    assert rows.count() == len(expected_rows)
    for i, expected in enumerate(expected_rows):
        left, width = _placed(rows.nth(i))
        end = expected["end"] if expected["end"] is not None else horizon
        assert left == pytest.approx(expected["start"] / horizon, abs=0.02), (i, left)
        assert width == pytest.approx((end - expected["start"]) / horizon, abs=0.02), (i, width)
    ours = {c for c in lab.console if c.startswith("pageerror")} - its_own
    assert not ours, ours
