"""Where prices come from: the maintained table (genai-prices), user tables over it, cache writes.

Amounts are computed by hand from the providers' published prices per million tokens, written
in each test, so a wrong lookup or a token class billed at the wrong rate shows as a number.
"""

from __future__ import annotations

import sys
from decimal import Decimal

import pytest
from langchain_core.messages import AIMessage
from support.export_scenario import run

from nbagents import Trace
from nbagents.export import (
    BUILTIN_PRICES,
    GenaiPrices,
    ModelPrice,
    PriceTable,
    default_prices,
    to_otel_spans,
    total_cost,
    trace_cost,
)
from nbagents.tracing import Span, TokenUsage

# Claude Sonnet 4.5, USD per million tokens: input 3, output 15, cache read 0.30, cache write 3.75.
SONNET = "claude-sonnet-4-5-20250929"
SONNET_CALL = TokenUsage(
    input=10_000, output=500, total=10_500, cache_read=2_000, cache_write=1_000
)
# 7,000 plain input * 3 + 2,000 read * 0.30 + 1,000 written * 3.75 + 500 output * 15
SONNET_COST = (
    Decimal(7_000) * 3
    + Decimal(2_000) * Decimal("0.30")
    + Decimal(1_000) * Decimal("3.75")
    + Decimal(500) * 15
) / 1_000_000  # = 0.03285


def test_the_maintained_table_prices_cache_reads_and_writes_at_their_own_rates() -> None:
    prices = GenaiPrices()
    assert prices.price_of(SONNET, SONNET_CALL) == SONNET_COST
    # The provider may be named in the model string, either way LangChain users write it.
    assert prices.price_of("anthropic:claude-sonnet-4-5", SONNET_CALL) == SONNET_COST
    # gpt-4o: input 2.50, output 10 per million.
    assert prices.price_of("gpt-4o-2024-08-06", TokenUsage(1_000, 100)) == Decimal("0.0035")
    assert prices.price_of("scripted-model", TokenUsage(1_000, 100)) is None
    assert prices.price_of(None, TokenUsage(1_000, 100)) is None
    assert "genai-prices" in repr(prices)


def test_a_model_price_bills_cache_writes_at_the_write_rate_or_as_input() -> None:
    price = ModelPrice(3.0, 15.0, cache_read=0.3, cache_write=3.75)
    assert price.cost(10_000, 500, 2_000, 1_000) == SONNET_COST
    # Without a write price, written tokens are plain input: 8,000 * 3 + 2,000 * 0.3 + 500 * 15.
    assert ModelPrice(3.0, 15.0, 0.3).cost(10_000, 500, 2_000, 1_000) == Decimal("0.0321")
    assert PriceTable({"m": (3.0, 15.0, 0.3, 3.75)})["m"] == price


def test_default_prices_are_the_maintained_table_and_fall_back_without_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert isinstance(default_prices(), GenaiPrices)
    assert default_prices() is default_prices()  # loaded once per process
    monkeypatch.setitem(sys.modules, "genai_prices", None)  # as if not installed
    default_prices.cache_clear()
    try:
        assert default_prices() is BUILTIN_PRICES
    finally:
        default_prices.cache_clear()


def test_a_user_table_is_used_alone_unless_it_falls_back() -> None:
    calls = [
        Span(
            "m1", None, "model", "Chat", "main", 0, 0.0, 1.0, "ok", usage=SONNET_CALL, model=SONNET
        ),
        Span(
            "m2",
            None,
            "model",
            "Chat",
            "main",
            0,
            1.0,
            2.0,
            "ok",
            usage=TokenUsage(10, 10, 20),
            model="my-finetune",
        ),
    ]
    trace = Trace(calls)
    mine = {"my-finetune": (1.0, 2.0)}
    alone = total_cost(trace, mine)
    assert alone.unknown == {SONNET}
    chained = total_cost(trace, PriceTable(mine, fallback=GenaiPrices()))
    assert chained.known
    assert chained.amount == SONNET_COST + Decimal(10 * 1 + 10 * 2) / 1_000_000
    # Overriding a model the maintained table knows: the user's price wins.
    override = PriceTable({SONNET: (1.0, 1.0)}, fallback=GenaiPrices())
    assert total_cost(Trace(calls[:1]), override).amount == Decimal(10_500) / 1_000_000


def test_token_usage_with_cost_is_trace_cost() -> None:
    trace, _ = run(latency=0.0)
    prices = {"scripted-model": (0.5, 4.0)}
    with_cost = trace.token_usage(prices=prices)
    assert with_cost.equals(trace_cost(trace, prices))
    assert {"cost", "cost_incl_descendants", "unknown_models"} <= set(with_cost.columns)
    per_spawn = trace.token_usage("spawn", prices=prices)
    assert len(per_spawn) == len(trace.subagents) + 1
    # cost=True uses the default table, which does not know the scripted model: unknown, not 0.
    unknown = trace.token_usage(cost=True)
    assert unknown["cost"].isna().all()
    assert set(unknown["unknown_models"]) == {"scripted-model"}
    assert "cost" not in trace.token_usage().columns


def test_a_recorded_cache_write_reaches_the_span_the_frames_and_the_export() -> None:
    message = AIMessage(
        "hi",
        usage_metadata={
            "input_tokens": 10_000,
            "output_tokens": 500,
            "total_tokens": 10_500,
            "input_token_details": {"cache_read": 2_000, "cache_creation": 1_000},
        },
    )
    usage = TokenUsage.from_messages([message])
    assert usage == SONNET_CALL
    span = Span("m", None, "model", "Chat", "main", 0, 0.0, 1.0, "ok", usage=usage, model=SONNET)
    trace = Trace.from_json(Trace([span]).to_json())  # survives the file format
    assert trace.get("m").usage.cache_write == 1_000
    assert trace.to_dataframe()["cache_write_tokens"].tolist() == [1_000]
    calls = trace_cost(trace, per="call")
    assert calls["cache_write_tokens"].tolist() == [1_000]
    assert calls["cost"].tolist() == [float(SONNET_COST)]
    (exported,) = to_otel_spans(trace)
    assert exported.attributes is not None
    assert exported.attributes["gen_ai.usage.cache_creation.input_tokens"] == 1_000
    assert exported.attributes["gen_ai.usage.cache_read.input_tokens"] == 2_000


def test_bad_prices_say_what_prices_look_like() -> None:
    with pytest.raises(TypeError, match="PriceTable, another PriceSource or a mapping"):
        trace_cost(Trace([]), prices=[("gpt-4o", 1.0)])  # type: ignore[arg-type]
