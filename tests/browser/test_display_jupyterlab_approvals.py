"""Answering a paused run from the live view in real JupyterLab (issue 13).

Two sub-agents pause before ``deploy``; the user approves one request and edits the other's
arguments in the widget, then submits. The kernel resumes the run: the tool runs with the edited
arguments, and the same output's tree completes (no second tree, no pending request left).
"""

from __future__ import annotations

import pytest
from labharness import LabPage

pytestmark = pytest.mark.browser

SETUP = """\
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

import nbagents
from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import call, delegate, parallel, say

deployed = []

@tool
def deploy(target: str, version: str = "1.0") -> str:
    \"\"\"Deploy a version to a target.\"\"\"
    deployed.append(f"{target}@{version}")
    return f"deployed {version} to {target}"

model = ScriptedChatModel(script={
    "main": [parallel(delegate("Ship A.", "ops"), delegate("Ship B.", "ops")), "all shipped"],
    "ops": {
        "Ship A.": [call("deploy", target="alpha"), say("A handled.")],
        "Ship B.": [call("deploy", target="beta"), say("B handled.")],
    },
})
agent = create_deep_agent(
    model, [deploy],
    subagents=[{"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}],
    interrupt_on={"deploy": True}, checkpointer=InMemorySaver(),
)
config = {"configurable": {"thread_id": "release-1"}}
with nbagents.trace(title="release") as t:
    paused = agent.invoke({"messages": [("user", "Ship A and B")]}, config)
"""


def test_approve_one_request_and_edit_another_from_the_view(lab: LabPage) -> None:
    path = lab.server.add_notebook("approvals_view.ipynb", [SETUP])
    lab.open_notebook(path)
    lab.run_all()
    out = lab.outputs(0)
    alpha = out.locator(".nba-request", has_text="target='alpha'")
    beta = out.locator(".nba-request", has_text="target='beta'")
    alpha.wait_for(state="visible")
    beta.wait_for(state="visible")
    assert "waiting for a decision" in out.locator(".nba-header").first.inner_text()
    submit = out.locator(".nba-submit")
    submit.wait_for(state="visible")
    assert submit.is_disabled()  # nothing decided yet
    lab.screenshot("paused")

    alpha.locator(".nba-choice[data-decision='approve']").click()
    beta.locator(".nba-choice[data-decision='edit']").click()
    args = beta.locator("textarea.nba-edit-args")
    args.fill('{"target": "beta", "version": "2.0-rc1"}')
    assert "2 of 2 decided" in out.locator(".nba-approvals-bar").inner_text()
    assert submit.is_enabled()
    submit.click()

    # The same output, saved once the resumed run ended (it waits for nothing more): the
    # header turns ok, no request is left, the tools' results show.
    view = out.locator(".nba-saved .nba-saved-view .nba-root.nba-live")
    view.locator(".nba-header .nba-badge.nba-s-ok").wait_for(timeout=60_000)
    assert view.locator(".nba-request").count() == 0
    tools = view.locator(".nba-node.nba-k-tool .nba-preview").all_inner_texts()
    assert sorted(tools) == ['{"target": "alpha"}', '{"target": "beta", "version": "2.0-rc1"}']
    assert "A handled." in view.inner_text() and "B handled." in view.inner_text()
    assert "nba-notice" not in view.inner_html()
    assert view.locator(".nba-tree > li").count() == 1  # one tree across the pause
    lab.screenshot("resumed")
    assert not lab.dialogs, lab.dialogs


def test_one_cell_waits_for_the_decision_and_carries_on(lab: LabPage) -> None:
    """``wait_for_decisions`` inside the cell: the user answers while the cell is busy."""
    cell = (
        SETUP
        + "    result = await nbagents.wait_for_decisions(t, timeout=120)\nprint('cell done')\n"
    )
    after = "print(sorted(deployed), result['messages'][-1].text)"
    path = lab.server.add_notebook("approvals_wait.ipynb", [cell, after])
    lab.open_notebook(path)
    lab.run_all(wait=False)
    out = lab.outputs(0)
    alpha = out.locator(".nba-request", has_text="target='alpha'")
    beta = out.locator(".nba-request", has_text="target='beta'")
    beta.wait_for(state="visible", timeout=60_000)
    submit = out.locator(".nba-submit")
    lab.page.wait_for_function(
        "el => !el.querySelector('.nba-choice').disabled", arg=out.first.element_handle()
    )
    alpha.locator(".nba-choice[data-decision='reject']").click()
    alpha.locator("input.nba-message").fill("Not on a Friday.")
    beta.locator(".nba-choice[data-decision='edit']").click()
    beta.locator("textarea.nba-edit-args").fill('{"target": "gamma"}')
    submit.click()
    lab.wait_for_idle()
    printed = lab.outputs(1).inner_text()
    assert "['gamma@1.0'] all shipped" in printed, printed
    assert "cell done" in out.all_inner_texts()[-1] or "cell done" in " ".join(
        out.all_inner_texts()
    )
    assert out.locator(".nba-request").count() == 0
    assert not lab.dialogs, lab.dialogs
