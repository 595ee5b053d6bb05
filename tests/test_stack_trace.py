"""The deep-agent stack in the trace: each agent's plan with its items' transitions, a
summarization as a step of its own, the memory files an agent loaded; in the DataFrames, the
views and the OpenTelemetry export, on the embedded scripted model."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from langchain.agents.middleware import TodoListMiddleware
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from support.long_task import LongTask, long_task_model, step

from nbagents import SubAgent, Trace, create_deep_agent, trace
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.export import to_otel_spans
from nbagents.models import ScriptedChatModel, Turn, call, delegate, say

HOSTILE = "<img src=x onerror=alert(1)> check the <b>sources</b>"


def _todos(*items: tuple[str, str]) -> Turn:
    return call("write_todos", todos=[{"content": c, "status": s} for c, s in items])


PLAN_STEPS = [
    _todos(("gather", "in_progress"), ("draft", "pending"), (HOSTILE, "pending")),
    _todos(("gather", "completed"), ("draft", "in_progress"), (HOSTILE, "pending")),
    _todos(("gather", "completed"), ("draft", "completed"), (HOSTILE, "in_progress")),
    # the agent reopens "draft" and drops nothing
    _todos(("gather", "completed"), ("draft", "in_progress"), (HOSTILE, "completed")),
]


def _planned_run() -> Trace:
    researcher: SubAgent = {
        "name": "researcher",
        "description": "Looks things up.",
        "system_prompt": "You research.",
        "middleware": [TodoListMiddleware()],
    }
    model = ScriptedChatModel(
        script={
            "main": [*PLAN_STEPS, delegate("Research it.", "researcher"), say("All done.")],
            "researcher": [_todos(("search", "in_progress")), say("Found it.")],
        }
    )
    agent = create_deep_agent(model, subagents=[researcher], middleware=[TodoListMiddleware()])
    with trace(display=False) as t:
        agent.invoke({"messages": [HumanMessage("Write the report.")]})
    return t


def test_each_agent_keeps_its_own_plan_with_each_items_transitions() -> None:
    t = _planned_run()
    todos = t.todos()

    main = todos[todos["agent"] == "main"]
    assert list(main["content"]) == ["gather", "draft", HOSTILE]
    assert list(main["status"]) == ["completed", "in_progress", "completed"]
    writes = [s for s in t.walk() if s.name == "write_todos" and s.agent == "main"]
    assert len(writes) == len(PLAN_STEPS)
    ends = [s.end for s in writes]
    gather, draft, hostile = (row for _, row in main.iterrows())
    # Every transition is stamped with the end of the write_todos call that made it.
    assert gather["added"] == gather["started"] == ends[0] and gather["finished"] == ends[1]
    assert draft["added"] == ends[0] and draft["started"] == ends[1]
    assert pd_isnull(draft["finished"])  # finished at ends[2], then reopened
    assert hostile["started"] == ends[2] and hostile["finished"] == ends[3]

    researcher = todos[todos["agent"] == "researcher"]
    assert list(researcher[["content", "status"]].itertuples(index=False)) == [
        ("search", "in_progress")
    ]
    assert set(researcher["span_id"]) == {next(iter(t.subagents)).span_id}


def pd_isnull(value: Any) -> bool:
    return value is None or value != value


def test_the_plan_is_a_checklist_in_the_agents_details_escaped_in_the_snapshot() -> None:
    t = _planned_run()
    main = next(n for n in build_view(t)["nodes"] if n["kind"] == "agent")
    (plan,) = (f for f in main["details"] if f["label"].startswith("Plan"))
    assert plan["label"] == "Plan (2 of 3 done)"
    assert plan["type"] == "checklist"
    assert [(i["mark"], i["text"]) for i in plan["value"]] == [
        ("\u2714", "gather"),
        ("\u25b6", "draft"),
        ("\u2714", HOSTILE),
    ]
    html = t.to_html()
    assert '<li class="nba-plan-in_progress"><span class="nba-plan-mark">' in html
    assert HOSTILE not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_plan_survives_the_trace_file() -> None:
    t = _planned_run()
    again = Trace.from_json(t.to_json())
    assert again.todos().equals(t.todos())


def test_the_live_view_sees_each_new_plan() -> None:
    """The agent's span is open while it plans: its details change at each write_todos."""

    seen: list[str] = []
    model = ScriptedChatModel(script={"main": [*PLAN_STEPS, say("Done.")]})
    agent = create_deep_agent(model, middleware=[TodoListMiddleware()])
    with trace(display=False) as t:
        builder = ViewBuilder(t)

        def look(*_: Any) -> None:
            builder.update()
            node = next(n for n in builder.view()["nodes"] if n["kind"] == "agent")
            labels = [f["label"] for f in node["details"] if f["label"].startswith("Plan")]
            if labels and labels[-1] not in seen:
                seen.append(labels[-1])

        unsubscribe = t.subscribe(look)
        agent.invoke({"messages": [HumanMessage("Plan it.")]})
        unsubscribe()
    look()
    assert seen == [
        "Plan (0 of 3 done)",
        "Plan (1 of 3 done)",
        "Plan (2 of 3 done)",
    ]


# -- summarization ------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_summarization_is_a_step_with_what_it_folded(mode: str) -> None:
    replies = LongTask(worker="main")
    agent = create_deep_agent(long_task_model(replies), tools=[step])
    inputs = {"messages": [HumanMessage("Run the long task.")]}
    with trace(display=False) as t:
        result = agent.invoke(inputs) if mode == "invoke" else asyncio.run(agent.ainvoke(inputs))

    steps = [s for s in t.walk() if s.attributes.get("step") == "summarization"]
    assert len(steps) == replies.summaries >= 2
    for s in steps:
        assert not s.hidden and s.kind == "chain" and s.name == "summarization"
        # the summarizer's own model call runs inside the step
        assert [c.kind for c in t.descendants(s) if not c.hidden] == ["model"]
    frame = t.summarizations()
    assert len(frame) == len(steps)
    assert (frame["tokens_after"] < frame["tokens_before"]).all()
    assert (frame["messages_folded"] > 0).all()
    assert frame["summary"].str.contains(r"Summary \d+: steps up to \d+").all()
    (path,) = set(frame["history_path"])
    saved = result["files"][path]["content"]
    text = saved if isinstance(saved, str) else "\n".join(saved)
    assert text.count("messages summarized at") == len(steps)


def test_no_summarization_step_when_the_conversation_stays_short() -> None:
    agent = create_deep_agent(ScriptedChatModel(script={"main": [say("Hi.")]}))
    with trace(display=False) as t:
        agent.invoke({"messages": [HumanMessage("Hello")]})
    assert t.summarizations().empty
    assert not [s for s in t.walk() if s.kind == "chain" and not s.hidden]


def test_no_step_when_the_prompt_alone_passes_the_threshold() -> None:
    """Over the threshold with nothing to fold (one message; the prompt and tools fill the
    context): the run goes on with no empty summarization step."""
    model = ScriptedChatModel(script={"main": [say("Hi.")]}, profile={"max_input_tokens": 100})
    with trace(display=False) as t:
        create_deep_agent(model).invoke({"messages": [HumanMessage("Hello")]})
    assert t.status == "ok" and t.summarizations().empty


def test_the_summarization_step_in_the_views_and_the_export() -> None:
    replies = LongTask(worker="main")
    agent = create_deep_agent(long_task_model(replies), tools=[step])
    with trace(display=False) as t:
        agent.invoke({"messages": [HumanMessage("Run the long task.")]})
    first = t.summarizations().iloc[0]

    node = next(n for n in build_view(t)["nodes"] if n["name"] == "summarization")
    assert node["kind_label"] == "step"
    assert re.fullmatch(r"\d+ messages folded, [\d,]+ → [\d,]+ tokens", node["preview"])
    fields = {f["label"]: f["value"] for f in node["details"]}
    rows = dict(fields["Summarization"])
    assert rows["Messages folded"] == str(first["messages_folded"])
    assert fields["History saved to"] == first["history_path"]
    assert fields["Summary"] == first["summary"]

    exported = {s.attributes["nbagents.span_id"]: s for s in to_otel_spans(t)}  # type: ignore[index]
    attrs = dict(exported[first["span_id"]].attributes or {})
    assert attrs["nbagents.summarization.messages_folded"] == first["messages_folded"]
    assert attrs["nbagents.summarization.tokens_before"] == first["tokens_before"]
    assert attrs["nbagents.summarization.tokens_after"] == first["tokens_after"]
    assert attrs["nbagents.summarization.history_path"] == first["history_path"]


# -- memory ---------------------------------------------------------------------------------


def test_the_memory_files_an_agent_loaded_are_on_its_span_and_not_on_subagents() -> None:
    def replies(agent: str, messages: list[BaseMessage]) -> Turn:
        if agent == "main" and not any(isinstance(m, ToolMessage) for m in messages):
            return delegate("Look something up.")
        return say("Done.")

    memory = "The user prefers short answers.\n"
    agent = create_deep_agent(
        ScriptedChatModel(script={}, responder=replies), memory=["/AGENTS.md", "/missing.md"]
    )
    with trace(display=False) as t:
        agent.invoke(
            {
                "messages": [HumanMessage("Hello")],
                "files": {"/AGENTS.md": {"content": memory, "encoding": "utf-8"}},
            }
        )

    frame = t.memory()
    assert list(frame[["agent", "path", "chars"]].itertuples(index=False)) == [
        ("main", "/AGENTS.md", len(memory))
    ]
    main = next(n for n in build_view(t)["nodes"] if n["kind"] == "agent")
    fields = {f["label"]: f["value"] for f in main["details"]}
    assert fields["Memory loaded"] == [["/AGENTS.md", f"{len(memory):,} chars"]]
    sub = next(n for n in build_view(t)["nodes"] if n["kind"] == "subagent")
    assert "Memory loaded" not in {f["label"] for f in sub["details"]}
    root = next(s for s in to_otel_spans(t) if s.attributes["nbagents.kind"] == "agent")  # type: ignore[index]
    assert list(root.attributes["nbagents.memory.files"]) == ["/AGENTS.md"]  # type: ignore[index]


def test_the_timeline_marks_when_each_item_started_and_finished() -> None:
    t = _planned_run()
    todos = t.todos()
    main = todos[todos["agent"] == "main"]
    (row,) = (r for r in build_view(t)["timeline"] if r["name"] == "main")
    expected = sorted(
        [(at, "started") for at in main["started"].dropna()]
        + [(at, "finished") for at in main["finished"].dropna()]
    )
    assert [(m["at"], m["kind"]) for m in row["marks"]] == expected
    assert "finished: gather" in [m["label"] for m in row["marks"]]
    html = t.to_html()
    assert html.count('class="nba-mark nba-mark-finished"') == 2  # gather and the hostile item
    assert 'title="started: &lt;img src=x onerror=alert(1)&gt;' in html


def test_the_transcript_shows_each_fold_where_it_happened_and_keeps_what_came_before() -> None:
    replies = LongTask(worker="main")
    agent = create_deep_agent(long_task_model(replies), tools=[step])
    with trace(display=False) as t:
        agent.invoke({"messages": [HumanMessage("Run the long task.")]})
    transcript = t.transcript()
    folds = t.summarizations()

    # Every step's result once, in order, though the model saw only the latest after each fold;
    # the summarizer's own prompt and reply are not turns of the agent.
    results = [m.text for m in transcript if isinstance(m, ToolMessage)]
    assert [int(r.split()[3].rstrip(":")) for r in results] == list(range(1, 31))
    assert transcript.turns == len(t.own_model_spans(t.roots[0])) - len(folds)
    assert not any("<messages>" in e.content for e in transcript.entries)
    notes = [e for e in transcript.entries if e.kind == "note"]
    assert [n.span_id for n in notes] == list(folds["span_id"])
    for note, (_, fold) in zip(notes, folds.iterrows(), strict=True):
        assert f"{fold['messages_folded']} earlier messages folded" in note.text
        assert fold["history_path"] in note.text
        # the summary the model went on from follows its note
        after = transcript.entries[transcript.entries.index(note) + 1]
        assert after.kind == "input" and fold["summary"].split("\n")[-1] in after.content
