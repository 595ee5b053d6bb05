"""The Conversation view: each agent's transcript in its details pane, in the view records
both renderers draw and in the static snapshot; bounded, escaped, and growing with the run."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import HumanMessage
from support.display_fixtures import make_agent

from nbagents import Tracer
from nbagents.display._format import CONVERSATION_TEXT, CONVERSATION_TURNS
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.tracing import Span, TokenUsage, Trace


def real_trace() -> Trace:
    tracer = Tracer()
    make_agent(latency=0).invoke({"messages": [HumanMessage("go")]}, {"callbacks": [tracer]})
    return tracer.trace


def nodes_by_title(view: Any) -> dict[str, Any]:
    out = {}
    for node in view["nodes"]:
        if node["kind"] in ("agent", "subagent"):
            task = next((f["value"] for f in node["details"] if f["label"] == "Description"), "")
            out[f"{node['name']}: {task}" if task else node["name"]] = node
    return out


def test_every_agent_node_holds_its_conversation_in_order() -> None:
    trace = real_trace()
    view = build_view(trace)
    nodes = nodes_by_title(view)
    assert sorted(nodes) == [
        "general-purpose: Dig deeper",
        "main",
        "researcher: Research A",
        "researcher: Research B",
        "writer: Write C",
    ]
    for node in view["nodes"]:
        assert ("conversation" in node) == (node["kind"] in ("agent", "subagent"))
    a = nodes["researcher: Research A"]["conversation"]
    assert [(t["label"], t["content"]) for t in a["turns"]][1:] == [
        ("task", "Research A"),
        ("AI", ""),
        ("tool result · search", "results for A"),
        ("final answer", "A is fine"),
    ]
    assert a["turns"][0]["label"] == "system prompt" and a["turns"][0]["fold"]
    assert a["turns"][2]["tool_calls"] == [{"name": "search", "args": '{"query": "A"}'}]
    assert re.fullmatch(r"turn 1 · \d+ in · \d+ out", a["turns"][2]["meta"])
    assert (a["messages"], a["model_calls"], a["left_out"]) == (5, 2, 0)
    # main's task results link to the nodes of the sub-agents they end
    main = nodes["main"]["conversation"]
    links = {t["link_label"]: t["link"] for t in main["turns"] if t["link"]}
    assert links == {
        "researcher: Research A": nodes["researcher: Research A"]["id"],
        "researcher: Research B": nodes["researcher: Research B"]["id"],
        "writer: Write C": nodes["writer: Write C"]["id"],
    }
    # a step of the conversation names the tree node it came from
    steps = {n["id"]: n for n in view["nodes"]}
    reply = a["turns"][2]
    assert steps[reply["step"]]["kind"] == "model"


def test_the_snapshot_shows_a_sub_agents_conversation() -> None:
    html = real_trace().to_html()
    # each conversation, up to the next step of the tree
    convs = [
        c.split("<li ")[0] for c in html.split('<details class="nba-field nba-conv" open>')[1:]
    ]
    assert len(convs) == 5
    task = '<span class="nba-role">task</span><div class="nba-text">Dig deeper</div>'
    (deeper,) = [c for c in convs if task in c]
    assert deeper.index("Dig deeper") < deeper.index("deep result")
    assert "Conversation (3 messages, 1 model calls)" in deeper
    assert "→ the conversation of researcher: Research B" in html


def _long_agent(turns: int, text: str = "x") -> Trace:
    """One agent whose model made ``turns`` calls of one tool each."""
    spans = [Span("a", None, "agent", "main", "main", 0, 0.0, float(turns + 1), "ok")]
    convo: list[dict[str, Any]] = [{"type": "human", "content": "go"}]
    for i in range(turns):
        t0 = float(i) + 0.1
        reply = {
            "type": "ai",
            "content": "",
            "tool_calls": [{"name": "t", "args": {}, "id": f"c{i}"}],
        }
        model = Span(f"m{i}", "a", "model", "M", "main", 0, t0, t0 + 0.1, "ok", inputs=list(convo))
        model.outputs = reply
        model.usage = TokenUsage(1, 1, 2)
        result = {"type": "tool", "content": text, "tool_call_id": f"c{i}", "status": "success"}
        tool = Span(f"t{i}", "a", "tool", "t", "main", 0, t0 + 0.2, t0 + 0.3, "ok", outputs=result)
        tool.attributes["tool_call_id"] = f"c{i}"
        spans += [model, tool]
        convo += [reply, result]
    return Trace(spans)


def test_a_long_conversation_is_bounded_and_says_what_it_left_out() -> None:
    trace = _long_agent(150, text="y" * (CONVERSATION_TEXT + 1000))
    (node,) = [n for n in build_view(trace)["nodes"] if n["kind"] == "agent"]
    conv = node["conversation"]
    assert len(conv["turns"]) == CONVERSATION_TURNS
    assert conv["left_out"] == 1 + 2 * 150 - CONVERSATION_TURNS
    tool = next(t for t in conv["turns"] if t["kind"] == "tool")
    assert tool["content"].endswith("… [1000 more characters]") and tool["fold"]
    html = trace.to_html()
    assert f"… and {conv['left_out']:,} more entries, left out" in html
    assert "[1000 more characters]" in html
    assert len(trace.transcript()) == 1 + 2 * 150  # the transcript itself has them all


def test_the_conversation_grows_with_the_run_in_patches() -> None:
    whole = _long_agent(3)
    trace = Trace([whole.get("a")])
    builder = ViewBuilder(trace)
    builder.update()
    seen = []
    for span in whole.spans[1:]:
        trace.add(span)
        changes = builder.update()
        patch = builder.patch(changes)
        (agent,) = [n for n in patch["nodes"] if n["kind"] == "agent"]
        seen.append(len(agent["conversation"]["turns"]))
    # each model call adds its reply; each tool call its result
    assert seen == [2, 3, 4, 5, 6, 7]


def test_a_long_conversations_other_pages_come_on_request_and_say_how_many_entries() -> None:
    trace = _long_agent(500)  # 1,001 entries: 6 pages
    builder = ViewBuilder(trace)
    builder.update()
    (node,) = [n for n in builder.view()["nodes"] if n["kind"] == "agent"]
    conv = node["conversation"]
    assert (conv["entries"], conv["page_size"]) == (1_001, CONVERSATION_TURNS)
    assert len(conv["turns"]) == CONVERSATION_TURNS  # the view holds the first page only
    assert builder.long_conversations() == [node["id"]]
    # each page holds the entries after the one before; every entry is reached once
    pages = builder.conversation_pages(node["id"])
    assert [p["page"] for p in pages] == list(range(1, 6))
    seen = conv["turns"] + [t for p in pages for t in p["turns"]]
    assert len(seen) == 1_001 and all(p["entries"] == 1_001 for p in pages)
    assert seen[-1]["kind"] == "tool" and seen[-1]["turn"] == 500
    assert [t["turn"] for t in seen] == sorted(t["turn"] for t in seen)
    page = builder.conversation_page(node["id"], 3)
    assert page is not None and page["turns"] == pages[2]["turns"]
    past = builder.conversation_page(node["id"], 99)
    assert past == {"page": 99, "turns": [], "entries": 1_001}
    # a model call is no agent: no conversation to page
    model = next(n for n in builder.view()["nodes"] if n["kind"] == "model")
    assert builder.conversation_page(model["id"], 1) is None
    assert builder.conversation_page("no such node", 1) is None


def test_a_patch_carries_a_long_conversations_first_page_only() -> None:
    whole = _long_agent(400)
    trace = Trace(whole.spans[:-2])
    builder = ViewBuilder(trace)
    builder.update()
    for span in whole.spans[-2:]:
        trace.add(span)
    patch = builder.patch(builder.update())
    (agent,) = [n for n in patch["nodes"] if n["kind"] == "agent"]
    assert len(agent["conversation"]["turns"]) == CONVERSATION_TURNS
    assert agent["conversation"]["entries"] == 801
    assert len(builder.patch_json(builder.update())) < 10_000  # nothing changed: no turns


def test_the_live_view_sends_a_page_the_front_end_asks_for() -> None:
    from nbagents.display.live import LiveView

    view = LiveView(_long_agent(300))
    view.sync()
    (node,) = [n for n in view.builder.view()["nodes"] if n["kind"] == "agent"]
    sent: list[Any] = []
    view.widget.send = sent.append  # type: ignore[method-assign]
    view._on_msg(view.widget, {"type": "turns", "id": node["id"], "page": 2}, [])
    view._on_msg(view.widget, {"type": "turns", "id": node["id"], "page": "2"}, [])
    view._on_msg(view.widget, {"type": "turns", "id": node["id"], "page": -1}, [])
    (msg,) = sent
    assert (msg["type"], msg["id"], msg["page"], msg["entries"]) == ("turns", node["id"], 2, 601)
    assert len(msg["turns"]) == CONVERSATION_TURNS
    assert msg["turns"][0]["turn"] == 200  # entry 400: the human's, then two per turn


def test_a_saved_view_holds_the_other_pages_within_its_limit() -> None:
    import json

    from nbagents.display._saved import conversation_pages

    builder = ViewBuilder(_long_agent(500))
    builder.update()
    (key,) = builder.long_conversations()
    pages = json.loads(conversation_pages(builder, 10_000_000))
    assert sorted(pages[key], key=int) == ["1", "2", "3", "4", "5"]
    assert sum(len(p) for p in pages[key].values()) == 1_001 - CONVERSATION_TURNS
    cut = json.loads(conversation_pages(builder, 100_000))
    assert 0 < len(cut.get(key, {})) < 5
