"""The Tools pane: its rows agree with ``Trace.tool_usage()`` on a nested run, stay right while
the run grows (patches), escape what tools were given and answered, and link each call to its
step in the snapshot's call tree."""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest
from support.display_fixtures import XSS_PAYLOADS
from support.tool_run import EXPECTED, TURNS, tool_trace
from test_display_html import Doc, sanitize

from nbagents.cost import Cost
from nbagents.display._costview import format_cost
from nbagents.display._toolbook import CALL_LIMIT, COLUMNS, COST_COLUMN
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.tracing import Span, TokenUsage, Trace
from nbagents.tracing.cost import span_cost
from nbagents.tracing.tools import tool_calls, tool_turns


@pytest.fixture(scope="module")
def trace() -> Trace:
    return tool_trace()


def _rows(view: Any) -> dict[str, Any]:
    return {row["id"]: row for row in view["tools"]["rows"]}


def test_the_rows_say_what_tool_usage_says(trace: Trace) -> None:
    tools = build_view(trace)["tools"]
    assert tools["columns"] == COLUMNS  # the scripted model has no price: no cost column
    assert tools["order"] == ["search", "task", "broken", "fetch"]
    rows = _rows({"tools": tools})
    frame = trace.tool_usage().set_index("tool")
    for tool, (calls, _, failures, turns, inp, out) in EXPECTED.items():
        cells = rows[tool]["cells"]
        assert cells[0] == tool
        assert cells[2:4] == [str(calls), str(failures)]
        assert cells[5:] == [str(turns), str(inp), str(out)]
        assert int(cells[2]) == frame.loc[tool, "calls"]
        assert int(cells[6]) + int(cells[7]) == frame.loc[tool, "turn_total_tokens"]
    assert rows["search"]["cells"][1] == "researcher \u00d72, main"
    assert rows["task"]["status"] == "error" and rows["search"]["status"] == "ok"
    # the total counts main's turn once, though it asked for search and task
    assert tools["totals"][:4] == ["all", "", "8", "2"]
    inp, out = (sum(pair[i] for pair in TURNS.values()) for i in (0, 1))
    assert tools["totals"][5:] == [str(len(TURNS)), str(inp), str(out)]


def test_each_row_lists_its_calls_with_the_agents_that_made_them(trace: Trace) -> None:
    view = build_view(trace)
    nodes = {node["id"]: node for node in view["nodes"]}
    for row in view["tools"]["rows"]:
        assert len(row["calls"]) == EXPECTED[row["id"]][0] and row["more"] == 0
        for call in row["calls"]:
            node = nodes[call["id"]]  # the call's own step in the tree
            assert node["kind"] in ("tool", "task")
            span = trace.get(_span_of(trace, view, call["id"]))
            assert span.agent == call["agent"]
    search = _rows(view)["search"]
    previews = sorted(nodes[c["id"]]["preview"] for c in search["calls"])
    assert previews == ['{"query": "a1"}', '{"query": "a2"}', '{"query": "q"}']


def _span_of(trace: Trace, view: Any, node_id: str) -> str:
    builder = ViewBuilder(trace)
    builder.update()
    span = builder.span_of(node_id)
    assert span is not None
    return span.id


def test_a_priced_run_gets_the_cost_of_its_turns() -> None:
    trace = tool_trace(model_name="gpt-4o")
    tools = build_view(trace)["tools"]
    assert tools["columns"] == [*COLUMNS, COST_COLUMN]
    rows = _rows({"tools": tools})
    calls = tool_calls(trace)
    for tool in EXPECTED:
        turns = tool_turns(c for c in calls if c.tool == tool)
        cost = sum((span_cost(t) for t in turns), Cost())
        assert cost.known and cost.amount > 0
        assert rows[tool]["cells"][-1] == format_cost(cost), tool
    every = sum((span_cost(t) for t in tool_turns(calls)), Cost())
    assert tools["totals"][-1] == format_cost(every)
    html = trace.to_html()
    assert '<th class="nba-num">turn cost</th>' in html
    assert f'<span class="nba-cost">{format_cost(every)}</span>' in html  # masked for nbval


def _grow(final: Trace) -> list[tuple[float, str, Span]]:
    events = [(s.start, "start", s) for s in final.spans]
    events += [(s.end, "end", s) for s in final.spans if s.end is not None]
    return sorted(events, key=lambda e: (e[0], e[1] == "start"))


def test_patches_while_the_run_grows_add_up_to_the_finished_table(trace: Trace) -> None:
    live = Trace()
    builder = ViewBuilder(live)
    builder.update()
    seen = json.loads(builder.view_json())["tools"]
    rows = {r["id"]: r for r in seen["rows"]}
    copies: dict[str, Span] = {}
    patched = 0
    for _, what, span in _grow(trace):
        if what == "start":
            copies[span.id] = dataclasses.replace(
                span, end=None, status="running", error=None, usage=TokenUsage(), outputs=None
            )
            live.add(copies[span.id])
        else:
            copy = copies[span.id]
            copy.end, copy.status, copy.error = span.end, span.status, span.error
            copy.usage, copy.outputs = span.usage, span.outputs
            live.changed()
        patch = json.loads(builder.patch_json(builder.update()))
        if "tools" in patch:
            patched += 1
            rows.update({r["id"]: r for r in patch["tools"]["rows"]})
            seen = patch["tools"]
    expected = build_view(live)["tools"]
    assert patched >= 8
    assert {k: v for k, v in seen.items() if k != "rows"} == {
        k: v for k, v in expected.items() if k != "rows"
    }
    assert [rows[t] for t in seen["order"]] == expected["rows"]
    assert expected["rows"] == build_view(trace)["tools"]["rows"]


# -- the snapshot -------------------------------------------------------------------------------


def _tools_section(html: str) -> str:
    start = html.index('<details class="nba-sec nba-tools-sec"')
    return html[start : html.index("</details>\n", start)]


def test_each_call_links_to_its_step_in_the_call_tree(trace: Trace) -> None:
    html = trace.to_html()
    doc = Doc(html)
    ids = {a["id"]: a for tag, a, _ in doc.elements if tag == "li" and a.get("id")}
    links = [a["href"] for tag, a, _ in doc.elements if tag == "a"]
    assert len(links) == sum(e[0] for e in EXPECTED.values())
    assert len(set(links)) == len(links)
    for href in links:
        target = ids[str(href)[1:]]  # a step of the tree has the id the link names
        assert re.search(r"\bnba-k-(tool|task)\b", str(target["class"]))
    # the first search call is main's own, right under it in the tree
    first = re.search(r'<a class="nba-tree-link" href="#([^"]+)"', _tools_section(html))
    assert first is not None and ids[first.group(1)]["data-node"] == "0.1"


def test_the_anchor_is_one_runs_own_and_masked_for_nbval(trace: Trace) -> None:
    other = tool_trace()
    a, b = trace.to_html(), other.to_html()
    assert a == trace.to_html()  # the same drawing each time
    anchor = build_view(trace)["tools"]["anchor"]
    assert anchor and anchor in a and anchor not in b  # two outputs never share an id
    assert sanitize(a) == sanitize(b)  # and an equal run's output is equal for nbval


@pytest.mark.parametrize("payload", XSS_PAYLOADS)
def test_a_hostile_tool_argument_and_result_stay_text(trace: Trace, payload: str) -> None:
    html = tool_trace(payload).to_html()
    doc, clean = Doc(html), Doc(trace.to_html())
    assert not doc.unbalanced and not doc.stack
    # nothing opened or closed early: the same elements as a run without the payload
    assert [t for t, _, _ in doc.elements] == [t for t, _, _ in clean.elements]
    for tag, attrs, _ in doc.elements:
        assert tag not in ("script", "img", "iframe"), tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        if tag == "a":
            assert str(attrs["href"]).startswith("#nba-"), attrs
    section = Doc(_tools_section(html)).text
    # in the call's line and its arguments (as JSON), and in its result
    argument = json.dumps("q" + payload, ensure_ascii=False)
    assert section.count(argument) >= 2 and f"found q{payload}" in section


def test_a_tool_with_many_calls_lists_the_first_and_counts_the_rest() -> None:
    spans = [Span("a", None, "agent", "main", "main", 0, 0.0, 10.0, "ok")]
    for i in range(CALL_LIMIT + 20):
        spans.append(
            Span(f"t{i}", "a", "tool", "lookup", "main", 0, 0.01 * i, 0.01 * i + 0.005, "ok")
        )
    trace = Trace(spans)
    row = build_view(trace)["tools"]["rows"][0]
    assert len(row["calls"]) == CALL_LIMIT and row["more"] == 20
    section = _tools_section(trace.to_html())
    assert f"{CALL_LIMIT + 20} calls of lookup" in section
    assert section.count('class="nba-tree-link"') == CALL_LIMIT
    assert "… and 20 more calls" in section and 'tool_usage("call")' in section


def test_a_run_without_tools_has_no_tools_pane() -> None:
    trace = Trace([Span("a", None, "agent", "main", "main", 0, 0.0, 1.0, "ok")])
    html = trace.to_html()
    assert "<summary>Tools<" not in html and "tools:" not in html
    assert build_view(trace)["tools"]["order"] == []


def test_the_plain_version_names_the_tools(trace: Trace) -> None:
    plain = re.search(r'<div class="nba-plain"[^>]*>(.*?)<pre', trace.to_html(), re.S)
    assert plain is not None
    assert "tools: search \u00d73 (by researcher \u00d72, main)" in plain.group(1)
    assert "broken \u00d71 (by researcher, 1 failed)" in plain.group(1)


def test_a_turns_tokens_reach_its_tools_whenever_they_come() -> None:
    # A call can be taken in before the turn that asked for it, and a streaming turn's tokens
    # change after its calls started: each tool that turn asked for follows, counting it once.
    live = Trace([Span("a", None, "agent", "main", "main", 0, 0.0)])
    builder = ViewBuilder(live)
    builder.update()
    for sid, name in (("t1", "search"), ("t2", "search"), ("t3", "fetch")):
        live.add(Span(sid, "a", "tool", name, "main", 0, 0.2, attributes={"batch": "m"}))
    assert _cells(builder)["search"][5:] == ["1", "0", "0"]
    turn = Span("m", "a", "model", "Chat", "main", 0, 0.0, usage=TokenUsage(5, 5, 10))
    live.add(turn)
    assert _cells(builder)["search"][5:] == ["1", "5", "5"]
    turn.usage = TokenUsage(7, 3, 10)
    live.changed()
    seen = _cells(builder)
    assert seen["search"][5:] == seen["fetch"][5:] == ["1", "7", "3"]
    assert seen["all"][5:] == ["1", "7", "3"]  # the total counts the turn once
    assert seen == {r["id"]: r["cells"] for r in build_view(live)["tools"]["rows"]} | {
        "all": build_view(live)["tools"]["totals"]
    }


def _cells(builder: ViewBuilder) -> dict[str, list[str]]:
    builder.update()
    tools = builder.view()["tools"]
    return {r["id"]: r["cells"] for r in tools["rows"]} | {"all": tools["totals"]}
