"""Reasoning and cache tokens from a real provider client, end to end: the ``openai`` SDK and
``langchain-openai`` against an OpenAI-compatible server on loopback (tests/support/
openai_loopback.py) → the trace's ``TokenUsage`` → the token table and the view → the cost →
the OpenTelemetry attributes.

The run is a deep agent on ``o3`` that hands one job to the general-purpose sub-agent. Costs are
worked out by hand from o3's prices per million tokens (input 2, cached input 0.50, output 8;
reasoning tokens are output), so a token class billed at the wrong rate shows as a number.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest
from support.openai_loopback import Reply, loopback_openai

from nbagents import Trace, Tracer, create_deep_agent
from nbagents.display._viewmodel import build_view
from nbagents.export import ModelPrice, to_otel_spans, total_cost, trace_cost
from nbagents.tracing import TokenUsage

TASK = {
    "description": "Find the boiling point of water at sea level.",
    "subagent_type": "general-purpose",
}
REPLIES = [
    # the main agent delegates, writing its prompt to the cache
    Reply(1_200, 900, tool_calls=[("task", TASK)], reasoning_tokens=832, cache_write_tokens=1_024),
    # the sub-agent answers
    Reply(800, 1_500, text="It boils at 100 degrees Celsius.", reasoning_tokens=1_344),
    # the main agent answers, reading its prompt from the cache
    Reply(2_300, 300, text="Water boils at 100 °C.", reasoning_tokens=256, cached_tokens=1_152),
]
CALLS = [
    TokenUsage(1_200, 900, 2_100, cache_write=1_024, reasoning=832),
    TokenUsage(800, 1_500, 2_300, reasoning=1_344),
    TokenUsage(2_300, 300, 2_600, cache_read=1_152, reasoning=256),
]
# o3: 1,200 in x 2 + 900 out x 8 (writes bill as input: o3 has no write price)
# 800 x 2 + 1,500 x 8; then 1,148 x 2 + 1,152 cached x 0.50 + 300 x 8, per million
COSTS = [0.0096, 0.0136, 0.005272]


def run_agent(stream: bool) -> tuple[Trace, list[dict[str, object]]]:
    # Imported here, not at the top: the SDKs' import costs every test process of `make quick`.
    from langchain_openai import ChatOpenAI

    with loopback_openai(REPLIES) as server:
        model = ChatOpenAI(
            model="o3",
            base_url=server.url,
            api_key="sk-loopback",  # type: ignore[arg-type]
            streaming=stream,
            stream_usage=True,
            max_retries=0,
        )
        tracer = Tracer()
        result = create_deep_agent(model).invoke(
            {"messages": [("user", "At what temperature does water boil?")]},
            config={"callbacks": [tracer]},
        )
        requests = list(server.requests)
    assert result["messages"][-1].content == "Water boils at 100 °C."
    return tracer.trace, requests


@pytest.fixture(scope="module", params=["complete", "streamed"])
def run(request: pytest.FixtureRequest) -> tuple[Trace, list[dict[str, object]], bool]:
    stream = request.param == "streamed"
    trace, requests = run_agent(stream)
    return trace, requests, stream


def test_the_server_answers_as_the_openai_sdk_reads_it() -> None:
    import openai

    with loopback_openai([REPLIES[2], REPLIES[2]]) as server:
        client = openai.OpenAI(base_url=server.url, api_key="sk-loopback", max_retries=0)
        done = client.chat.completions.create(
            model="o3", messages=[{"role": "user", "content": "Boiling point?"}]
        )
        chunks = list(
            client.chat.completions.create(
                model="o3",
                messages=[{"role": "user", "content": "Boiling point?"}],
                stream=True,
                stream_options={"include_usage": True},
            )
        )
    assert done.choices[0].message.content == "Water boils at 100 °C."
    for usage in (done.usage, chunks[-1].usage):
        assert usage is not None
        assert usage.completion_tokens_details is not None
        assert usage.prompt_tokens_details is not None
        assert usage.completion_tokens_details.reasoning_tokens == 256
        assert usage.prompt_tokens_details.cached_tokens == 1_152
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert streamed == "Water boils at 100 °C."


def test_each_model_call_keeps_its_reasoning_and_cache_tokens(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace, requests, stream = run
    calls = [s for s in trace.walk() if s.kind == "model"]
    assert [(s.agent, s.model) for s in calls] == [
        ("main", "o3-2025-04-16"),
        ("general-purpose", "o3-2025-04-16"),
        ("main", "o3-2025-04-16"),
    ]
    assert [s.usage for s in calls] == CALLS
    # A streamed call's usage comes only from the last chunk, which the client asks for.
    expected = {"include_usage": True} if stream else None
    assert [r.get("stream_options") for r in requests] == [expected] * 3
    assert trace.total_usage() == sum(CALLS, TokenUsage())


def test_the_token_table_has_reasoning_per_agent(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace = run[0]
    table = trace.token_usage()
    assert list(table.columns) == [
        "agent",
        "role",
        "spawns",
        "input_tokens",
        "output_tokens",
        "reasoning_tokens",
        "total_tokens",
        "total_tokens_incl_descendants",
    ]
    rows = table.set_index("agent")
    assert rows.loc["main", "output_tokens"] == 1_200
    assert rows.loc["main", "reasoning_tokens"] == 1_088
    assert rows.loc["general-purpose", "reasoning_tokens"] == 1_344
    spawns = trace.token_usage("spawn")
    assert spawns["reasoning_tokens"].tolist() == [1_088, 1_344]
    spans = trace.to_dataframe().query("kind == 'model'")
    assert spans["reasoning_tokens"].tolist() == [832, 1_344, 256]
    assert spans["cache_write_tokens"].tolist() == [1_024, 0, 0]
    assert spans["cache_read_tokens"].tolist() == [0, 0, 1_152]


def test_the_view_shows_reasoning_in_the_token_table_and_the_details(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace = run[0]
    view = build_view(trace)
    columns = view["columns"]
    assert columns[4:9] == ["in", "out", "reasoning", "own total", "incl. sub-agents"]
    rows = {r["cells"][0]: r["cells"][4:9] for r in view["agent_rows"]}
    assert rows["main"] == ["3,500", "1,200", "1,088", "4,700", "7,000"]
    assert rows["general-purpose"] == ["800", "1,500", "1,344", "2,300", "2,300"]
    assert view["totals"][4:9] == ["4,300", "2,700", "2,432", "7,000", "7,000"]
    assert all(len(r["cells"]) == len(columns) for r in view["agent_rows"])
    calls = [[tuple(p) for p in n["token_table"]] for n in view["nodes"] if n["kind"] == "model"]
    assert [
        ("input", "1,200"),
        ("output", "900"),
        ("reasoning", "832"),
        ("total", "2,100"),
        ("cache write", "1,024"),
    ] in calls
    html = trace.to_html()
    assert '<th class="nba-num">reasoning</th>' in html
    assert '<td class="nba-num">1,088</td>' in html


def test_the_cost_prices_reasoning_as_output_and_cache_tokens_at_their_rates(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace = run[0]
    calls = trace_cost(trace, per="call")  # genai-prices, the test extra's default
    assert calls["reasoning_tokens"].tolist() == [832, 1_344, 256]
    assert calls["cost"].tolist() == pytest.approx(COSTS, abs=1e-12)
    agents = trace.token_usage(cost=True).set_index("agent")
    assert agents.loc["main", "cost"] == pytest.approx(COSTS[0] + COSTS[2], abs=1e-12)
    assert agents.loc["main", "cost_incl_descendants"] == pytest.approx(sum(COSTS), abs=1e-12)
    assert math.isclose(float(total_cost(trace).amount), sum(COSTS), abs_tol=1e-12)
    # With a cache-write price, the first call's 1,024 written tokens bill at it, not as input:
    # 176 x 2 + 1,024 x 2.50 + 900 x 8, per million.
    own = trace_cost(trace, prices={"o3": ModelPrice(2.0, 8.0, 0.5, 2.5)}, per="call")
    assert own["cost"].tolist()[0] == pytest.approx(0.010112, abs=1e-12)


def test_the_export_carries_reasoning_and_cache_tokens(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace = run[0]
    chats = [
        s for s in to_otel_spans(trace, prices={"o3": (2.0, 8.0, 0.5)}) if s.name.startswith("chat")
    ]
    attributes = [dict(s.attributes or {}) for s in chats]
    assert [a["gen_ai.usage.output_tokens"] for a in attributes] == [900, 1_500, 300]
    assert [a.get("gen_ai.usage.reasoning.output_tokens") for a in attributes] == [832, 1_344, 256]
    assert [a.get("gen_ai.usage.cache_creation.input_tokens") for a in attributes] == [
        1_024,
        None,
        None,
    ]
    assert [a.get("gen_ai.usage.cache_read.input_tokens") for a in attributes] == [
        None,
        None,
        1_152,
    ]
    assert [a["nbagents.cost"] for a in attributes] == pytest.approx(COSTS, abs=1e-12)


def test_the_trace_file_keeps_the_new_counts(
    run: tuple[Trace, list[dict[str, object]], bool],
) -> None:
    trace = run[0]
    again = Trace.from_json(trace.to_json())
    assert [s.usage for s in again.walk() if s.kind == "model"] == CALLS
    pd.testing.assert_frame_equal(again.token_usage(), trace.token_usage())
