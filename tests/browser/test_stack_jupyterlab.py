"""The deep-agent stack in real JupyterLab: the main agent's plan advances in the live view's
details while the cell runs; a saved run, opened untrusted (no stylesheet, no script), shows the
plan as a checklist, its timeline ticks, and a summarization step with what it folded, every
text from the run kept as text."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain.agents.middleware import TodoListMiddleware
from langchain_core.messages import HumanMessage
from overflow import OPEN_ALL, OVERFLOW
from support.long_task import CONTEXT, LongTask, step

from nbagents import create_deep_agent, trace
from nbagents.models import ScriptedChatModel, call

pytestmark = pytest.mark.browser

HOSTILE = '<img src=x onerror="window.__nbaPwned=1">'
LIVE = ".jp-NotebookPanel:not(.lm-mod-hidden) .nba-root.nba-live"
OUTPUT = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-OutputArea-output"

PLANNING = f"""
import time
from langchain.agents.middleware import TodoListMiddleware
from nbagents import create_deep_agent
from nbagents.models import ScriptedChatModel, call, say

ITEMS = ["gather", "draft", {HOSTILE!r}]

def plan(done):
    return call("write_todos", todos=[
        {{"content": c, "status": "completed" if i < done else
          "in_progress" if i == done else "pending"}} for i, c in enumerate(ITEMS)])

def replies(agent, messages):
    time.sleep(0.8)  # slow enough to watch each step
    turn = sum(m.type == "tool" for m in messages)
    return plan(turn) if turn <= len(ITEMS) else say("Report written.")

agent = create_deep_agent(ScriptedChatModel(script={{}}, responder=replies),
                          middleware=[TodoListMiddleware()])
%load_ext nbagents
"""


def test_the_plan_advances_in_the_live_details_while_the_cell_runs(lab: Any) -> None:
    path = lab.server.add_notebook(
        "plan_live.ipynb",
        [PLANNING, "%%trace t\nout = agent.invoke({'messages': [('user', 'Write it.')]})"],
    )
    lab.open_notebook(path)
    lab.run_all(wait=False)
    row = lab.page.locator(f"{LIVE} .nba-k-agent > .nba-row").first
    row.wait_for(state="visible", timeout=60_000)
    row.click()
    pane = lab.page.locator(f"{LIVE} .nba-live-details")
    seen: list[str] = []
    for _ in range(400):
        label = pane.locator(".nba-label", has_text=re.compile(r"^Plan \(")).all_inner_texts()
        if label and label[0] not in seen:
            seen.append(label[0])
        if seen and seen[-1] == "Plan (3 of 3 done)":
            break
        lab.page.wait_for_timeout(100)
    # Each step of the plan was seen as the run went: not only the end.
    assert len(seen) >= 3 and seen[-1] == "Plan (3 of 3 done)", seen
    items = pane.locator("ul.nba-plan li").all_inner_texts()
    assert re.fullmatch(r"\u2714 gather started [\d.]+ s, done [\d.]+ s", items[0]), items
    assert items[1].startswith("\u2714 draft started")
    assert HOSTILE in items[2]  # shown as text
    lab.wait_for_idle()
    # the timeline row of the agent, brought on screen, has a tick per item finished
    timeline = lab.page.locator(f"{LIVE} .nba-tl")
    timeline.scroll_into_view_if_needed()
    ticks = timeline.locator(".nba-mark-finished")
    lab.page.wait_for_function(
        "sel => document.querySelectorAll(sel).length === 3",
        arg=f"{LIVE} .nba-tl .nba-mark-finished",
    )
    assert ticks.first.get_attribute("title") == "finished: gather"
    assert lab.page.evaluate("() => window.__nbaPwned") is None
    lab.screenshot("plan, live")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def _saved_run() -> Any:
    """The long task, planned in two steps: the second written after the first summarization."""
    plans = [
        [("gather", "in_progress"), (HOSTILE, "pending")],
        [("gather", "completed"), (HOSTILE, "in_progress")],
    ]
    replies = LongTask(worker="main")

    def planning(agent: str, messages: list[Any]) -> Any:
        summarizing = len(messages) == 1 and "<messages>" in messages[0].text
        if plans and not summarizing and replies.summaries >= 2 - len(plans):
            return call("write_todos", todos=[{"content": c, "status": s} for c, s in plans.pop(0)])
        return replies(agent, messages)

    model = ScriptedChatModel(script={}, responder=planning, profile={"max_input_tokens": CONTEXT})
    agent = create_deep_agent(model, tools=[step], middleware=[TodoListMiddleware()])
    with trace(display=False) as t:
        agent.invoke({"messages": [HumanMessage("Run the long task.")]})
    assert not t.summarizations().empty and len(t.todos()) == 2
    return t


def test_a_finished_run_displayed_trusted_shows_the_plan_and_the_summarization(lab: Any) -> None:
    """Displayed by the kernel, a trace is the interactive view: the details pane shows the
    checklist for the agent and the fold for the summarization step."""
    t = _saved_run()
    first = t.summarizations().iloc[0]
    t.save(lab.server.root_dir / "stack.json")
    path = lab.server.add_notebook(
        "stack_trusted.ipynb", ["from nbagents import Trace\nTrace.load('stack.json')"]
    )
    lab.open_notebook(path)
    lab.run_all()
    view = lab.page.locator(LIVE)
    view.locator(".nba-k-agent > .nba-row").first.click()
    pane = view.locator(".nba-live-details")
    items = pane.locator("ul.nba-plan li").all_inner_texts()
    assert len(items) == 2 and items[0].startswith("\u2714 gather"), items
    assert HOSTILE in items[1] and pane.locator("img").count() == 0
    view.locator(".nba-row", has_text="summarization").first.click()
    text = pane.inner_text()
    assert re.search(rf"Messages folded\s+{first['messages_folded']}\b", text), text
    assert first["history_path"] in text and "Summary 1: steps up to" in text
    timeline = view.locator(".nba-tl")
    timeline.scroll_into_view_if_needed()
    assert timeline.locator(".nba-mark").count() >= 3
    assert lab.page.evaluate("() => window.__nbaPwned") is None
    # With the details pane open beside the tree (1,400 px) or below it (1,000 px), the tree
    # cuts previews, not names.
    for width in (1400, 1000):
        lab.page.set_viewport_size({"width": width, "height": 900})
        cut = view.locator(".nba-live-tree .nba-line > .nba-name").evaluate_all(
            "names => names.filter(n => n.scrollWidth > n.clientWidth + 1).map(n => n.textContent)"
        )
        assert cut == [], (width, cut)
    lab.screenshot("plan and summarization, trusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console


def test_a_saved_run_shows_the_plan_and_the_summarization_untrusted(lab: Any) -> None:
    t = _saved_run()
    first = t.summarizations().iloc[0]
    lab.server.add_saved_output("stack_untrusted.ipynb", t.to_html(), repr(t))
    lab.open_notebook("stack_untrusted.ipynb")
    out = lab.page.locator(OUTPUT).first
    root = out.locator(".nba-trace")
    root.wait_for(state="visible")
    assert out.locator("style").count() == 0  # the sanitizer removed the stylesheet
    root.evaluate(OPEN_ALL)

    plan = root.locator("ul.nba-plan").first
    items = plan.locator("li").all_inner_texts()
    assert len(items) == 2 and items[0].startswith("\u2714 gather")
    assert HOSTILE in items[1] and plan.locator("img").count() == 0
    ticks = root.locator(".nba-tl-marks .nba-mark")
    assert ticks.count() >= 3 and ticks.first.is_visible()

    step_row = root.locator("li", has_text="summarization").first
    text = step_row.inner_text()
    assert f"{first['messages_folded']} messages folded" in text
    assert first["history_path"] in text and "Summary 1: steps up to" in text
    spills = root.evaluate(OVERFLOW)
    assert not spills, spills
    assert lab.page.evaluate("() => window.__nbaPwned") is None
    lab.screenshot("plan and summarization, untrusted")
    assert not [c for c in lab.console if c.startswith("pageerror")], lab.console
