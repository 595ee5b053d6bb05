"""Cost in the views: shown when some model call is priced, per agent (own and including its
sub-agents) and in the header; unknown prices shown as unknown, never as a smaller number."""

from __future__ import annotations

from support.display_fixtures import priced_trace

from nbagents import Trace
from nbagents.display._viewmodel import build_view


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
