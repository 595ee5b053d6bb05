"""A comparison of two runs in real JupyterLab: computed in a running notebook (trusted), and
saved then opened by someone else (untrusted, no stylesheet). Either way the changed
sub-agent is marked, the added one too, and nothing spills out of the output."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from overflow import LONG, OPEN_ALL, OVERFLOW

pytestmark = pytest.mark.browser

TESTS = Path(__file__).parent.parent
sys.path.insert(0, str(TESTS))

from support.compare_fixtures import team_run  # noqa: E402

import nbagents  # noqa: E402

CHANGED = "rgb(245, 230, 184)"  # CHANGE_COLOURS["changed"]
ADDED = "rgb(207, 232, 207)"
OUTPUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output"


def marked(root: Any) -> dict[str, tuple[str, str]]:
    """Each aligned row's agent → (its change word, its background colour) as drawn."""
    return root.evaluate(
        """root => Object.fromEntries([...root.querySelectorAll('table')].at(-1)
            .querySelectorAll('tbody tr:not(.nba-compare-diff)').values().map(tr => [
                tr.cells[0].innerText.trim() + ' | ' + tr.cells[1].innerText.trim(),
                [tr.cells[2].innerText.trim(), getComputedStyle(tr).backgroundColor]]))"""
    )


def check_marks(root: Any) -> None:
    rows = marked(root)
    assert rows["researcher | Find what changed in 2.1."] == ["changed", CHANGED], rows
    assert rows["critic | Judge the plan, pass 2."] == ["added", ADDED], rows
    assert rows["critic | Judge the plan, pass 1."][0] == "same", rows
    assert rows["critic | Judge the plan, pass 1."][1] != CHANGED, rows


def test_a_comparison_computed_in_a_notebook(lab: Any) -> None:
    path = lab.server.add_notebook(
        "compare_check.ipynb",
        [
            f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n"
            "import nbagents\nfrom support.compare_fixtures import team_run",
            "a = team_run()\n"
            "b = team_run(researcher_prompt='Research carefully.', critics=2)\n"
            "nbagents.compare(a, b)",
        ],
    )
    lab.open_notebook(path)
    lab.run_all()
    root = lab.outputs(1).locator(".nba-compare")
    root.wait_for(state="visible")
    assert lab.outputs(1).locator("style").count() == 1  # trusted: the stylesheet applies
    check_marks(root)
    lab.screenshot("comparison, trusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_a_saved_comparison_opened_untrusted(lab: Any) -> None:
    before = team_run()
    after = team_run(researcher_prompt="Research carefully.", critics=2, writer_reply=LONG)
    html = nbagents.compare(before, after).to_html()
    lab.server.add_saved_output("compare_untrusted.ipynb", html, "<Comparison>")
    lab.open_notebook("compare_untrusted.ipynb")
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-compare")
    root.wait_for(state="visible")
    assert out.locator("style").count() == 0  # the sanitizer removed the stylesheet
    check_marks(root)
    assert root.evaluate(OPEN_ALL) >= 2
    inserted = root.locator("ins").first
    assert LONG in inserted.inner_text()
    assert inserted.evaluate("e => getComputedStyle(e).backgroundColor") == ADDED
    spills = root.evaluate(OVERFLOW)
    assert not spills, spills
    lab.screenshot("comparison, untrusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
