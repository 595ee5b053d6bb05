"""Pauses shown at their steps and answered from the live view (the Python half; the browser
half is in tests/browser/test_display_jupyterlab_approvals.py).

The widget sends ``{"type": "decide", "decisions": [...]}``; these tests send the same message
to ``LiveView._on_msg`` and check what a user relies on: the tool runs with the edited
arguments, the resumed run continues the same tree in the same view, and a decision that
cannot be applied says why in the view without resuming anything.
"""

from __future__ import annotations

import gc
import itertools
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from support.view_mirror import saved_view

import nbagents
from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.approvals import AnswerError, pending_approvals, resumable_agent
from nbagents.display._viewmodel import build_view
from nbagents.display.live import LiveView
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import recording

deployed: list[str] = []
_threads = itertools.count()
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@tool
def deploy(target: str, version: str = "1.0") -> str:
    """Deploy ``version`` of the service to ``target``."""
    deployed.append(f"{target}@{version}")
    return f"deployed {version} to {target}"


OPS = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}
TWO = {
    "main": [parallel(delegate("Ship A.", "ops"), delegate("Ship B.", "ops")), "done"],
    "ops": {
        "Ship A.": [call("deploy", target="a"), say("A handled.")],
        "Ship B.": [call("deploy", target="b"), say("B handled.")],
    },
}


def paused_run(
    script: dict[str, Any], subagents: list[dict[str, Any]] | None = None
) -> tuple[Any, dict[str, Any], Tracer, LiveView]:
    """Run until the pause, recorded and followed by a (finished) live view: a cell that ended."""
    deployed.clear()
    agent = create_deep_agent(
        ScriptedChatModel(script=script),
        [deploy],
        subagents=subagents or [OPS],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"view-approvals-{next(_threads)}"}}
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        agent.invoke({"messages": [("user", "release")]}, config)
    view.finish()
    return agent, config, tracer, view


def requests_by_title(view: LiveView) -> dict[str, dict[str, Any]]:
    return {
        p["title"]: {**p, "node": n["name"]}
        for n in build_view(view.trace)["nodes"]
        for p in n.get("pending", [])
    }


def send(view: LiveView, *decisions: dict[str, Any]) -> None:
    """What the widget sends when the user presses Submit."""
    view._on_msg(view.widget, {"type": "decide", "decisions": list(decisions)}, [])


def test_each_pending_request_is_shown_at_the_subagent_that_waits() -> None:
    _, _, tracer, view = paused_run(TWO)
    requests = requests_by_title(view)
    assert set(requests) == {"deploy(target='a')", "deploy(target='b')"}
    for request in requests.values():
        assert request["node"] == "ops"
        assert request["allowed"] == ["approve", "edit", "reject", "respond"]
    assert view.widget.answerable
    assert build_view(tracer.trace)["waiting"]
    html = tracer.trace.to_html()
    assert "waits for a decision: deploy(target=&#x27;a&#x27;)" in html
    assert "approve / edit / reject / respond" in html
    assert "GraphInterrupt" not in html  # a pause is not shown as an error


def test_approve_one_and_edit_another_resumes_the_same_tree_in_the_same_view() -> None:
    agent, config, tracer, view = paused_run(TWO)
    requests = requests_by_title(view)
    updates = view.updates
    send(
        view,
        {"key": requests["deploy(target='a')"]["key"], "decision": "approve"},
        {
            "key": requests["deploy(target='b')"]["key"],
            "decision": "edit",
            "args_json": '{"target": "b", "version": "2"}',
        },
    )
    assert view.widget.notice == ""
    assert sorted(deployed) == ["a@1.0", "b@2"]
    assert view.last_result["messages"][-1].text == "done"
    trace = tracer.trace
    (root,) = trace.visible_roots()  # one tree across the pause
    assert root.status == "ok" and len(root.attributes["paused"]) == 1
    assert trace.finished and trace.status == "ok"
    assert requests_by_title(view) == {}
    assert not build_view(trace)["waiting"]
    assert view.updates > updates and not view.widget.answerable
    tools = sorted(str(s.inputs) for s in trace.spans if s.kind == "tool")
    assert any("'version': '2'" in t for t in tools)
    assert agent.get_state(config).next == ()


@pytest.mark.parametrize(
    ("decision", "problem"),
    [
        ({"decision": "edit", "args_json": "{target: b}"}, "not valid JSON"),
        ({"decision": "edit", "args_json": '["b"]'}, "must be a JSON object"),
        ({"decision": "respond", "message": "  "}, "answer text is empty"),
        ({"decision": "launch"}, "No decision"),
    ],
)
def test_a_decision_that_cannot_be_applied_is_explained_and_nothing_resumes(
    decision: dict[str, Any], problem: str
) -> None:
    _, _, tracer, view = paused_run(TWO)
    requests = requests_by_title(view)
    send(
        view,
        {"key": requests["deploy(target='a')"]["key"], "decision": "approve"},
        {"key": requests["deploy(target='b')"]["key"], **decision},
    )
    assert problem in view.widget.notice
    assert deployed == []
    assert build_view(tracer.trace)["waiting"] and view.widget.answerable


def test_every_request_needs_a_decision_and_stale_ones_are_refused() -> None:
    _, _, _, view = paused_run(TWO)
    requests = requests_by_title(view)
    send(view, {"key": requests["deploy(target='a')"]["key"], "decision": "approve"})
    assert "have no decision yet" in view.widget.notice
    send(view, {"key": "no-such-interrupt:0", "decision": "approve"})
    assert "no longer waits for" in view.widget.notice
    assert deployed == []


def test_reject_and_respond_reach_the_subagents() -> None:
    _, _, _, view = paused_run(TWO)
    requests = requests_by_title(view)
    send(
        view,
        {"key": requests["deploy(target='a')"]["key"], "decision": "reject", "message": "No."},
        {
            "key": requests["deploy(target='b')"]["key"],
            "decision": "respond",
            "message": "Done by hand.",
        },
    )
    assert view.widget.notice == ""
    assert deployed == []
    assert view.last_result["messages"][-1].text == "done"


def test_a_nested_pause_is_shown_at_the_inner_subagent_and_answered() -> None:
    lead = {"name": "lead", "description": "Leads releases.", "system_prompt": "Lead."}
    script = {
        "main": [delegate("Release.", "lead"), "done"],
        "lead": [delegate("Ship it.", "ops"), say("Release led.")],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    _, _, tracer, view = paused_run(script, [lead, OPS])
    (request,) = requests_by_title(view).values()
    assert request["node"] == "ops"
    send(view, {"key": request["key"], "decision": "edit", "args_json": '{"target": "canary"}'})
    assert deployed == ["canary@1.0"]
    (root,) = tracer.trace.visible_roots()
    assert root.status == "ok"


def test_a_pause_that_comes_again_is_shown_again() -> None:
    script = {"main": [call("deploy", target="a"), call("deploy", target="b"), "done"]}
    _, _, tracer, view = paused_run(script)
    (first,) = requests_by_title(view).values()
    send(view, {"key": first["key"], "decision": "approve"})
    (second,) = requests_by_title(view).values()
    assert second["title"] == "deploy(target='b')" and second["node"] == "main"
    assert view.widget.answerable
    send(view, {"key": second["key"], "decision": "reject"})
    assert deployed == ["a@1.0"]
    assert tracer.trace.status == "ok"


def test_an_agent_not_built_by_create_deep_agent_is_answered_in_code() -> None:
    deployed.clear()
    agent = create_agent(
        ScriptedChatModel(script={"main": [call("deploy", target="x"), "ok"]}),
        [deploy],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"deploy": True})],
        checkpointer=InMemorySaver(),
        name="main",
    )
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "plain"}})
    view.finish()
    (request,) = requests_by_title(view).values()
    assert not view.widget.answerable
    with pytest.raises(AnswerError, match="pending_approvals"):
        view.answer([{"key": request["key"], "decision": "approve"}])
    assert deployed == []


def test_a_paused_run_keeps_its_widget_output_until_the_resumed_run_ends() -> None:
    _, _, _, view = paused_run(TWO)
    assert WIDGET_VIEW in view._repr_mimebundle_() and view.widget.comm is not None
    requests = requests_by_title(view)
    send(view, *({"key": r["key"], "decision": "approve"} for r in requests.values()))
    bundle = view._repr_mimebundle_()
    assert set(bundle) == {"text/html", "text/plain"}
    assert saved_view(bundle["text/html"])["status"] == "ok"
    assert view.widget.comm is None


def test_the_view_keeps_its_paused_agent_alive() -> None:
    agent, _, _, view = paused_run(TWO)
    del agent
    gc.collect()
    assert resumable_agent(view.trace) is not None  # the output can still resume it
    requests = requests_by_title(view)
    send(view, *({"key": r["key"], "decision": "approve"} for r in requests.values()))
    assert sorted(deployed) == ["a@1.0", "b@1.0"]


def test_an_agent_no_view_holds_is_forgotten_when_deleted() -> None:
    agent = create_deep_agent(
        ScriptedChatModel(script={"main": [call("deploy", target="x"), "done"]}),
        [deploy],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    with recording() as tracer:
        agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "gone"}})
    assert resumable_agent(tracer.trace) is agent
    del agent
    gc.collect()
    assert resumable_agent(tracer.trace) is None


def test_resume_in_code_continues_the_same_tree_in_the_view() -> None:
    agent, config, tracer, view = paused_run(TWO)
    requests = pending_approvals(agent.get_state(config))
    for request in requests:
        request.approve() if request.args["target"] == "a" else request.reject("Not today.")
    result = nbagents.resume(tracer.trace, requests)
    assert result["messages"][-1].text == "done" and deployed == ["a@1.0"]
    (root,) = tracer.trace.visible_roots()
    assert root.status == "ok" and tracer.trace.finished
    assert view.last_result is result and requests_by_title(view) == {}


def test_resume_in_code_without_a_view_continues_the_same_tree() -> None:
    deployed.clear()
    agent = create_deep_agent(
        ScriptedChatModel(script=TWO),
        [deploy],
        subagents=[OPS],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": f"view-approvals-{next(_threads)}"}}
    with nbagents.trace(display=False) as t:
        paused = agent.invoke({"messages": [("user", "release")]}, config)
    requests = pending_approvals(paused)
    requests.approve_all()
    result = nbagents.resume(t, requests)
    assert sorted(deployed) == ["a@1.0", "b@1.0"] and result["messages"][-1].text == "done"
    (root,) = t.visible_roots()
    assert root.status == "ok" and len(root.attributes["paused"]) == 1
    with pytest.raises(AnswerError, match="not waiting"):
        nbagents.resume(t, requests)


async def test_waiting_in_the_cell_needs_a_notebook_view_and_returns_at_once_when_not_paused() -> (
    None
):
    _, _, tracer, _ = paused_run(TWO)
    with pytest.raises(RuntimeError, match="needs the live view of this trace in a notebook"):
        await nbagents.wait_for_decisions(tracer.trace)
    with nbagents.trace(display=False) as done:
        create_deep_agent(ScriptedChatModel(script={"main": ["hi"]})).invoke(
            {"messages": [("user", "hello")]}
        )
    assert await nbagents.wait_for_decisions(done) is None


def test_hostile_arguments_in_a_request_are_escaped_in_the_snapshot() -> None:
    payload = '<img src=x onerror="alert(1)">'
    script = {"main": [call("deploy", target=payload), "done"]}
    _, _, tracer, view = paused_run(script)
    (request,) = requests_by_title(view).values()
    assert payload in request["title"]  # the record holds the text; each renderer escapes it
    html = tracer.trace.to_html()
    assert payload not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


def test_resume_answers_the_agent_that_paused_when_another_ran_on_its_thread_id() -> None:
    deployed.clear()
    config = {"configurable": {"thread_id": "one-id-for-every-agent"}}
    runs = []
    for target in ("first", "second"):
        agent = create_deep_agent(
            ScriptedChatModel(script={"main": [call("deploy", target=target), "done"]}),
            [deploy],
            interrupt_on={"deploy": True},
            checkpointer=InMemorySaver(),
        )
        with nbagents.trace(display=False) as t:
            paused = agent.invoke({"messages": [("user", "release")]}, config)
        runs.append((agent, t, pending_approvals(paused)))
    (_, t_first, asked_first), (second, t_second, asked_second) = runs
    asked_first.approve_all()
    nbagents.resume(t_first, asked_first)
    assert deployed == ["first@1.0"]
    assert pending_approvals(second.get_state(config))  # the other agent still waits
    asked_second.approve_all()
    nbagents.resume(t_second, asked_second)
    assert deployed == ["first@1.0", "second@1.0"]
    assert [t.visible_roots()[0].status for t in (t_first, t_second)] == ["ok", "ok"]
