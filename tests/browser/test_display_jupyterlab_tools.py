"""The Tools pane in real JupyterLab (Debian's Chromium): after a nested run, trusted (the saved
view, drawn by live.js) and untrusted (the static snapshot, scripts stripped). In both, a tool's
row opens its calls, a hostile argument is text, and a call leads to its step in the call tree:
trusted, by selecting the step (its folded ancestors opened); untrusted, by a link that
JupyterLab's own handling of fragment links scrolls to.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from labharness import CURRENT_NOTEBOOK, LabPage

pytestmark = pytest.mark.browser

OUT = f"{CURRENT_NOTEBOOK} .jp-Cell .jp-OutputArea-output"
SAVED_VIEW = f"{OUT} .nba-saved .nba-saved-view .nba-root.nba-live"
HOSTILE = "<img src=x onerror=window.__toolsPwned=1>"

# The nested run of tests/support/tool_run.py, written out: the served notebooks cannot import
# the tests' support modules.
AGENT = f"""
import dataclasses
from langchain_core.tools import tool
import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say

def used(turn, inp, out):
    return dataclasses.replace(turn, usage={{"input_tokens": inp, "output_tokens": out}})

@tool
def search(query: str) -> str:
    \"\"\"Search the web.\"\"\"
    return f"found {{query}}"

@tool
def fetch(url: str) -> str:
    \"\"\"Fetch a page.\"\"\"
    return f"page {{url}}"

script = {{
    "main": [
        used(parallel(call("search", query="q" + {HOSTILE!r}), delegate("Research A", "researcher"),
                      delegate("Research B", "researcher")), 100, 10),
        "done",
    ],
    "researcher": {{
        "Research A": [
            used(parallel(call("search", query="a1"), call("search", query="a2")), 50, 5), "A"
        ],
        "Research B": [used(delegate("Deeper"), 70, 7), "B"],
    }},
    "general-purpose": [used(call("fetch", url="u"), 30, 3), "d"],
}}
researcher = {{"name": "researcher", "description": "Researches", "system_prompt": "r"}}
agent = create_deep_agent(ScriptedChatModel(script=script), [search, fetch], subagents=[researcher])
"""
SEARCH_ROW = r"search\s+researcher \u00d72, main\s+3\s+0\s"
"""The search tool's row: called three times, twice by a researcher, never failed."""
RUN = "with nbagents.trace() as t:\n    out = agent.invoke({'messages': [('user', 'go')]})"


def _saved_html(lab: LabPage, path: str) -> str:
    deadline = time.monotonic() + 30
    while True:
        cells = lab.server.api("GET", f"contents/{path}")["content"]["cells"]
        outputs = cells[1]["outputs"]
        html = "".join(outputs[0]["data"].get("text/html", "")) if outputs else ""
        if "nba-saved" in html:
            return html
        assert time.monotonic() < deadline, outputs
        time.sleep(0.5)


def _in_sight(locator: Any) -> bool:
    """Whether the element is inside the window and inside every box that scrolls it."""
    return bool(
        locator.evaluate(
            """el => {
                const r = el.getBoundingClientRect();
                if (r.height === 0 || r.top < 0 || r.bottom > window.innerHeight) return false;
                for (let a = el.parentElement; a; a = a.parentElement) {
                    const s = getComputedStyle(a).overflowY;
                    if (s !== 'auto' && s !== 'scroll') continue;
                    const b = a.getBoundingClientRect();
                    if (r.top < b.top - 1 || r.bottom > b.bottom + 1) return false;
                }
                return true;
            }"""
        )
    )


def _not_pwned(lab: LabPage, page: Any) -> None:
    assert page.evaluate("() => window.__toolsPwned === undefined"), "a payload ran"
    assert page.locator(f"{OUT} img").count() == 0 and not lab.dialogs


def test_the_tools_pane_trusted_and_untrusted_leads_from_a_call_to_its_step(
    lab: LabPage,
) -> None:
    path = lab.server.add_notebook("tools_view_check.ipynb", [AGENT, RUN])
    lab.open_notebook(path)
    lab.run_all()

    # -- trusted: the run's saved view, drawn by live.js -------------------------------------
    view = lab.page.locator(SAVED_VIEW)
    view.wait_for(state="visible")
    tools = view.locator(".nba-tools-sec")
    rows = tools.locator("tr.nba-tool-row")
    assert rows.count() == 3  # search, task, fetch
    search = rows.first
    assert re.search(SEARCH_ROW, search.inner_text())
    # fold the researchers away in the tree: reaching a call must open its way there
    for toggle in view.locator(".nba-k-subagent > .nba-row > .nba-toggle").all()[:2]:
        toggle.click()
    step_rows = view.locator(".nba-live-tree .nba-row")
    assert step_rows.filter(has_text='{"query": "a2"}').count() == 0
    search.click()
    calls = tools.locator(".nba-tool-call")
    assert calls.count() == 3
    assert f"found q{HOSTILE}" in tools.inner_text()
    _not_pwned(lab, lab.page)
    lab.page.mouse.wheel(0, 2000)  # the tree scrolled away, as after reading the table
    calls.filter(has_text='{"query": "a2"}').locator(".nba-tree-link").click()
    step = view.locator(".nba-live-tree .nba-row.nba-selected")
    step.wait_for(state="visible")
    assert '{"query": "a2"}' in step.inner_text() and "researcher" not in step.inner_text()
    assert _in_sight(step)
    assert "found a2" in view.locator(".nba-live-details").inner_text()
    lab.screenshot("tools, trusted")

    # -- untrusted: the same output, opened by someone who did not run it ----------------------
    lab.save()
    html = _saved_html(lab, path)
    lab.open_notebook(lab.server.add_saved_output("tools_view_untrusted.ipynb", html))
    snapshot = lab.page.locator(f"{OUT} .nba-trace")
    snapshot.wait_for(state="visible")
    assert lab.page.locator(f"{OUT} .nba-saved-view, {OUT} style").count() == 0  # sanitized
    table = snapshot.locator("table.nba-tools")
    first = table.locator("tbody > tr").first
    assert re.search(SEARCH_ROW, first.inner_text())
    listing = table.locator("tr.nba-tool-calls details.nba-tool-list").first
    assert not listing.locator(".nba-tool-call").first.is_visible()  # folded: the row opens it
    listing.locator("summary").click()
    call = listing.locator(".nba-tool-call").filter(has_text='{"query": "a2"}')
    call.wait_for(state="visible")
    assert f"found q{HOSTILE}" in listing.inner_text()
    _not_pwned(lab, lab.page)
    # JupyterLab's sanitizer renames the step's id to data-jupyter-id, which the notebook's own
    # handling of a link to "#…" looks up: the link scrolls the step into sight
    link = call.locator("a.nba-tree-link")
    target = (link.get_attribute("href") or "")[1:]
    assert re.fullmatch(r"nba-[0-9a-f-]{36}-[0-9.]+", target), target
    step = snapshot.locator(f"li[data-jupyter-id='{target}'] .nba-line").first
    assert '{"query": "a2"}' in step.inner_text()
    assert not _in_sight(step)  # the tree is above the Tools pane the call was read in
    link.click()
    lab.page.wait_for_function(
        """id => {
            const el = document.querySelector(`li[data-jupyter-id="${id}"] .nba-line`);
            const r = el.getBoundingClientRect();
            return r.top >= 0 && r.bottom <= window.innerHeight;
        }""",
        arg=target,
        polling=100,
        timeout=10_000,
    )
    assert _in_sight(step)
    _not_pwned(lab, lab.page)
    lab.screenshot("tools, untrusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
    # the link is the only kind of link in the snapshot, and it names a step of this output
    anchors = json.loads(
        snapshot.evaluate("e => JSON.stringify([...e.querySelectorAll('a')].map(a => a.href))")
    )
    assert anchors and all("#nba-" in a for a in anchors)
