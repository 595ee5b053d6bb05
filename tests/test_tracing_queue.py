"""The tracer takes events down and the trace applies them when read: what a reader relies on."""

from __future__ import annotations

import threading
import time
import uuid
from typing import Any

from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing._tracer import APPLY_AT


def test_spans_keep_the_time_their_events_happened_not_when_read() -> None:
    @tool
    def wait(key: str) -> str:
        """Take a while."""
        time.sleep(0.05)
        return "waited"

    model = ScriptedChatModel(script={"main": [call("wait", key="k"), say("ok")]})
    tracer = Tracer()
    before = time.perf_counter()
    create_deep_agent(model, [wait]).invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    returned = time.perf_counter() - before
    time.sleep(0.1)  # read well after the run ended
    spans = tracer.trace.spans
    root = tracer.trace.roots[0]
    # The trace's clock starts at the root's start, which is after `before`.
    assert root.start == 0.0
    assert all(s.end is not None and s.end <= returned for s in spans)
    waited = next(s for s in spans if s.name == "wait")
    assert waited.duration is not None and waited.duration >= 0.05


def test_a_reader_during_the_run_sees_what_has_happened_so_far() -> None:
    seen: dict[str, Any] = {}
    tracer = Tracer()

    @tool
    def peek(key: str) -> str:
        """Look at the trace from inside the run."""
        spans = tracer.trace.spans
        running = [s for s in spans if s.status == "running"]
        seen["kinds"] = sorted({s.kind for s in running})
        seen["tool"] = [s.name for s in running if s.kind == "tool"]
        return "looked"

    model = ScriptedChatModel(
        script={
            "main": [delegate("job", "worker"), say("ok")],
            "worker": [call("peek", key="k"), "done"],
        }
    )
    worker = {"name": "worker", "description": "Peeks.", "system_prompt": "Peek."}
    create_deep_agent(model, subagents=[worker], tools=[peek]).invoke(
        {"messages": [("user", "go")]}, {"callbacks": [tracer]}
    )
    # Inside the tool: the root agent, the task call, the sub-agent and the tool itself run.
    assert {"agent", "task", "subagent", "tool"} <= set(seen["kinds"])
    assert seen["tool"] == ["peek"]
    assert all(s.status == "ok" for s in tracer.trace.spans)


def test_a_model_reply_is_recorded_as_the_model_gave_it() -> None:
    # create_agent names the reply after its agent once the call has ended; the trace, read
    # after that, still shows the reply the model made.
    model = ScriptedChatModel(script={"main": ["hello"]})
    tracer = Tracer()
    result = create_deep_agent(model).invoke(
        {"messages": [("user", "hi")]}, {"callbacks": [tracer]}
    )
    assert result["messages"][-1].name == "main"
    reply = next(s for s in tracer.trace.spans if s.kind == "model").outputs
    assert reply == {"type": "ai", "content": "hello"}


def test_events_nobody_reads_are_applied_before_the_queue_grows_long() -> None:
    tracer = Tracer()
    for _ in range(APPLY_AT):  # two events each
        run_id = uuid.uuid4()
        tracer.on_chain_start(None, {"x": 1}, run_id=run_id, name="step")
        tracer.on_chain_end({"y": 2}, run_id=run_id)
    assert len(tracer.trace._queued) < APPLY_AT
    assert len(tracer.trace) == APPLY_AT
    assert all(s.status == "ok" for s in tracer.trace.spans)


def test_parallel_sub_agents_read_while_they_run_give_a_whole_trace() -> None:
    n = 40
    model = ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(f"job {i}", "worker") for i in range(n))), say("done")],
            "worker": [call("lookup", key="k"), say("found")],
        }
    )

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    worker = {"name": "worker", "description": "Looks up.", "system_prompt": "Look up."}
    agent = create_deep_agent(model, [lookup], subagents=[worker])
    tracer = Tracer()
    stop = threading.Event()
    reads: list[int] = []

    def reader() -> None:
        while not stop.is_set():
            reads.append(len(tracer.trace))
            tracer.trace.walk()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    finally:
        stop.set()
        thread.join()
    spans = tracer.trace.spans
    assert reads == sorted(reads)  # a reader never sees the trace shrink
    assert len([s for s in spans if s.kind == "subagent"]) == n
    assert len([s for s in spans if s.kind == "model"]) == 2 * n + 2
    assert all(s.status == "ok" and s.end is not None for s in spans)
    assert len({s.id for s in spans}) == len(spans)
