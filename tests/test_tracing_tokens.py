"""Token details as each LangChain provider package reports them, kept in ``TokenUsage``: read,
priced, saved (old files load, files without the new counts stay readable by older versions),
and shown only when a run has them.

The ``usage_metadata`` dicts are what the packages build (langchain-openai's
``_create_usage_metadata``, langchain-anthropic's, langchain-google-genai's), written out so that
each provider's way of filing a count is one case.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from nbagents import Trace
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.export import BUILTIN_PRICES, GenaiPrices, ModelPrice, trace_cost
from nbagents.tracing import Span, TokenUsage
from nbagents.tracing._jsonio import TraceFormatError


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        pytest.param(
            {
                "input_tokens": 1_000,
                "output_tokens": 900,
                "total_tokens": 1_900,
                "input_token_details": {"audio": 0, "cache_read": 256},
                "output_token_details": {"audio": 0, "reasoning": 704},
            },
            TokenUsage(1_000, 900, 1_900, cache_read=256, reasoning=704),
            id="openai",
        ),
        pytest.param(
            {
                "input_tokens": 1_000,
                "output_tokens": 900,
                "total_tokens": 1_900,
                "input_token_details": {"priority_cache_read": 256, "priority": 744},
                "output_token_details": {"priority_reasoning": 704, "priority": 196},
            },
            TokenUsage(1_000, 900, 1_900, cache_read=256, reasoning=704),
            id="openai-priority-tier",
        ),
        pytest.param(
            {
                "input_tokens": 1_600,
                "output_tokens": 900,
                "total_tokens": 2_500,
                "input_token_details": {
                    "cache_read": 100,
                    "cache_creation": 0,
                    "ephemeral_5m_input_tokens": 300,
                    "ephemeral_1h_input_tokens": 200,
                },
                "output_token_details": {"reasoning": 640},
            },
            TokenUsage(1_600, 900, 2_500, 100, 500, reasoning=640, cache_write_1h=200),
            id="anthropic-cache-lifetimes-and-thinking",
        ),
        pytest.param(
            {
                "input_tokens": 1_600,
                "output_tokens": 90,
                "total_tokens": 1_690,
                "input_token_details": {"cache_read": 100, "cache_creation": 500},
            },
            TokenUsage(1_600, 90, 1_690, 100, 500),
            id="anthropic-without-lifetimes",
        ),
        pytest.param(
            {
                "input_tokens": 1_000,
                "output_tokens": 1_100,
                "total_tokens": 2_100,
                "input_token_details": {"cache_read": 0},
                "output_token_details": {"reasoning": 777},
            },
            TokenUsage(1_000, 1_100, 2_100, reasoning=777),
            id="gemini-thoughts",
        ),
        pytest.param(
            {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
            TokenUsage(10, 5, 15),
            id="no-details",
        ),
    ],
)
def test_each_provider_s_details_are_read(usage: dict[str, Any], expected: TokenUsage) -> None:
    assert TokenUsage.from_messages([AIMessage("hi", usage_metadata=usage)]) == expected


def test_sums_and_differences_keep_every_count() -> None:
    a = TokenUsage(10, 20, 30, 1, 2, reasoning=3, cache_write_1h=1)
    b = TokenUsage(1, 2, 3, 0, 1, reasoning=1, cache_write_1h=0)
    assert a + b == TokenUsage(11, 22, 33, 1, 3, reasoning=4, cache_write_1h=1)
    assert (a + b) - b == a
    assert TokenUsage(reasoning=1)  # a count of any kind is usage


def model_span(usage: TokenUsage, model: str = "o3") -> Span:
    return Span(
        "m", None, "model", "ChatOpenAI", "main", 0, 0.0, 1.0, "ok", usage=usage, model=model
    )


def test_a_trace_saved_before_the_new_counts_loads_with_zero() -> None:
    old = {
        "format": "nbagents.trace",
        "version": 1,
        "title": "",
        "finished": True,
        "spans": [
            {
                **{k: v for k, v in model_span(TokenUsage()).to_dict().items() if k != "usage"},
                "usage": {"input": 10, "output": 5, "total": 15, "cache_read": 0, "cache_write": 0},
            }
        ],
    }
    (span,) = Trace.from_json(json.dumps(old)).spans
    assert span.usage == TokenUsage(10, 5, 15)
    assert span.usage.reasoning == span.usage.cache_write_1h == 0


def test_a_trace_without_the_new_counts_is_written_as_before() -> None:
    # Earlier versions reject usage keys they do not know: they can read what has none.
    text = Trace([model_span(TokenUsage(10, 5, 15, cache_read=2))]).to_json()
    (span,) = json.loads(text)["spans"]
    assert set(span["usage"]) == {"input", "output", "total", "cache_read", "cache_write"}
    with_them = TokenUsage(10, 5, 15, 0, 4, reasoning=3, cache_write_1h=4)
    (span,) = json.loads(Trace([model_span(with_them)]).to_json())["spans"]
    assert span["usage"]["reasoning"] == 3
    assert Trace.from_json(Trace([model_span(with_them)]).to_json()).spans[0].usage == with_them


def test_a_bad_reasoning_count_in_a_file_is_rejected() -> None:
    data = json.loads(Trace([model_span(TokenUsage(10, 5, 15))]).to_json())
    data["spans"][0]["usage"]["reasoning"] = "lots"
    with pytest.raises(TraceFormatError, match="bad token usage entry 'reasoning'"):
        Trace.from_json(json.dumps(data))


# Claude Sonnet 4.5, USD per million tokens: input 3, output 15, five-minute cache write 3.75,
# one-hour cache write 6.
SONNET = "claude-sonnet-4-5-20250929"


def test_genai_prices_bills_one_hour_cache_writes_at_their_own_rate() -> None:
    usage = TokenUsage(10_000, 500, 10_500, cache_write=1_000, cache_write_1h=400)
    # 9,000 x 3 + 600 x 3.75 + 400 x 6 + 500 x 15
    assert GenaiPrices().price_of(SONNET, usage) == Decimal("0.03915")
    assert BUILTIN_PRICES.price_of("claude-sonnet-4", usage) == Decimal("0.03915")


def test_genai_prices_bills_openai_cache_writes_at_their_own_rate() -> None:
    # gpt-5.6-sol writes to its cache at 1.25 times its input price (whichever dated price the
    # snapshot applies today): every input token written costs a quarter more than read afresh.
    prices = GenaiPrices()
    written = prices.price_of("gpt-5.6-sol", TokenUsage(1_000, 0, 1_000, cache_write=1_000))
    fresh = prices.price_of("gpt-5.6-sol", TokenUsage(1_000, 0, 1_000))
    assert written is not None and fresh is not None and fresh > 0
    assert written / fresh == Decimal("1.25")


def test_reasoning_is_billed_as_the_output_it_is_part_of() -> None:
    thinking = TokenUsage(1_000, 500, 1_500, reasoning=400)
    plain = TokenUsage(1_000, 500, 1_500)
    # o3: input 2, output 8: 1,000 x 2 + 500 x 8
    assert GenaiPrices().price_of("o3", thinking) == Decimal("0.006")
    assert BUILTIN_PRICES.price_of("o3", thinking) == BUILTIN_PRICES.price_of("o3", plain)


def test_counts_that_do_not_fit_are_cut_not_raised() -> None:
    # A hand-edited file may say anything; genai-prices refuses parts larger than their whole.
    odd = TokenUsage(100, 10, 110, cache_read=500, reasoning=50)
    # All 100 input tokens read from the cache at 0.30, 10 output at 15.
    assert GenaiPrices().price_of(SONNET, odd) == Decimal("0.00018")
    price = ModelPrice(3.0, 15.0, 0.3, 3.75, 6.0)
    # 50 written, of which 50 (not 80) for an hour: 50 x 3 + 50 x 6
    assert price.cost(100, 0, 0, 50, 80) == Decimal("0.00045")


def test_a_five_number_price_tuple_names_the_one_hour_write_price() -> None:
    usage = TokenUsage(1_000, 0, 1_000, cache_write=1_000, cache_write_1h=1_000)
    calls = trace_cost(
        Trace([model_span(usage, "mine")]), {"mine": (1.0, 2.0, 0.1, 1.25, 2.0)}, "call"
    )
    assert calls["cost"].tolist() == [pytest.approx(0.002)]


def test_a_run_without_reasoning_shows_no_reasoning_column() -> None:
    trace = Trace([model_span(TokenUsage(10, 5, 15))])
    assert "reasoning_tokens" not in trace.token_usage().columns
    assert "reasoning_tokens" not in trace.token_usage("spawn").columns
    assert trace.to_dataframe()["reasoning_tokens"].tolist() == [0]
    view = build_view(trace)
    assert "reasoning" not in view["columns"]
    assert "reasoning" not in trace.to_html()


def agent(sid: str = "main") -> Span:
    return Span(sid, None, "agent", "main", "main", 0, 0.0, None, "running")


def call(sid: str, usage: TokenUsage) -> Span:
    return Span(sid, "main", "model", "Chat", "main", 1, 0.1, 0.2, "ok", usage=usage, model="o3")


def test_the_live_table_gains_the_column_when_reasoning_first_appears() -> None:
    trace = Trace([agent(), call("m1", TokenUsage(10, 5, 15))])
    builder = ViewBuilder(trace)
    builder.update()
    assert "reasoning" not in builder.view()["columns"]
    trace.add(call("m2", TokenUsage(10, 50, 60, reasoning=40)))
    changes = builder.update()
    assert changes.columns
    view = builder.view()
    at = view["columns"].index("reasoning")
    assert view["columns"][at - 1] == "out"
    (row,) = view["agent_rows"]
    assert len(row["cells"]) == len(view["columns"])
    assert row["cells"][at] == "40"
    assert view["totals"][at] == "40"
    patch = builder.patch(changes)
    assert patch.get("columns") == view["columns"]
