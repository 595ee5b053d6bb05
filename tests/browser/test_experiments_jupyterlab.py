"""An experiment in real JupyterLab: its progress view updates while the cell runs and ends
with the figures; the results view is drawn trusted, and saved then opened untrusted (no
stylesheet) it reads the same, with what the cases said kept as text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from overflow import OPEN_ALL, OVERFLOW

import nbagents

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x onerror="window.__nbaPwned=1">'
OUTPUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output"
PASS, FAIL = "rgb(207, 232, 207)", "rgb(242, 204, 204)"

SLOW_EXPERIMENT = f"""
import asyncio
import nbagents

async def answer(inputs):
    await asyncio.sleep(0.4)
    return "yes" if inputs["n"] % 4 else "no"

def says_yes(answer):
    return answer == "yes"

cases = [{{"id": f"case {{n}}", "inputs": {{"n": n}}}} for n in range(12)]
cases[1]["id"] = {HOSTILE!r}
exp = nbagents.evaluate(answer, cases, scorers=[says_yes], max_concurrency=2, store=False,
                        name="slow")
exp
"""


def rows(root: Any) -> list[list[str]]:
    """The runs table as drawn: each row's cells' text."""
    return root.evaluate(
        """root => [...[...root.querySelectorAll('table')].at(-1).querySelectorAll('tbody tr')]
            .map(tr => [...tr.cells].map(td => td.innerText.trim()))"""
    )


def colour_of(root: Any, text: str) -> str:
    return root.evaluate(
        """(root, text) => getComputedStyle([...root.querySelectorAll('td')]
            .find(td => td.innerText.trim() === text)).backgroundColor""",
        text,
    )


def check_results(root: Any) -> None:
    drawn = rows(root)
    assert len(drawn) == 12
    assert drawn[1][0] == HOSTILE  # the case id, shown as text
    assert drawn[0][3] == "fail" and drawn[1][3] == "pass", drawn[:2]
    assert colour_of(root, "fail") == FAIL
    assert colour_of(root, "pass") == PASS
    assert "says_yes" in root.inner_text() and "75%" in root.inner_text()


def test_the_progress_updates_while_the_cell_runs_then_the_results_show(lab: Any) -> None:
    path = lab.server.add_notebook("experiment_live.ipynb", [SLOW_EXPERIMENT])
    lab.open_notebook(path)
    lab.run_all(wait=False)
    progress = lab.outputs(0).locator(".nba-exp-progress")
    progress.wait_for(state="visible")
    seen: set[str] = set()
    while len(seen) < 3 and not lab.page.locator(f"{OUTPUT} .nba-exp").count():
        text = progress.inner_text()
        found = re.search(r"(\d+)/12 runs", text)
        if found:
            seen.add(found.group(1))
        lab.page.wait_for_timeout(150)
    # It was seen part-way: some runs done, others not, as the cell ran.
    assert any(0 < int(n) < 12 for n in seen), seen
    lab.wait_for_idle()
    final = progress.inner_text()
    assert "done" in final and "12/12 runs" in final and "says_yes: 75%" in final, final
    root = lab.outputs(0).locator(".nba-exp")
    root.wait_for(state="visible")
    assert lab.outputs(0).locator("style.nba-css").count() == 1  # trusted: styled
    root.evaluate(OPEN_ALL)
    check_results(root)
    assert lab.page.evaluate("() => window.__nbaPwned") is None
    lab.screenshot("experiment, live then results")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_a_saved_experiment_opened_untrusted(lab: Any) -> None:
    def says_yes(answer: str) -> bool:
        return answer == "yes"

    cases: list[dict[str, Any]] = [{"id": f"case {n}", "inputs": {"n": n}} for n in range(12)]
    cases[1]["id"] = HOSTILE
    exp = nbagents.evaluate(
        lambda inputs: "yes" if inputs["n"] % 4 else "no",
        cases,
        scorers=[says_yes],
        store=False,
        name="saved",
    )
    lab.server.add_saved_output("experiment_untrusted.ipynb", exp.to_html(), repr(exp))
    lab.open_notebook("experiment_untrusted.ipynb")
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-exp")
    root.wait_for(state="visible")
    assert out.locator("style").count() == 0  # the sanitizer removed the stylesheet
    root.evaluate(OPEN_ALL)
    check_results(root)
    spills = root.evaluate(OVERFLOW)
    assert not spills, spills
    assert lab.page.evaluate("() => window.__nbaPwned") is None
    lab.screenshot("experiment, untrusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
