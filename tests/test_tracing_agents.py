"""Tracing real agents: nbagents, upstream deepagents and a plain LangGraph graph.

Each scenario checks the visible call tree exactly, the tokens of every sub-agent (own and
including descendants) against an independent count, and the state diff of every spawn.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from typing import Annotated, Any, NotRequired

import pytest
from langchain.agents import AgentState
from langchain.tools import ToolRuntime
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import LLMResult
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from typing_extensions import TypedDict

from nbagents import ScriptedChatModel, Trace, Tracer, create_deep_agent
from nbagents.display._viewmodel import build_view
from nbagents.models import Turn, call, delegate, estimate_tokens, parallel, say
from nbagents.tracing import Span, TokenUsage, recording

# -- helpers ------------------------------------------------------------------------------------


def shape(trace: Trace, span: Span | None = None) -> list[Any]:
    """The visible tree as nested ``(kind, label, [children])``; tasks and sub-agents show their
    description, so parallel siblings are told apart."""
    out: list[Any] = []
    for child in trace.visible_children(span):
        label = child.name
        if child.kind in ("task", "subagent"):
            label = f"{child.name}: {child.attributes['description']}"
        kids = shape(trace, child)
        out.append((child.kind, label, kids) if kids else (child.kind, label))
    return out


class UsageRecorder(BaseCallbackHandler):
    """An independent count: every model call's tokens recomputed from the messages it saw and
    the reply it gave, with the scripted model's formula, keyed by (agent, task)."""

    def __init__(self) -> None:
        self.prompts: dict[Any, tuple[str, str, list[BaseMessage]]] = {}
        self.usage: dict[tuple[str, str], TokenUsage] = {}
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: Any,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        agent = str((metadata or {}).get("lc_agent_name"))
        task = next((m.text for m in messages[0] if isinstance(m, HumanMessage)), "")
        with self._lock:
            self.prompts[run_id] = (agent, task, list(messages[0]))

    def on_llm_end(self, response: LLMResult, *, run_id: Any, **kwargs: Any) -> None:
        reply = response.generations[0][0].message  # type: ignore[attr-defined]
        with self._lock:
            agent, task, prompt = self.prompts.pop(run_id)
            inp = sum(_tokens(m) for m in prompt)
            out = _tokens(reply)
            key = (agent, task)
            self.usage[key] = self.usage.get(key, TokenUsage()) + TokenUsage(inp, out, inp + out)


def _tokens(message: BaseMessage) -> int:
    calls = getattr(message, "tool_calls", None) or []
    extra = json.dumps([[c["name"], c["args"]] for c in calls]) if calls else ""
    return 4 + estimate_tokens(message.text) + estimate_tokens(extra)


async def run(mode: str, agent: Any, payload: Any, tracer: Tracer, recorder: UsageRecorder) -> Any:
    """Run ``agent`` traced by ``tracer``: via callbacks, or via ``recording()`` for streams."""
    config: dict[str, Any] = {"callbacks": [tracer, recorder]}
    if mode == "invoke":
        return agent.invoke(payload, config)
    if mode == "ainvoke":
        return await agent.ainvoke(payload, config)
    final: dict[str, Any] = {}
    with recording(tracer):
        if mode == "stream":
            for chunk in agent.stream(payload, {"callbacks": [recorder]}, stream_mode="values"):
                final = chunk
        else:
            async for chunk in agent.astream(
                payload, {"callbacks": [recorder]}, stream_mode="values"
            ):
                final = chunk
    return final


MODES = ["invoke", "ainvoke", "stream", "astream"]


def spans_by_kind(trace: Trace, kind: str) -> list[Span]:
    return [s for s in trace.spans if s.kind == kind]


def assert_well_formed(trace: Trace) -> None:
    """Every span ended, has a known parent, and carries the agent and depth of its ancestors."""
    for span in trace.spans:
        assert span.status == "ok", (span.kind, span.name, span.error)
        assert span.end is not None and span.end >= span.start
        parent = trace.parent(span)
        if span.parent_id is not None:
            assert parent is not None
        if span.kind == "subagent":
            assert parent is not None and parent.kind == "task"
            assert span.depth == parent.depth + 1
            assert span.attributes["parent_agent"] == parent.agent
        elif parent is not None and span.kind != "agent":
            assert (span.agent, span.depth) == (parent.agent, parent.depth)


# -- nbagents: three parallel sub-agents (two of one type) and a nested one ---------------------


def merge_files(left: dict[str, str] | None, right: dict[str, str] | None) -> dict[str, str]:
    return {**(left or {}), **(right or {})}


class NotesState(AgentState):  # type: ignore[type-arg]
    files: NotRequired[Annotated[dict[str, str], merge_files]]
    secret: NotRequired[str]


@tool
def lookup(query: str) -> str:
    """Look ``query`` up."""
    return f"facts about {query}"


@tool
def save_note(name: str, text: str, runtime: ToolRuntime) -> Command:  # type: ignore[type-arg]
    """Save a note in the shared files."""
    message = ToolMessage(f"saved {name}", tool_call_id=runtime.tool_call_id or "")
    return Command(update={"files": {name: text}, "messages": [message]})


SCRIPT = {
    "main": [
        parallel(
            delegate("Research alpha", "researcher"),
            delegate("Research beta", "researcher"),
            delegate("Write the summary", "writer"),
        ),
        say("All done."),
    ],
    "researcher": {
        "Research alpha": [call("lookup", query="alpha"), say("alpha is fine")],
        "Research beta": [delegate("Draft beta notes", "writer"), say("beta is fine")],
    },
    "writer": {
        "Write the summary": [call("save_note", name="summary.md", text="S"), say("saved")],
        "Draft beta notes": [say("beta draft")],
    },
}

INPUT = {
    "messages": [HumanMessage("go")],
    "files": {"readme.md": "hello"},
    "secret": "s3cr3t",
}


def nbagents_agent() -> Any:
    return create_deep_agent(
        ScriptedChatModel(script=SCRIPT),
        [lookup, save_note],
        subagents=[
            {
                "name": "researcher",
                "description": "Researches.",
                "system_prompt": "Research.",
                "tools": [lookup],
            },
            {
                "name": "writer",
                "description": "Writes.",
                "system_prompt": "Write.",
                "tools": [save_note],
            },
        ],
        state_schema=NotesState,
        excluded_state_keys=["secret"],
    )


NBAGENTS_SHAPE = [
    (
        "agent",
        "main",
        [
            ("model", "ScriptedChatModel"),
            (
                "task",
                "task: Research alpha",
                [
                    (
                        "subagent",
                        "researcher: Research alpha",
                        [
                            ("model", "ScriptedChatModel"),
                            ("tool", "lookup"),
                            ("model", "ScriptedChatModel"),
                        ],
                    ),
                ],
            ),
            (
                "task",
                "task: Research beta",
                [
                    (
                        "subagent",
                        "researcher: Research beta",
                        [
                            ("model", "ScriptedChatModel"),
                            (
                                "task",
                                "task: Draft beta notes",
                                [
                                    (
                                        "subagent",
                                        "writer: Draft beta notes",
                                        [("model", "ScriptedChatModel")],
                                    ),
                                ],
                            ),
                            ("model", "ScriptedChatModel"),
                        ],
                    ),
                ],
            ),
            (
                "task",
                "task: Write the summary",
                [
                    (
                        "subagent",
                        "writer: Write the summary",
                        [
                            ("model", "ScriptedChatModel"),
                            ("tool", "save_note"),
                            ("model", "ScriptedChatModel"),
                        ],
                    ),
                ],
            ),
            ("model", "ScriptedChatModel"),
        ],
    ),
]

FROM_MAIN = {
    "withheld": {"messages": "2 items", "secret": "6 chars"},
    "passed": {"files": "1 item"},
}
NBAGENTS_DIFFS = {
    "Research alpha": {**FROM_MAIN, "returned": []},
    "Research beta": {**FROM_MAIN, "returned": []},
    "Write the summary": {**FROM_MAIN, "returned": ["files"]},
    # The researcher's state at its call: the brief, its own AI turn, and the files it got.
    "Draft beta notes": {
        "withheld": {"messages": "2 items"},
        "passed": {"files": "1 item"},
        "returned": [],
    },
}


def artifacts(messages: list[BaseMessage]) -> dict[str, dict[str, Any]]:
    return {
        m.artifact["description"]: m.artifact
        for m in messages
        if isinstance(m, ToolMessage) and isinstance(m.artifact, dict)
    }


@pytest.mark.parametrize("mode", MODES)
async def test_nbagents_tree_tokens_and_diffs(mode: str) -> None:
    tracer, recorder = Tracer(), UsageRecorder()
    result = await run(mode, nbagents_agent(), INPUT, tracer, recorder)
    trace = tracer.trace

    assert result["messages"][-1].text == "All done."
    assert result["files"] == {"readme.md": "hello", "summary.md": "S"}
    assert shape(trace) == NBAGENTS_SHAPE
    assert_well_formed(trace)

    records = trace.subagents
    assert [(r.type, r.description, r.parent_agent, r.depth) for r in records] == [
        ("researcher", "Research alpha", "main", 1),
        ("researcher", "Research beta", "main", 1),
        ("writer", "Draft beta notes", "researcher", 2),
        ("writer", "Write the summary", "main", 1),
    ]
    assert [r.result for r in records] == ["alpha is fine", "beta is fine", "beta draft", "saved"]
    assert all(r.status == "ok" and r.task_span_id for r in records)

    # State diffs: exactly what the task tool recorded.
    for r in records:
        expected = NBAGENTS_DIFFS[r.description]
        got = {"withheld": dict(r.withheld), "passed": dict(r.passed), "returned": list(r.returned)}
        assert got == expected, r.description

    # Tokens: own and including descendants, against an independent count…
    own = {r.description: r.tokens_own for r in records}
    for r in records:
        assert r.tokens_own == recorder.usage[(r.type, r.description)], r.description
    assert own["Research beta"] != records[1].tokens_total
    assert records[1].tokens_total == own["Research beta"] + own["Draft beta notes"]
    for r in records:
        if r.description != "Research beta":
            assert r.tokens_total == r.tokens_own
    assert trace.total_usage() == sum(recorder.usage.values(), TokenUsage())
    main = trace.roots[0]
    assert trace.own_usage(main) == recorder.usage[("main", "go")]

    # …and against the artifacts of the task ToolMessages (the nested one lives in the
    # researcher's conversation, so check it through the researcher's total).
    found = artifacts(result["messages"])
    assert set(found) == {"Research alpha", "Research beta", "Write the summary"}
    for r in records:
        if r.description not in found:
            continue
        art = found[r.description]
        assert art["tokens"] == {
            "input": r.tokens_own.input,
            "output": r.tokens_own.output,
            "total": r.tokens_own.total,
        }
        assert art["tokens_including_descendants"]["total"] == r.tokens_total.total
        assert art["state"] == {
            "withheld": dict(r.withheld),
            "passed": dict(r.passed),
            "returned": list(r.returned),
        }
        assert art["depth"] == r.depth

    # Per agent type: own tokens summed over spawns; incl. descendants counts nested ones once.
    frame = trace.token_usage().set_index("agent")
    assert frame.loc["researcher", "spawns"] == 2
    assert frame.loc["writer", "spawns"] == 2
    by_type: dict[str, TokenUsage] = {}
    for r in records:
        by_type[r.type] = by_type.get(r.type, TokenUsage()) + r.tokens_own
    assert frame.loc["researcher", "total_tokens"] == by_type["researcher"].total
    assert frame.loc["writer", "total_tokens"] == by_type["writer"].total
    assert frame.loc["main", "total_tokens_incl_descendants"] == trace.total_usage().total

    # Model spans name their model; tool spans carry their call's position.
    assert {s.model for s in spans_by_kind(trace, "model")} == {"scripted-model"}
    tasks = [s for s in trace.visible_children(main) if s.kind == "task"]
    assert [s.attributes["call_index"] for s in tasks] == [0, 1, 2]
    assert len({s.attributes["batch"] for s in tasks}) == 1
    assert [s.attributes["subagent_type"] for s in tasks] == ["researcher", "researcher", "writer"]


async def test_nbagents_subagent_inputs_and_outputs_are_messages() -> None:
    tracer, recorder = Tracer(), UsageRecorder()
    await run("invoke", nbagents_agent(), INPUT, tracer, recorder)
    trace = tracer.trace
    sub = next(
        s
        for s in spans_by_kind(trace, "subagent")
        if s.attributes["description"] == ("Write the summary")
    )
    assert sub.inputs["messages"] == [{"type": "human", "content": "Write the summary"}]
    assert sub.inputs["files"] == {"readme.md": "hello"}
    assert "secret" not in sub.inputs
    assert sub.outputs["files"] == {"readme.md": "hello", "summary.md": "S"}
    task = trace.parent(sub)
    assert task is not None and task.inputs == {
        "description": "Write the summary",
        "subagent_type": "writer",
    }
    assert task.outputs["type"] == "command"
    tool_message = task.outputs["update"]["messages"][0]
    assert tool_message["type"] == "tool" and tool_message["content"] == "saved"
    assert tool_message["artifact"]["subagent"] == "writer"
    model = trace.visible_children(sub)[0]
    assert model.kind == "model"
    assert model.inputs[-1] == {"type": "human", "content": "Write the summary"}
    assert model.outputs["tool_calls"][0]["name"] == "save_note"
    assert sorted(model.attributes["tools"]) == ["save_note", "task"]


async def test_failing_and_unknown_subagents_are_errors_in_the_trace() -> None:
    from nbagents.models import fail

    model = ScriptedChatModel(
        script={
            "main": [
                parallel(
                    delegate("good", "general-purpose"),
                    delegate("bad", "general-purpose"),
                    delegate("odd", "nope"),
                ),
                say("done"),
            ],
            "general-purpose": {"good": ["fine"], "bad": [fail("boom")]},
        }
    )
    with recording() as tracer:
        create_deep_agent(model).invoke({"messages": [HumanMessage("go")]})
    trace = tracer.trace
    assert trace.finished and trace.status == "ok"
    records = {r.description: r for r in trace.subagents}
    assert set(records) == {"good", "bad"}
    assert records["good"].status == "ok"
    assert records["bad"].status == "error"
    assert records["bad"].error == "RuntimeError: boom"
    assert records["bad"].result == "Sub-agent 'general-purpose' failed: RuntimeError: boom"
    tasks = {s.attributes["description"]: s for s in spans_by_kind(trace, "task")}
    assert tasks["good"].status == "ok"
    assert tasks["bad"].status == "error"
    assert tasks["odd"].status == "error"
    assert "Unknown subagent_type 'nope'" in (tasks["odd"].error or "")
    assert trace.children(tasks["odd"]) == []
    failed_model = next(s for s in spans_by_kind(trace, "model") if s.status == "error")
    assert failed_model.agent == "general-purpose" and failed_model.error == "RuntimeError: boom"
    # Every step the failures went through is marked failed, but repr and the views' header
    # count each failure once, where it started: the failed model call (its sub-agent and task
    # failed with it) and the task with an unknown type.
    failed = [s for s in trace.spans if s.status == "error" and not s.hidden]
    assert sorted(s.kind for s in failed) == ["model", "subagent", "task", "task"]
    assert trace.failures() == 2
    assert "; 2 failed;" in repr(trace)
    assert build_view(trace)["errors"] == 2


def test_a_type_that_delegates_to_itself_counts_each_step_once() -> None:
    # Three researcher spawns, one inside another: 41 + 60 + 27 = 128 tokens of their own.
    def costing(turn: Turn, inp: int, out: int) -> Turn:
        return dataclasses.replace(turn, usage={"input_tokens": inp, "output_tokens": out})

    model = ScriptedChatModel(
        script={
            "main": [
                costing(parallel(delegate("A", "researcher"), delegate("B", "researcher")), 6, 2),
                say("done", usage={"input_tokens": 6, "output_tokens": 2}),
            ],
            "researcher": {
                "A": [say("a", usage={"input_tokens": 30, "output_tokens": 11})],
                "B": [
                    costing(delegate("B, deeper", "researcher"), 25, 5),
                    say("b", usage={"input_tokens": 25, "output_tokens": 5}),
                ],
                "B, deeper": [say("b2", usage={"input_tokens": 20, "output_tokens": 7})],
            },
        }
    )
    researcher = {"name": "researcher", "description": "Researches.", "system_prompt": "R."}
    with recording() as tracer:
        create_deep_agent(model, subagents=[researcher]).invoke({"messages": [HumanMessage("go")]})
    trace = tracer.trace
    assert trace.total_usage().total == 144

    columns = ["agent", "description", "total_tokens", "total_tokens_incl_descendants"]
    spawns = trace.token_usage("spawn")[columns]
    assert spawns.values.tolist() == [
        ["main", "", 16, 144],
        ["researcher", "A", 41, 41],
        ["researcher", "B", 60, 87],
        ["researcher", "B, deeper", 27, 27],
    ]
    # The nested spawn is in B's total already: the type's total is 128, not 155.
    frame = trace.token_usage().set_index("agent")
    assert frame.loc["researcher"].to_dict() == {
        "role": "subagent",
        "spawns": 3,
        "input_tokens": 100,
        "output_tokens": 28,
        "total_tokens": 128,
        "total_tokens_incl_descendants": 128,
    }
    assert frame.loc["main", "total_tokens_incl_descendants"] == 144

    # At a dollar a token, cost repeats the token counts: never more than the whole run.
    cost = trace.token_usage(prices={"scripted-model": (1e6, 1e6)}).set_index("agent")
    assert cost.loc["researcher", ["cost", "cost_incl_descendants"]].tolist() == [128.0, 128.0]
    assert cost.loc["main", ["cost", "cost_incl_descendants"]].tolist() == [16.0, 144.0]

    # The views' token table has a row per spawn, the same numbers as per="spawn".
    rows = [r["cells"] for r in build_view(trace)["agent_rows"]]
    assert [(r[0], r[1], r[6], r[7]) for r in rows] == [
        ("main", "", "16", "144"),
        ("researcher", "A", "41", "41"),
        ("researcher", "B", "60", "87"),
        ("researcher", "B, deeper", "27", "27"),
    ]

    # One tree of agents holds the same figures, and every other reader takes it from there.
    (main,) = trace.agents()
    assert (main.kind, main.type, main.result, main.tokens_total.total) == (
        "agent",
        "main",
        "done",
        144,
    )
    tree = [(r.kind, r.description, r.depth, r.tokens_own.total) for r in main.walk()]
    assert tree == [
        ("agent", "", 0, 16),
        ("subagent", "A", 1, 41),
        ("subagent", "B", 1, 60),
        ("subagent", "B, deeper", 2, 27),
    ]
    assert [c.description for c in main.spawns[1].children] == ["B, deeper"]
    assert [r.span_id for r in trace.subagents] == [r.span_id for r in list(main.walk())[1:]]
    assert [r.parent_agent for r in trace.subagents] == ["main", "main", "researcher"]


# -- upstream deepagents ------------------------------------------------------------------------


def upstream_agent() -> Any:
    deepagents = pytest.importorskip("deepagents")
    from deepagents.backends import StateBackend
    from deepagents.middleware.subagents import SubAgentMiddleware as UpstreamSubAgents

    model = ScriptedChatModel(
        script={
            "main": [
                call("write_file", file_path="/notes.md", content="hello world"),
                parallel(
                    delegate("Research alpha", "researcher"),
                    delegate("Research beta", "researcher"),
                    delegate("Write the summary", "general-purpose"),
                ),
                say("All done."),
            ],
            "researcher": {
                "Research alpha": [
                    call("write_file", file_path="/alpha.md", content="A"),
                    say("alpha is fine"),
                ],
                "Research beta": [delegate("Draft beta notes", "general-purpose"), "beta is fine"],
            },
            "general-purpose": {"Write the summary": ["summary"], "Draft beta notes": ["draft"]},
        }
    )
    # Upstream sub-agents get no ``task`` tool; give the researcher one to nest.
    nested = UpstreamSubAgents(
        backend=StateBackend(),
        subagents=[
            {
                "name": "general-purpose",
                "description": "Anything.",
                "system_prompt": "Help.",
                "model": model,
                "tools": [],
            }
        ],
    )
    return deepagents.create_deep_agent(
        model,
        name="main",
        subagents=[
            {
                "name": "researcher",
                "description": "Researches.",
                "system_prompt": "Research.",
                "middleware": [nested],
            }
        ],
    )


UPSTREAM_SHAPE = [
    (
        "agent",
        "main",
        [
            ("model", "ScriptedChatModel"),
            ("tool", "write_file"),
            ("model", "ScriptedChatModel"),
            (
                "task",
                "task: Research alpha",
                [
                    (
                        "subagent",
                        "researcher: Research alpha",
                        [
                            ("model", "ScriptedChatModel"),
                            ("tool", "write_file"),
                            ("model", "ScriptedChatModel"),
                        ],
                    ),
                ],
            ),
            (
                "task",
                "task: Research beta",
                [
                    (
                        "subagent",
                        "researcher: Research beta",
                        [
                            ("model", "ScriptedChatModel"),
                            (
                                "task",
                                "task: Draft beta notes",
                                [
                                    (
                                        "subagent",
                                        "general-purpose: Draft beta notes",
                                        [("model", "ScriptedChatModel")],
                                    ),
                                ],
                            ),
                            ("model", "ScriptedChatModel"),
                        ],
                    ),
                ],
            ),
            (
                "task",
                "task: Write the summary",
                [
                    (
                        "subagent",
                        "general-purpose: Write the summary",
                        [("model", "ScriptedChatModel")],
                    ),
                ],
            ),
            ("model", "ScriptedChatModel"),
        ],
    ),
]

# Inferred from the child's input against the parent's state at the call: main has the user
# message, its write_file call and result, and its parallel AI turn (4 messages) and one file.
UPSTREAM_FROM_MAIN = {"withheld": {"messages": "4 items"}, "passed": {"files": "1 item"}}
UPSTREAM_DIFFS = {
    "Research alpha": {**UPSTREAM_FROM_MAIN, "returned": ["files"]},
    "Research beta": {**UPSTREAM_FROM_MAIN, "returned": []},
    "Write the summary": {**UPSTREAM_FROM_MAIN, "returned": []},
    "Draft beta notes": {
        "withheld": {"messages": "2 items"},
        "passed": {"files": "1 item"},
        "returned": [],
    },
}


@pytest.mark.parametrize("mode", MODES)
async def test_upstream_deepagents_tree_tokens_and_inferred_diffs(mode: str) -> None:
    agent = upstream_agent()
    tracer, recorder = Tracer(), UsageRecorder()
    result = await run(mode, agent, {"messages": [HumanMessage("go")]}, tracer, recorder)
    trace = tracer.trace

    assert result["messages"][-1].text == "All done."
    assert sorted(result["files"]) == ["/alpha.md", "/notes.md"]
    assert shape(trace) == UPSTREAM_SHAPE
    assert_well_formed(trace)

    records = trace.subagents
    assert [(r.type, r.description, r.parent_agent, r.depth) for r in records] == [
        ("researcher", "Research alpha", "main", 1),
        ("researcher", "Research beta", "main", 1),
        ("general-purpose", "Draft beta notes", "researcher", 2),
        ("general-purpose", "Write the summary", "main", 1),
    ]
    assert [r.result for r in records] == ["alpha is fine", "beta is fine", "draft", "summary"]
    for r in records:
        got = {"withheld": dict(r.withheld), "passed": dict(r.passed), "returned": list(r.returned)}
        assert got == UPSTREAM_DIFFS[r.description], r.description
        assert trace.get(r.span_id).attributes["state_diff"] == "inferred"
        assert r.tokens_own == recorder.usage[(r.type, r.description)], r.description
    beta, nested = records[1], records[2]
    assert beta.tokens_total == beta.tokens_own + nested.tokens_own
    assert trace.total_usage() == sum(recorder.usage.values(), TokenUsage())
    assert trace.own_usage(trace.roots[0]) == recorder.usage[("main", "go")]

    # The upstream ToolMessage says only the result; the trace adds who ran and what it cost.
    results = {m.text for m in result["messages"] if isinstance(m, ToolMessage) and m.artifact}
    assert results == set()
    frame = trace.token_usage().set_index("agent")
    assert frame.loc["general-purpose", "spawns"] == 2


# -- a plain LangGraph graph --------------------------------------------------------------------


class Counter(TypedDict):
    count: int
    text: str


def test_plain_langgraph_graph_shows_its_nodes() -> None:
    model = ScriptedChatModel(script={"solo": ["hi there"]})

    def bump(state: Counter) -> dict[str, Any]:
        return {"count": state["count"] + 1}

    def talk(state: Counter) -> dict[str, Any]:
        return {"text": model.invoke("hello").text}

    graph = StateGraph(Counter)
    graph.add_node("bump", bump)
    graph.add_node("talk", talk)
    graph.add_edge(START, "bump")
    graph.add_edge("bump", "talk")
    graph.add_edge("talk", END)
    app = graph.compile()

    with recording() as tracer:
        assert app.invoke({"count": 1, "text": ""}) == {"count": 2, "text": "hi there"}
        model.invoke("and again")
    trace = tracer.trace
    assert shape(trace) == [
        (
            "agent",
            "LangGraph",
            [
                ("chain", "bump"),
                ("chain", "talk", [("model", "ScriptedChatModel")]),
            ],
        ),
        ("model", "ScriptedChatModel"),
    ]
    root = trace.roots[0]
    assert root.inputs == {"count": 1, "text": ""}
    assert root.outputs == {"count": 2, "text": "hi there"}
    bump_span, talk_span = trace.visible_children(root)
    assert bump_span.outputs == {"count": 2}
    assert (bump_span.hidden, bump_span.agent, bump_span.depth) == (False, "LangGraph", 0)
    assert talk_span.outputs == {"text": "hi there"}
    assert trace.subagents == []
    assert trace.total_usage().total > 0
    assert trace.status == "ok" and trace.finished


def test_interrupted_graph_is_marked_interrupted() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    class Asked(TypedDict):
        answer: str

    def ask(state: Asked) -> dict[str, Any]:
        return {"answer": interrupt("what?")}

    graph = StateGraph(Asked)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    with recording() as tracer:
        app.invoke({"answer": ""}, config)
    first = tracer.trace.roots[0]
    assert first.status == "interrupted"
    node = tracer.trace.children(first)[0]
    # A pause is not an error: no error text, and what it waits for is kept on the node.
    assert node.status == "interrupted" and node.error is None
    (pending,) = node.attributes["pending"]
    assert (pending["kind"], pending["value"], pending["allowed"]) == ("interrupt", "what?", [])
    assert tracer.trace.status == "interrupted"
    with recording() as again:
        assert app.invoke(Command(resume="42"), config) == {"answer": "42"}
    assert again.trace.roots[0].status == "ok"


def test_a_run_paused_then_resumed_in_one_block_ends_ok() -> None:
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import interrupt

    class Asked(TypedDict):
        answer: str

    graph = StateGraph(Asked)
    graph.add_node("ask", lambda state: {"answer": interrupt("what?")})
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    with recording() as tracer:
        app.invoke({"answer": ""}, config)
        assert tracer.trace.status == "interrupted"
        app.invoke(Command(resume="42"), config)
    # The resumption continues the paused root: one tree, with the pause on it.
    (root,) = tracer.trace.roots
    assert root.status == "ok"
    (pause,) = root.attributes["paused"]
    assert root.start <= pause[0] <= pause[1] <= (root.end or 0)
    assert tracer.trace.status == "ok"


def test_agent_spans_hide_langgraph_plumbing_but_keep_it() -> None:
    tracer, recorder = Tracer(), UsageRecorder()
    nbagents_agent().invoke(INPUT, {"callbacks": [tracer, recorder]})
    trace = tracer.trace
    chains = spans_by_kind(trace, "chain")
    assert chains and all(s.hidden for s in chains)
    assert {s.name for s in chains} == {"model", "tools"}
    # One hidden ``tools`` node run per parallel call, ordered by the call's position.
    main = trace.roots[0]
    tools_nodes = [s for s in trace.children(main) if s.name == "tools"]
    assert [s.attributes["call_index"] for s in tools_nodes] == [0, 1, 2]
    visible = [s for s in trace.spans if not s.hidden]
    assert {s.kind for s in visible} == {"agent", "subagent", "task", "model", "tool"}
    # Plumbing keeps the shape of what it carried, not a second copy of the agent's state.
    model_node = next(s for s in trace.children(main) if s.name == "model")
    assert model_node.inputs["messages"] == "1 item"
    carried = [s.inputs if isinstance(s.inputs, dict) else {"": s.inputs} for s in chains]
    assert all(isinstance(v, str) for sizes in carried for v in sizes.values())


@pytest.mark.parametrize("on_error", ["raise", "return"])
@pytest.mark.parametrize("how", ["invoke", "ainvoke"])
async def test_one_failing_subagent_is_one_failure_whichever_way_it_is_reported(
    on_error: str, how: str
) -> None:
    from nbagents.models import fail

    model = ScriptedChatModel(
        script={
            "main": [parallel(delegate("break", "general-purpose"), delegate("fine")), "ok"],
            "general-purpose": {"break": [fail(RuntimeError("boom"))], "fine": ["fine"]},
        }
    )
    agent = create_deep_agent(model, on_subagent_error=on_error)  # type: ignore[arg-type]
    with recording() as tracer:
        try:
            if how == "ainvoke":
                await agent.ainvoke({"messages": [HumanMessage("go")]})
            else:
                agent.invoke({"messages": [HumanMessage("go")]})
        except RuntimeError:
            assert on_error == "raise"
    trace = tracer.trace
    failed = sorted(s.kind for s in trace.spans if s.status == "error" and not s.hidden)
    # Each step the failure went through is marked, and it is counted once.
    expected = ["model", "subagent", "task"] + (["agent"] if on_error == "raise" else [])
    assert failed == sorted(expected)
    assert trace.failures() == 1
    assert "; 1 failed;" in repr(trace)
    assert build_view(trace)["errors"] == 1
    assert "1 failed" in " ".join(
        f"{s['value']} {s['label']}" for s in build_view(trace)["header"]["stats"]
    )
