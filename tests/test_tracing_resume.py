"""One trace across a pause: resuming on the same thread continues the tree where it stopped.

Before, a resumed run was a second root and every paused sub-agent showed as spawned twice.
"""

from __future__ import annotations

import itertools
from typing import Any

from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from nbagents import ScriptedChatModel, Trace, create_deep_agent, pending_approvals
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import recording

_threads = itertools.count()


@tool
def deploy(target: str) -> str:
    """Deploy the service to ``target``."""
    return f"deployed to {target}"


OPS = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}
LEAD = {"name": "lead", "description": "Leads releases.", "system_prompt": "Lead."}


def agent_for(script: dict[str, Any]) -> Any:
    return create_deep_agent(
        ScriptedChatModel(script=script),
        [deploy],
        subagents=[LEAD, OPS],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )


async def pause_and_resume(run_agent: Any, script: dict[str, Any]) -> tuple[Trace, Trace]:
    """The trace while paused (a copy) and the whole trace after the resume."""
    agent = agent_for(script)
    config = {"configurable": {"thread_id": f"resume-{next(_threads)}"}}
    with recording() as tracer:
        paused = await run_agent(agent, {"messages": [("user", "release")]}, config)
        while_paused = Trace.from_json(tracer.trace.to_json())
        requests = pending_approvals(paused)
        assert requests
        requests.approve_all()
        done = await run_agent(agent, requests.resume(), config)
        assert done["messages"][-1].text == "done"
    return while_paused, tracer.trace


def visible(trace: Trace) -> list[tuple[int, str, str, str]]:
    return [(s.depth, s.kind, s.name, s.status) for s in trace.walk() if not s.hidden]


async def test_parallel_paused_subagents_continue_in_one_tree(run_agent: Any) -> None:
    script = {
        "main": [parallel(delegate("Ship A.", "ops"), delegate("Ship B.", "ops")), "done"],
        "ops": {
            "Ship A.": [call("deploy", target="a"), say("A shipped.")],
            "Ship B.": [call("deploy", target="b"), say("B shipped.")],
        },
    }
    while_paused, trace = await pause_and_resume(run_agent, script)

    assert while_paused.status == "interrupted"
    assert sorted(s.status for s in while_paused.spans if s.kind == "subagent") == [
        "interrupted",
        "interrupted",
    ]
    # After the resume: one root, the same two spawns, every step finished.
    (root,) = trace.roots
    assert root.id == while_paused.roots[0].id
    assert trace.status == "ok"
    assert sorted(r.description for r in trace.subagents) == ["Ship A.", "Ship B."]
    assert all(r.status == "ok" for r in trace.subagents)
    assert {s.status for s in trace.spans if not s.hidden} == {"ok"}
    # Each sub-agent holds both halves: its first model call before the pause, the approved
    # deploy and its last model call after it.
    for record in trace.subagents:
        sub = trace.get(record.span_id)
        (pause,) = sub.attributes["paused"]
        kids = [s for s in trace.descendants(sub) if not s.hidden]
        before = [s.kind for s in kids if s.start < pause[0]]
        after = [s.kind for s in kids if s.start >= pause[1]]
        assert before == ["model"]
        assert after == ["tool", "model"]
        assert record.result is not None and record.result.endswith("shipped.")
    # The task spans kept their ids and the tool calls they answer.
    tasks_before = {
        s.attributes["tool_call_id"]: s.id for s in while_paused.spans if s.kind == "task"
    }
    tasks_after = {s.attributes["tool_call_id"]: s.id for s in trace.spans if s.kind == "task"}
    assert tasks_before == tasks_after


async def test_a_nested_pause_continues_every_level(run_agent: Any) -> None:
    script = {
        "main": [delegate("Release.", "lead"), "done"],
        "lead": [delegate("Ship it.", "ops"), say("Release led.")],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    while_paused, trace = await pause_and_resume(run_agent, script)
    waiting = [(d, k, n) for d, k, n, status in visible(while_paused) if status == "interrupted"]
    assert waiting == [
        (0, "agent", "main"),
        (0, "task", "task"),
        (1, "subagent", "lead"),
        (1, "task", "task"),
        (2, "subagent", "ops"),
    ]
    assert [(r.type, r.depth) for r in trace.subagents] == [("lead", 1), ("ops", 2)]
    continued = [(s.kind, s.name) for s in trace.walk() if s.attributes.get("paused")]
    assert continued == [(k, n) for _, k, n in waiting]
    assert trace.status == "ok"


async def test_new_input_on_a_paused_thread_is_a_new_run(run_agent: Any) -> None:
    script = {
        "main": [delegate("Ship it.", "ops"), "done", "second answer"],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    agent = agent_for(script)
    config = {"configurable": {"thread_id": f"resume-{next(_threads)}"}}
    with recording() as tracer:
        await run_agent(agent, {"messages": [("user", "release")]}, config)
        await run_agent(agent, {"messages": [("user", "never mind")]}, config)
    roots = tracer.trace.roots
    assert len(roots) == 2
    assert roots[0].status == "interrupted"
    assert "paused" not in roots[0].attributes


def test_a_continued_trace_survives_its_file(tmp_path: Any) -> None:
    import asyncio

    async def sync_run(agent: Any, payload: Any, config: Any = None) -> Any:
        return agent.invoke(payload, config)

    script = {
        "main": [delegate("Ship it.", "ops"), "done"],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    _, trace = asyncio.run(pause_and_resume(sync_run, script))
    trace.save(tmp_path / "run.json")
    loaded = Trace.load(tmp_path / "run.json")
    assert visible(loaded) == visible(trace)
    assert [s.attributes.get("paused") for s in loaded.walk()] == [
        s.attributes.get("paused") for s in trace.walk()
    ]
    assert "1 sub-agent spawn" in repr(loaded)


async def test_the_view_says_the_run_waits_for_a_decision_until_it_is_resumed(
    run_agent: Any,
) -> None:
    from nbagents.display._viewmodel import build_view

    script = {
        "main": [delegate("Ship it.", "ops"), "done"],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    while_paused, trace = await pause_and_resume(run_agent, script)
    assert build_view(while_paused)["waiting"] is True
    assert "waiting for a decision" in while_paused.to_html()
    assert build_view(trace)["waiting"] is False
    assert "waiting for a decision" not in trace.to_html()
    cut_off = Trace.from_json(while_paused.to_json())
    cut_off.roots[0].error = "still running when the trace ended"
    assert build_view(cut_off)["waiting"] is False


async def test_two_agents_paused_on_one_thread_id_each_continue_their_own_tree(
    run_agent: Any,
) -> None:
    # Notebooks reuse {"thread_id": "1"} for every agent, and scripted agents repeat their tool
    # call ids: neither may join one agent's resumption to the other's paused run.
    agents = {
        name: agent_for(
            {
                "main": [delegate(f"Ship {name}.", "ops"), "done"],
                "ops": [call("deploy", target=name), say(f"{name} shipped.")],
            }
        )
        for name in ("a", "b")
    }
    config = {"configurable": {"thread_id": "shared-thread"}}
    with recording() as tracer:
        paused = {
            name: await run_agent(agent, {"messages": [("user", f"release {name}")]}, config)
            for name, agent in agents.items()
        }
        while_paused = [root.id for root in tracer.trace.roots]
        for name in ("b", "a"):  # the later pause answered first
            requests = pending_approvals(paused[name])
            requests.approve_all()
            await run_agent(agents[name], requests.resume(), config)
    trace = tracer.trace

    assert [root.id for root in trace.roots] == while_paused
    assert trace.status == "ok"
    for root, name in zip(trace.roots, ("a", "b"), strict=True):
        assert f"release {name}" in str(root.inputs)
        assert len(root.attributes["paused"]) == 1
        inside = list(trace.descendants(root))
        deploys = [s for s in inside if s.kind == "tool" and s.name == "deploy"]
        assert [s.outputs["content"] for s in deploys] == [f"deployed to {name}"]
        assert [s.kind for s in inside if s.attributes.get("paused")] == ["task", "subagent"]


async def test_two_graphs_of_their_own_paused_on_one_thread_id_continue_their_own_roots(
    run_agent: Any,
) -> None:
    # Agents not built by create_deep_agent carry no key of their own: their names tell them
    # apart.
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    agents = {
        name: create_agent(
            ScriptedChatModel(script={name: [call("deploy", target=name), "done"]}),
            tools=[deploy],
            middleware=[HumanInTheLoopMiddleware({"deploy": True})],
            checkpointer=InMemorySaver(),
            name=name,
        )
        for name in ("first", "second")
    }
    config = {"configurable": {"thread_id": "shared-by-plain-graphs"}}
    with recording() as tracer:
        paused = {
            name: await run_agent(agent, {"messages": [("user", "go")]}, config)
            for name, agent in agents.items()
        }
        for name in ("second", "first"):
            requests = pending_approvals(paused[name])
            requests.approve_all()
            await run_agent(agents[name], requests.resume(), config)
    assert [(r.name, r.status) for r in tracer.trace.roots] == [("first", "ok"), ("second", "ok")]
    for root in tracer.trace.roots:
        (deployed,) = [s for s in tracer.trace.descendants(root) if s.name == "deploy"]
        assert deployed.outputs["content"] == f"deployed to {root.name}"
