"""The Chrome / Perfetto export: a JSON file with one track per agent and slices nested in
time, read back and checked against the trace it came from."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage
from support.display_fixtures import build_trace

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel, say


def run() -> Any:
    script = {
        "main": [
            parallel(delegate("Research A", "researcher"), delegate("Research B", "researcher")),
            say("done"),
        ],
        "researcher": {
            "Research A": [call("write_todos", todos=[]), say("A")],
            "Research B": [delegate("Deeper", "researcher"), say("B")],
            "Deeper": [say("deep")],
        },
    }
    researcher = {"name": "researcher", "description": "R.", "system_prompt": "Research."}
    agent = create_deep_agent(
        ScriptedChatModel(script=script, latency=0.01), subagents=[researcher]
    )
    tracer = Tracer(title="chrome")
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer]})
    return tracer.trace


def check_nesting(slices: list[dict[str, Any]]) -> None:
    """Slices of one track form a tree in time: each one ends inside any slice it starts in."""
    ordered = sorted(slices, key=lambda e: (e["ts"], -e["dur"]))
    open_ends: list[int] = []
    for event in ordered:
        while open_ends and event["ts"] >= open_ends[-1] and event["dur"] > 0:
            open_ends.pop()
        end = event["ts"] + event["dur"]
        assert end >= event["ts"]
        if open_ends:
            assert end <= open_ends[-1], (event["name"], end, open_ends[-1])
        open_ends.append(end)


def test_the_export_has_one_track_per_agent_with_nested_slices(tmp_path: Path) -> None:
    trace = run()
    returned = trace.to_chrome_trace(tmp_path / "run.json")
    data = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert data == returned
    events = data["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    # one track per agent; parallel calls of one agent that overlap in time go to lanes of its
    # track (slices of a track must nest): whether they overlap is up to the threads here
    lanes = {t: n.split(" \u2016 ")[0] for t, n in names.items() if " \u2016 " in n}
    assert sorted(n for t, n in names.items() if t not in lanes) == [
        "main",
        "researcher: Deeper",
        "researcher: Research A",
        "researcher: Research B",
    ]
    assert set(lanes.values()) <= {"main", "researcher: Research B"}
    slices: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        if event["ph"] == "X":
            slices[event["tid"]].append(event)
    assert set(slices) == set(names)
    for track in slices.values():
        check_nesting(track)
    for tid, owner in lanes.items():  # a lane belongs to its agent's track
        main_tid = next(t for t, n in names.items() if n == owner)
        slices[main_tid] += slices.pop(tid)
        names.pop(tid)
    agents = {s.id: s for s in trace.walk() if s.kind in ("agent", "subagent")}
    for track in slices.values():
        # each track is one agent: its run is the outermost slice, the rest its own calls
        outer = max(track, key=lambda e: e["dur"])
        span = agents[outer["args"]["span_id"]]
        assert outer["ts"] == min(e["ts"] for e in track)
        assert {e["args"]["agent"] for e in track} == {span.name}
        own = {s.id for s in trace.own_model_spans(span)}
        models = {e["args"]["span_id"] for e in track if e["cat"] == "model"}
        assert models == own
    # every model call is a slice, with its tokens
    model_slices = [e for track in slices.values() for e in track if e["cat"] == "model"]
    assert len(model_slices) == sum(1 for s in trace.spans if s.kind == "model")
    assert sum(e["args"]["total_tokens"] for e in model_slices) == trace.total_usage().total
    # a task slice on the parent's track covers its sub-agent's slice
    main_tid = next(t for t, n in names.items() if n == "main")
    tasks = [e for e in slices[main_tid] if e["cat"] == "task"]
    assert sorted(e["args"]["task"] for e in tasks) == ["Research A", "Research B"]
    for task in tasks:
        sub_tid = next(t for t, n in names.items() if n == f"researcher: {task['args']['task']}")
        sub = max(slices[sub_tid], key=lambda e: e["dur"])
        assert task["ts"] <= sub["ts"] and sub["ts"] + sub["dur"] <= task["ts"] + task["dur"]


def test_a_running_trace_exports_its_open_steps_to_its_last_time() -> None:
    trace = build_trace("<b>x</b>", finished=False)
    data = trace.to_chrome_trace()
    json.dumps(data)  # plain JSON
    running = [
        e for e in data["traceEvents"] if e["ph"] == "X" and e["args"]["status"] == "running"
    ]
    assert running
    horizon = round(trace.duration * 1_000_000)
    assert all(e["ts"] + e["dur"] <= horizon for e in running)
    for event in data["traceEvents"]:
        if event["ph"] == "X":
            assert event["dur"] >= 0


def test_overlapping_calls_of_one_agent_take_lanes_and_never_nest_in_each_other() -> None:
    trace = build_trace()  # main's three tasks overlap in time, by construction
    events = trace.to_chrome_trace()["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    main_tids = [t for t, n in names.items() if n.startswith("main")]
    assert [names[t] for t in main_tids] == ["main", "main \u2016 2", "main \u2016 3"]
    tasks = [e for e in events if e["ph"] == "X" and e["cat"] == "task" and e["tid"] in main_tids]
    assert len({e["tid"] for e in tasks}) == 3  # one task per lane: none drawn inside another
    for tid in main_tids:
        check_nesting([e for e in events if e["ph"] == "X" and e["tid"] == tid])
