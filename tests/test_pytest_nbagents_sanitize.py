"""The sanitize rules nbagents ships for nbval: each part of a trace view that varies between
equal runs is masked (times, timeline bars, costs, ids, the live view's snapshot), and what a
run did (a result's text, the tree) still shows through, so a real change fails."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.display_fixtures import priced_trace

import nbagents
from nbagents import ScriptedChatModel, Trace, create_deep_agent
from nbagents._notebook import trace_bundle
from nbagents.display import _costview
from nbagents.display.live import LiveView
from nbagents.export import PriceTable
from nbagents.models import delegate, parallel
from pytest_nbagents import RULES, sanitize, sanitize_file_text


def run(latency: float = 0.0, *, writer: str = "C written", researchers: int = 2) -> Trace:
    calls = [delegate(f"Research {n}", "researcher") for n in "AB"[:researchers]]
    script: dict[str, Any] = {
        "main": [parallel(*calls, delegate("Write C", "writer")), "Done."],
        "researcher": ["fine"],
        "writer": [writer],
    }
    subagents: list[Any] = [
        {"name": "researcher", "description": "Researches", "system_prompt": "Research."},
        {"name": "writer", "description": "Writes", "system_prompt": "Write."},
    ]
    model = ScriptedChatModel(script=script, latency=latency)
    with nbagents.trace(display=False, store=False) as t:
        create_deep_agent(model, subagents=subagents).invoke({"messages": [("user", "go")]})
    return t


@pytest.fixture(scope="module")
def fast() -> Trace:
    return run(0.0)


@pytest.fixture(scope="module")
def slow() -> Trace:
    return run(0.03)


def without(name: str, text: str) -> str:
    """``text`` sanitized by every rule but ``name``: to show that that rule is the one needed."""
    assert name in {rule.name for rule in RULES}
    for rule in RULES:
        if rule.name != name:
            text = re.sub(rule.regex, rule.replace, text)
    return text


@pytest.mark.parametrize(
    "rule",
    [
        "nbagents-times",
        "nbagents-timeline-widths",
        "nbagents-timeline-times",
        "nbagents-timeline-text",
    ],
)
def test_equal_runs_sanitize_to_the_same_and_each_rule_is_needed(
    fast: Trace, slow: Trace, rule: str
) -> None:
    a, b = fast.to_html(), slow.to_html()
    assert sanitize(a) == sanitize(b)
    assert without(rule, a) != without(rule, b)


def test_a_different_result_or_tree_still_differs(fast: Trace) -> None:
    reworded = run(writer="C rewritten")
    assert sanitize(fast.to_html()) != sanitize(reworded.to_html())
    assert "C rewritten" in sanitize(reworded.to_html())
    smaller = run(researchers=1)
    assert sanitize(fast.to_html()) != sanitize(smaller.to_html())
    assert sanitize(repr(fast)) != sanitize(repr(smaller))


def test_a_displayed_trace_is_compared_by_its_facts_not_its_markup(
    fast: Trace, slow: Trace
) -> None:
    shown = trace_bundle(fast)["text/html"]
    # another nbagents release: other classes and labels around the same run
    restyled = shown.replace('class="nba-', 'class="nbx-').replace("Call tree", "Calls")
    assert restyled != shown and sanitize(restyled) == sanitize(shown)
    assert sanitize(trace_bundle(slow)["text/html"]) == sanitize(shown)
    facts = sanitize(shown)
    assert facts.startswith("<!--nba-facts v1\n") and facts.endswith("-->")
    assert "writer · ok · " in facts and "result: C written" in facts
    # what the run did still fails: another result, one spawn less
    reworded = sanitize(trace_bundle(run(writer="C rewritten"))["text/html"])
    assert reworded != facts and "result: C rewritten" in reworded
    assert sanitize(trace_bundle(run(researchers=1))["text/html"]) != facts


def test_ids_are_masked(fast: Trace) -> None:
    again = run()
    a = fast.token_usage(per="spawn").to_html()
    b = again.token_usage(per="spawn").to_html()
    assert without("nbagents-uuids", a) != without("nbagents-uuids", b)  # each run's own ids
    assert sanitize(a) == sanitize(b)
    assert "UUID" in sanitize(a)


def test_costs_are_masked_but_not_the_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    def table(dollars: float) -> Any:
        return lambda: PriceTable({"gpt-4o": (dollars, dollars)})

    monkeypatch.setattr(_costview, "default_prices", table(2.5))
    a = priced_trace().to_html()
    monkeypatch.setattr(_costview, "default_prices", table(3.0))
    b = priced_trace().to_html()
    assert without("nbagents-costs", a) != without("nbagents-costs", b)
    assert sanitize(a) == sanitize(b)
    assert "110,000" in sanitize(a)  # the tokens are still compared


def test_the_live_views_first_snapshot_and_its_last_sanitize_to_the_same() -> None:
    trace = Trace(title="research")
    view = LiveView(trace)
    first = view._bundle()
    done = run()
    later = LiveView(done)._bundle()
    for mime, rule in (
        ("text/html", "nbagents-live-view-html"),
        ("text/plain", "nbagents-live-view-text"),
    ):
        assert without(rule, first[mime]) != without(rule, later[mime])
        assert sanitize(first[mime]) == sanitize(later[mime])


def test_the_file_text_is_what_nbval_reads() -> None:
    # Imported here: nbval's import takes seconds, which every test process paid at collection.
    from nbval.plugin import get_sanitize_patterns

    patterns = get_sanitize_patterns(sanitize_file_text())
    assert patterns == [(rule.regex, rule.replace) for rule in RULES]
    assert len({rule.name for rule in RULES}) == len(RULES)
    for rule in RULES:
        re.compile(rule.regex)
        assert rule.why
