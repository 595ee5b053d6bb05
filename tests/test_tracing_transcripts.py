"""Transcripts: each agent's conversation, rebuilt from the trace, equals what its model saw
and said, checked against an independent record of every model call (``support.conversations``)
on nested, parallel, failed and resumed runs, upstream deepagents agents, and a reloaded trace."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from support.conversations import Conversations, canonical

from nbagents import ScriptedChatModel, Trace, Tracer, create_deep_agent, pending_approvals
from nbagents.models import call, delegate, fail, parallel, say
from nbagents.tracing import Transcript, recording
from nbagents.tracing._jsonready import MAX_ITEMS, MAX_STRING, jsonready
from nbagents.tracing.messages import stored_messages, tool_result, was_cut


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"facts about {query}" + (": the word zanzibar" if query == "deep" else "")


@tool
def deploy(target: str) -> str:
    """Deploy to ``target``."""
    return f"deployed to {target}"


RESEARCHER = {
    "name": "researcher",
    "description": "Researches.",
    "system_prompt": "Research.",
    "tools": [lookup],
}
WRITER = {"name": "writer", "description": "Writes.", "system_prompt": "Write.", "tools": [lookup]}

SCRIPT = {
    "main": [
        parallel(
            delegate("Research alpha", "researcher"),
            delegate("Research beta", "researcher"),
            delegate("Write it", "writer"),
        ),
        say("All done."),
    ],
    "researcher": {
        "Research alpha": [call("lookup", query="alpha"), say("alpha is fine")],
        "Research beta": [delegate("Go deeper", "writer"), say("beta is fine")],
    },
    "writer": {
        "Go deeper": [call("lookup", query="deep"), say("deep draft")],
        "Write it": [say("written")],
    },
}


def run_nested(mode: str = "invoke") -> tuple[Trace, Conversations, dict[str, Any]]:
    agent = create_deep_agent(
        ScriptedChatModel(script=SCRIPT), [lookup], subagents=[RESEARCHER, WRITER]
    )
    tracer, seen = Tracer(), Conversations()
    config: dict[str, Any] = {"callbacks": [tracer, seen]}
    if mode == "invoke":
        result = agent.invoke({"messages": [HumanMessage("go")]}, config)
    else:
        import asyncio

        result = asyncio.run(agent.ainvoke({"messages": [HumanMessage("go")]}, config))
    return tracer.trace, seen, result


def by_task(trace: Trace) -> dict[str, Transcript]:
    return {t.task: t for t in trace.transcripts() if t.kind == "subagent"}


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_every_transcript_is_exactly_its_agents_messages(mode: str) -> None:
    trace, seen, result = run_nested(mode)
    main = trace.transcript()
    assert canonical(main) == canonical(seen.of("main", "go"))
    # the main agent's last state holds the same conversation, system prompt aside
    assert canonical(main)[1:] == canonical(result["messages"])
    subs = by_task(trace)
    assert sorted(subs) == ["Go deeper", "Research alpha", "Research beta", "Write it"]
    for task, transcript in subs.items():
        assert canonical(transcript) == canonical(seen.of(transcript.agent, task)), task
        # isolated: a sub-agent starts from its system prompt and its task alone
        first = list(transcript)[:2]
        assert isinstance(first[0], SystemMessage) and isinstance(first[1], HumanMessage)
        assert first[1].text == task
    deeper = subs["Go deeper"]
    assert [e.kind for e in deeper.entries] == ["system", "input", "reply", "tool", "reply"]
    assert [e.turn for e in deeper.entries] == [0, 0, 1, 1, 2]
    assert deeper.final_answer == "deep draft"
    assert deeper.depth == 2 and deeper.parent_id == subs["Research beta"].span_id


def test_task_results_link_to_the_sub_agents_transcripts_and_turns_carry_tokens() -> None:
    trace, _, _ = run_nested()
    main = trace.transcript()
    results = [e for e in main.entries if e.kind == "tool"]
    linked = {trace.transcript(e.subagent_id).task: e.content for e in results if e.subagent_id}
    assert linked == {
        "Research alpha": "alpha is fine",
        "Research beta": "beta is fine",
        "Write it": "written",
    }
    for transcript in trace.transcripts():
        replies = [e for e in transcript.entries if e.kind == "reply"]
        spans = [trace.get(e.span_id) for e in replies if e.span_id]
        assert [e.usage for e in replies] == [s.usage for s in spans]
        assert transcript.usage() == trace.own_usage(trace.get(transcript.span_id))
        assert all(e.usage.total > 0 for e in replies)


def test_a_transcript_is_found_by_record_span_name_or_step() -> None:
    trace, _, _ = run_nested()
    alpha = next(r for r in trace.subagents if r.description == "Research alpha")
    by_record = trace.transcript(alpha)
    assert by_record.span_id == alpha.span_id
    assert trace.transcript(alpha.span_id).span_id == alpha.span_id
    a_step = next(s for s in trace.descendants(trace.get(alpha.span_id)) if s.kind == "tool")
    assert trace.transcript(a_step).span_id == alpha.span_id
    assert trace.transcript("main").span_id == trace.roots[0].id
    with pytest.raises(LookupError, match="2 agents are named 'researcher'"):
        trace.transcript("researcher")
    with pytest.raises(LookupError, match="No span and no agent"):
        trace.transcript("nobody")


def test_a_reloaded_trace_gives_the_same_transcripts(tmp_path: Any) -> None:
    trace, _, _ = run_nested()
    trace.save(tmp_path / "run.json")
    loaded = Trace.load(tmp_path / "run.json")
    before, after = trace.transcripts(), loaded.transcripts()
    assert [t.span_id for t in after] == [t.span_id for t in before]
    for old, new in zip(before, after, strict=True):
        assert canonical(new) == canonical(old)
        assert new.entries == old.entries
        assert new.to_markdown() == old.to_markdown()


def test_search_finds_a_word_only_a_nested_sub_agents_tool_result_holds() -> None:
    trace, _, _ = run_nested()
    (match,) = trace.search("ZANZIBAR")
    assert match.transcript.title == "writer: Go deeper"
    assert match.transcript.depth == 2
    assert (match.entry.kind, match.entry.turn) == ("tool", 1)
    assert "zanzibar" in match.snippet
    assert trace.search("no such words") == []


def test_a_failed_sub_agent_ends_with_its_error() -> None:
    script = {
        "main": [delegate("Try", "researcher"), say("Gave up.")],
        "researcher": [call("lookup", query="x"), fail("model down")],
    }
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=[RESEARCHER])
    tracer, seen = Tracer(), Conversations()
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer, seen]})
    (sub,) = [t for t in tracer.trace.transcripts() if t.kind == "subagent"]
    assert sub.status == "error"
    assert canonical(sub) == canonical(seen.of("researcher", "Try"))
    assert [e.kind for e in sub.entries] == ["system", "input", "reply", "tool", "error"]
    assert "model down" in sub.entries[-1].text
    assert sub.final_answer is None
    main = tracer.trace.transcript()
    (result,) = [e for e in main.entries if e.kind == "tool"]
    assert result.message is not None and result.message["status"] == "error"
    assert result.subagent_id == sub.span_id


_threads = itertools.count()


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_a_resumed_sub_agent_shows_its_approval_where_it_happened(decision: str) -> None:
    script = {
        "main": [delegate("Ship it.", "ops"), "done"],
        "ops": [call("deploy", target="prod"), say("Shipped.")],
    }
    ops = {"name": "ops", "description": "Deploys.", "system_prompt": "Deploy."}
    agent = create_deep_agent(
        ScriptedChatModel(script=script),
        [deploy],
        subagents=[ops],
        interrupt_on={"deploy": True},
        checkpointer=InMemorySaver(),
    )
    config: dict[str, Any] = {"configurable": {"thread_id": f"transcript-{next(_threads)}"}}
    seen = Conversations()
    with recording() as tracer:
        paused = agent.invoke({"messages": [("user", "release")]}, {**config, "callbacks": [seen]})
        waiting = tracer.trace.transcript(tracer.trace.subagents[0])
        requests = pending_approvals(paused)
        if decision == "approve":
            requests.approve_all()
        else:
            requests[0].reject("not today")
        agent.invoke(requests.resume(), {**config, "callbacks": [seen]})
    trace = tracer.trace
    assert [e.kind for e in waiting.entries] == ["system", "input", "reply", "approval"]
    assert "waits for a decision" in waiting.entries[-1].text
    (sub,) = [t for t in trace.transcripts() if t.kind == "subagent"]
    assert canonical(sub) == canonical(seen.of("ops", "Ship it."))
    assert [e.kind for e in sub.entries] == [
        "system",
        "input",
        "reply",
        "approval",
        "tool",
        "reply",
    ]
    approval = sub.entries[3]
    assert approval.turn == 1
    assert approval.text.startswith('deploy({"target": "prod"}): ' + decision)
    if decision == "reject":
        assert "not today" in approval.text
    assert sub.final_answer == "Shipped."


def test_upstream_deepagents_transcripts_are_their_messages() -> None:
    deepagents = pytest.importorskip("deepagents")
    model = ScriptedChatModel(
        script={
            "main": [
                parallel(delegate("Find x", "researcher"), delegate("Find y", "researcher")),
                say("Both found."),
            ],
            "researcher": {
                "Find x": [call("write_file", file_path="/x.md", content="X"), say("x found")],
                "Find y": [say("y found")],
            },
        }
    )
    agent = deepagents.create_deep_agent(
        model,
        name="main",
        subagents=[{"name": "researcher", "description": "R.", "system_prompt": "Research."}],
    )
    tracer, seen = Tracer(), Conversations()
    result = agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer, seen]})
    trace = tracer.trace
    assert canonical(trace.transcript()) == canonical(seen.of("main", "go"))
    assert canonical(trace.transcript())[1:] == canonical(result["messages"])
    subs = by_task(trace)
    assert sorted(subs) == ["Find x", "Find y"]
    for task, transcript in subs.items():
        assert canonical(transcript) == canonical(seen.of("researcher", task)), task
    assert [e.kind for e in subs["Find x"].entries] == ["system", "input", "reply", "tool", "reply"]
    tool_results = [e for e in trace.transcript().entries if e.kind == "tool"]
    assert {trace.transcript(e.subagent_id).task for e in tool_results} == {"Find x", "Find y"}


def test_the_messages_are_langchain_messages_with_their_tool_calls() -> None:
    trace, _, _ = run_nested()
    transcript = trace.transcript(next(r for r in trace.subagents if r.description == "Go deeper"))
    system, task, reply, result, answer = transcript
    assert isinstance(system, SystemMessage) and system.text.startswith("Write.")
    assert isinstance(task, HumanMessage)
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [("lookup", {"query": "deep"})]
    assert isinstance(result, ToolMessage) and result.tool_call_id == reply.tool_calls[0]["id"]
    assert isinstance(answer, AIMessage) and answer.text == "deep draft"
    assert transcript[-1].text == "deep draft" and len(transcript) == 5


def test_markdown_fences_every_text_and_folds_long_ones() -> None:
    hostile = "```\n<script>alert(1)</script>\n# not a heading"
    long = "word " * 500
    script = {
        "main": [delegate(hostile, "researcher"), say("done")],
        "researcher": [call("lookup", query=long), say(hostile)],
    }
    agent = create_deep_agent(ScriptedChatModel(script=script), subagents=[RESEARCHER])
    tracer = Tracer()
    agent.invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer]})
    (sub,) = [t for t in tracer.trace.transcripts() if t.kind == "subagent"]
    text = sub.to_markdown()
    # the hostile text sits inside a fence longer than its own backticks
    assert "````text\n" + hostile + "\n````" in text
    # rendered (as GitHub would, with HTML allowed), no message text becomes markup
    markdown_it = pytest.importorskip("markdown_it")
    html = markdown_it.MarkdownIt("commonmark").render(text)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "<h1>" not in html
    # the system prompt and the long tool result fold; short texts do not
    assert text.count("<details><summary>") == 2
    assert f"{len('facts about ' + long):,} characters" in text
    assert "### Turn 1" in text and "### Turn 2" in text
    assert "**Final answer**" in text


def _hand_built(second_input: list[Any]) -> Trace:
    """An agent with two model calls and one tool call between them, as a trace file holds."""
    from nbagents.tracing import Span

    system = {"type": "system", "content": "Be brief."}
    human = {"type": "human", "content": "hi"}
    reply = {
        "type": "ai",
        "content": "",
        "tool_calls": [{"name": "lookup", "args": {"query": "q"}, "id": "c1"}],
    }
    result = {"type": "tool", "content": "the result", "tool_call_id": "c1", "status": "success"}
    spans = [
        Span("a", None, "agent", "main", "main", 0, 0.0, 3.0, "ok"),
        Span("m1", "a", "model", "M", "main", 0, 0.1, 0.2, "ok", inputs=[system, human]),
        Span("t1", "a", "tool", "lookup", "main", 0, 0.3, 0.4, "ok", outputs=result),
        Span("m2", "a", "model", "M", "main", 0, 0.5, 0.6, "ok", inputs=second_input),
    ]
    spans[1].outputs = reply
    spans[2].attributes["tool_call_id"] = "c1"
    spans[3].outputs = {"type": "ai", "content": "bye"}
    return Trace(spans)


def test_a_cut_model_input_is_said_and_its_tool_results_come_from_the_tool_calls() -> None:
    system = {"type": "system", "content": "Be brief."}
    trace = _hand_built([system, {"type": "human", "content": "hi"}, "… 2 more items"])
    entries = trace.transcript().entries
    assert [e.kind for e in entries] == ["system", "input", "reply", "note", "tool", "reply"]
    assert "cut in the trace (2 messages left out)" in entries[3].text
    assert entries[4].content == "the result" and entries[4].span_id == "t1"


def test_a_rewritten_context_is_said() -> None:
    summary = {"type": "human", "content": "Summary: hi, looked up q."}
    trace = _hand_built([{"type": "system", "content": "Be brief."}, summary])
    entries = trace.transcript().entries
    assert [e.kind for e in entries] == ["system", "input", "reply", "note", "input", "reply"]
    assert "context was rewritten before turn 2" in entries[3].text
    assert entries[4].content.startswith("Summary:")


def test_the_one_reader_finds_messages_and_what_the_tracer_cut() -> None:
    turns = [HumanMessage(f"q{i}") for i in range(MAX_ITEMS + 10)]
    found, left_out = stored_messages(jsonready([turns]))  # a model call's batch of one prompt
    assert len(found) + left_out == len(turns) and left_out > 0
    assert stored_messages({"messages": [("user", "hi")]})[0] == [
        {"type": "human", "content": "hi"}
    ]
    command = {
        "type": "command",
        "update": {"messages": [jsonready(ToolMessage("ok", tool_call_id="c"))]},
    }
    assert tool_result(command, "c") == {
        "type": "tool",
        "content": "ok",
        "tool_call_id": "c",
        "status": "success",
    }
    assert was_cut(jsonready({"files": ["x"] * (MAX_ITEMS + 1)}))
    assert was_cut(jsonready({"note": "x" * (MAX_STRING + 1)}))
    assert not was_cut(jsonready({"files": ["x"], "note": "short"}))
