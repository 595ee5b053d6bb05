"""The live output once its run is over, in real JupyterLab (Debian's Chromium).

When a run ends, its live widget output becomes saved HTML (``nbagents/display/_saved.py``). In
the session that ran it the view stays interactive and keeps what the user chose; the notebook,
saved without widget state (JupyterLab's default) and reopened on a fresh kernel, draws the same
view instead of "Error displaying widget: model not found"; opened untrusted it shows the static
snapshot, with none of the saved code or data as text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from typing import Any

import pytest
from labharness import CURRENT_NOTEBOOK, LabPage

pytestmark = pytest.mark.browser

OUT = f"{CURRENT_NOTEBOOK} .jp-Cell .jp-OutputArea-output"
SAVED_VIEW = f"{OUT} .nba-saved .nba-saved-view .nba-root.nba-live"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
HOSTILE = "<img src=x onerror=alert(1)> --> </script>"

AGENT = f"""
import pathlib, time
from langchain_core.tools import tool
import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say

GO = pathlib.Path("go.flag")

@tool
def hold() -> str:
    \"\"\"Wait until the test lets the run go on.\"\"\"
    while not GO.exists():
        time.sleep(0.05)
    return "held"

script = {{
    "main": [parallel(delegate("Look A.", "helper"), delegate("Look B.", "helper")), "All done."],
    "helper": {{"Look A.": [call("hold"), say("A found.")], "Look B.": [say({HOSTILE!r})]}},
}}
helper = {{"name": "helper", "description": "Looks.", "system_prompt": "Look."}}
agent = create_deep_agent(ScriptedChatModel(script=script), [hold], subagents=[helper])
"""
RUN = "with nbagents.trace() as t:\n    out = agent.invoke({'messages': [('user', 'go')]})"


def _saved_notebook(lab: LabPage, path: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        model = lab.server.api("GET", f"contents/{path}")
        outputs = model["content"]["cells"][1]["outputs"]
        if outputs and "nba-saved" in "".join(outputs[0]["data"].get("text/html", "")):
            return dict(model["content"])
        assert time.monotonic() < deadline, outputs
        time.sleep(0.5)


def _no_widget_error(lab: LabPage) -> None:
    text = lab.page.locator(CURRENT_NOTEBOOK).inner_text()
    assert "Error displaying widget" not in text and "nba-code" not in text


def test_the_finished_view_stays_interactive_and_a_reopened_notebook_draws_it(
    lab: LabPage,
) -> None:
    (lab.server.root_dir / "go.flag").unlink(missing_ok=True)
    path = lab.server.add_notebook("saved_view_check.ipynb", [AGENT, RUN])
    lab.open_notebook(path)
    lab.run_all(wait=False)

    # mid-run, in the widget: select a finished sub-agent and filter the tree
    live = lab.page.locator(f"{OUT} .nba-root.nba-live")
    row = live.locator(".nba-row", has_text="Look B.").first
    row.wait_for(state="visible", timeout=60_000)
    assert lab.page.locator(f"{OUT} .nba-saved").count() == 0  # still the widget
    row.click()
    live.locator(".nba-filter-text").fill("look")
    (lab.server.root_dir / "go.flag").touch()
    lab.wait_for_idle()

    # the run is over: the saved view replaced the widget and kept the selection and the filter
    saved = lab.page.locator(SAVED_VIEW)
    saved.wait_for(state="visible")
    assert saved.locator(".nba-badge").inner_text() == "ok"
    assert saved.locator(".nba-filter-text").input_value() == "look"
    assert "Look B." in saved.locator(".nba-row.nba-selected").inner_text()
    assert not lab.page.locator(f"{OUT} .nba-saved > .nba-trace").is_visible()
    assert lab.page.locator(f"{OUT} .nba-root.nba-live").count() == 1
    # hostile text is text
    assert lab.page.locator(f"{OUT} img").count() == 0 and not lab.dialogs
    saved.locator(".nba-filter-text").fill("")
    saved.locator(".nba-row", has_text="Look A.").first.click()
    assert "A found." in saved.locator(".nba-live-details").inner_text()
    lab.screenshot("saved view in the session")

    # saved with JupyterLab's defaults (no widget state): the output holds no widget
    lab.save()
    notebook = _saved_notebook(lab, path)
    data = notebook["cells"][1]["outputs"][0]["data"]
    assert WIDGET_MIME not in data
    assert "widgets" not in notebook["metadata"]

    # reopened on a fresh kernel: the view is drawn from the saved output alone
    for session in lab.server.api("GET", "sessions"):
        lab.server.api("DELETE", f"sessions/{session['id']}")
    lab.open_notebook(path)
    saved.wait_for(state="visible")
    _no_widget_error(lab)
    assert saved.locator(".nba-badge").inner_text() == "ok"
    saved.locator(".nba-row", has_text="Look B.").first.click()
    details = saved.locator(".nba-live-details").inner_text()
    assert HOSTILE in details
    assert lab.page.locator(f"{OUT} img").count() == 0 and not lab.dialogs
    lab.screenshot("reopened")

    # opened by someone who did not run it (untrusted): the snapshot, no saved code or data
    html = "".join(data["text/html"])
    lab.open_notebook(lab.server.add_saved_output("saved_view_untrusted.ipynb", html))
    snapshot = lab.page.locator(f"{OUT} .nba-trace")
    snapshot.wait_for(state="visible")
    assert lab.page.locator(f"{OUT} .nba-saved-view").count() == 0
    assert "All done." in snapshot.inner_text()
    _no_widget_error(lab)
    assert "showSaved" not in lab.page.locator(OUT).first.inner_text()
    assert lab.page.locator(f"{OUT} script, {OUT} img").count() == 0 and not lab.dialogs
    lab.screenshot("untrusted")


def test_a_tutorial_trusted_as_make_lab_does_draws_its_saved_views_without_running(
    lab: LabPage,
) -> None:
    signed = lab.server.root_dir / "01_quickstart.ipynb"
    unsigned = lab.server.root_dir / "quickstart_unsigned.ipynb"
    copy = json.loads(signed.read_text(encoding="utf-8"))
    copy["metadata"]["title"] = "a copy"  # another notebook: trust goes by content
    unsigned.write_text(json.dumps(copy), encoding="utf-8")
    # what `make lab` runs; the copy is a notebook the user did not trust
    data = {"JUPYTER_DATA_DIR": str(lab.server.root_dir.parent / "data")}  # the server's
    trust = [sys.executable, "-m", "jupyter", "trust", str(signed)]
    subprocess.run(trust, check=True, env={**os.environ, **data})
    lab.open_notebook(signed.name)
    views = lab.page.locator(f"{OUT} .nba-saved .nba-saved-view .nba-root.nba-live")
    views.first.wait_for(state="visible")
    # JupyterLab draws a notebook's cells a batch at a time: the second output may come later.
    views.nth(1).wait_for(state="attached")
    assert views.count() == lab.page.locator(f"{OUT} .nba-saved").count() >= 2  # live, then t
    _no_widget_error(lab)
    # (a page of its own: JupyterLab asks before leaving a notebook it opened)
    other = LabPage(lab.page.context.new_page(), lab.server, lab.name)
    other.open_notebook(unsigned.name)
    other.page.locator(f"{OUT} .nba-saved > .nba-trace").first.wait_for(state="visible")
    assert other.page.locator(f"{OUT} .nba-saved-view").count() == 0
    _no_widget_error(other)
    assert not lab.dialogs
