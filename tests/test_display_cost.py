"""Cost in the views: shown when some model call is priced, per agent (own and including its
sub-agents) and in the header; unknown prices shown as unknown, never as a smaller number."""

from __future__ import annotations

from nbagents import Span, Trace
from nbagents.display._viewmodel import build_view
from nbagents.tracing import TokenUsage


def priced_trace(sub_model: str = "gpt-4o") -> Trace:
    # gpt-4o: $2.50 in, $10 out per million tokens (genai-prices).
    def model(sid: str, parent: str, agent: str, name: str, inp: int, out: int) -> Span:
        usage = TokenUsage(inp, out, inp + out)
        return Span(sid, parent, "model", "Chat", agent, 0, 0.1, 0.2, "ok", usage=usage, model=name)

    return Trace(
        [
            Span("main", None, "agent", "main", "main", 0, 0.0, 3.0, "ok"),
            model("m1", "main", "main", "gpt-4o", 100_000, 10_000),  # $0.25 + $0.10
            Span(
                "task",
                "main",
                "task",
                "task",
                "main",
                0,
                0.5,
                2.5,
                "ok",
                attributes={"description": "dig", "subagent_type": "digger"},
            ),
            Span("sub", "task", "subagent", "digger", "digger", 1, 0.5, 2.5, "ok"),
            model("m2", "sub", "digger", sub_model, 40_000, 1_000),  # $0.10 + $0.01
        ]
    )


def test_the_views_show_cost_per_agent_and_in_total() -> None:
    view = build_view(priced_trace())
    assert view["cost"] == "$0.46"
    assert view["columns"][8:] == ["own cost", "cost incl. sub-agents"]
    rows = {r["cells"][0]: r["cells"] for r in view["agent_rows"]}
    assert rows["main"][8:] == ["$0.35", "$0.46"]
    assert rows["digger"][8:] == ["$0.11", "$0.11"]
    html = priced_trace().to_html()
    assert '<th class="nba-num">own cost</th>' in html
    assert 'cost <b><span class="nba-cost">$0.46</span></b>' in html
    cost = '<td class="nba-num"><span class="nba-cost">{}</span></td>'
    assert cost.format("$0.35") + cost.format("$0.46") in html


def test_an_unpriced_call_makes_every_cost_that_includes_it_unknown() -> None:
    view = build_view(priced_trace(sub_model="my-finetune"))
    assert view["cost"] == "?"
    rows = {r["cells"][0]: r["cells"] for r in view["agent_rows"]}
    assert rows["main"][8:] == ["$0.35", "?"]
    assert rows["digger"][8] == "?"


def test_no_cost_column_when_nothing_is_priced() -> None:
    unpriced = Trace([s for s in priced_trace("scripted-model").spans if s.id != "m1"])
    view = build_view(unpriced)
    assert view["cost"] is None
    assert "own cost" not in view["columns"]
    assert all(len(r["cells"]) == len(view["columns"]) == 8 for r in view["agent_rows"])
    assert "own cost" not in unpriced.to_html()
