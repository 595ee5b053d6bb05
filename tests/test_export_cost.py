"""Cost: prices per model, per call, per agent (own and including descendants), in total.

Expected amounts are computed by hand below, in Decimal, from the prices and tokens written
in each test; a model missing from the table must show as unknown (NaN plus its name), never 0.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest
from support.export_scenario import run

from nbagents import Span, Trace
from nbagents.export import (
    BUILTIN_PRICES,
    BUILTIN_PRICES_DATE,
    Cost,
    ModelPrice,
    PriceTable,
    span_cost,
    to_otel_spans,
    total_cost,
    trace_cost,
)
from nbagents.tracing import TokenUsage

# -- prices ---------------------------------------------------------------------------------------


def test_a_call_costs_input_cached_input_and_output_at_their_prices() -> None:
    price = ModelPrice(input=2.5, output=10, cache_read=1.25)
    # 1000 input tokens of which 400 from the cache, 200 output tokens:
    # (600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6 = 4000 / 1e6
    assert price.cost(1000, 200, 400) == Decimal("0.004")
    # Without a cache price, cached tokens are billed as input.
    assert ModelPrice(0.15, 0.6).cost(1000, 200, 400) == Decimal("0.00027")


def test_lookup_by_exact_dated_and_provider_prefixed_names() -> None:
    table = PriceTable({"gpt-4o": (2.5, 10.0, 1.25), "gpt-4o-mini": (0.15, 0.6)})
    assert table.lookup("gpt-4o") == ModelPrice(2.5, 10.0, 1.25)
    assert table.lookup("gpt-4o-2024-08-06") == ModelPrice(2.5, 10.0, 1.25)
    assert table.lookup("gpt-4o-mini-2024-07-18") == ModelPrice(0.15, 0.6)
    assert table.lookup("openai:gpt-4o-mini") == ModelPrice(0.15, 0.6)
    assert table.lookup("openai/gpt-4o") == ModelPrice(2.5, 10.0, 1.25)
    assert table.lookup("gpt-4o-latest") == ModelPrice(2.5, 10.0, 1.25)
    assert table.lookup("gpt-4") is None  # a prefix of a key is not that key
    assert table.lookup("gpt-4omni") is None
    # Other suffixes are other models at other prices: unknown, not the family's price.
    assert table.lookup("gpt-4o-audio-preview") is None
    assert BUILTIN_PRICES.lookup("o3-mini") is None
    assert BUILTIN_PRICES.lookup("claude-opus-4-5-20251101") is None
    assert BUILTIN_PRICES.lookup("claude-opus-4-1-20250805") == ModelPrice(
        15.0, 75.0, 1.5, 18.75, 30.0
    )
    assert table.lookup(None) is None


def test_user_prices_override_and_extend_the_builtin_table() -> None:
    table = BUILTIN_PRICES.with_prices({"gpt-4o": ModelPrice(1, 1), "my-model": (3, 4)})
    assert table.lookup("gpt-4o-2024-08-06") == ModelPrice(1, 1)
    assert table.lookup("my-model") == ModelPrice(3, 4)
    assert table.lookup("claude-sonnet-4-20250514") == BUILTIN_PRICES["claude-sonnet-4"]
    assert BUILTIN_PRICES.lookup("gpt-4o") == ModelPrice(2.5, 10.0, 1.25)  # unchanged
    assert re.fullmatch(r"\d{4}-\d{2}", BUILTIN_PRICES_DATE)  # the table says when it was true
    with pytest.raises(TypeError, match="'bad' must be a ModelPrice or a tuple"):
        PriceTable({"bad": (1,)})


# -- a hand-made trace ----------------------------------------------------------------------------


def model(
    sid: str,
    parent: str,
    agent: str,
    name: str | None,
    inp: int,
    out: int,
    cached: int = 0,
    start: float = 0.0,
) -> Span:
    return Span(
        sid,
        parent,
        "model",
        "Chat",
        agent,
        0,
        start,
        start + 0.5,
        status="ok",
        usage=TokenUsage(inp, out, inp + out, cached),
        model=name,
    )


def spans() -> list[Span]:
    return [
        Span("main", None, "agent", "main", "main", 0, 0.0, 10.0, status="ok"),
        Span("node", "main", "chain", "model", "main", 0, 0.0, 1.0, status="ok", hidden=True),
        model("m1", "node", "main", "big", 1_000_000, 100_000, cached=500_000),
        Span(
            "task1",
            "main",
            "task",
            "task",
            "main",
            0,
            1.0,
            8.0,
            status="ok",
            attributes={"description": "dig", "subagent_type": "digger"},
        ),
        Span(
            "sub1",
            "task1",
            "subagent",
            "digger",
            "digger",
            1,
            1.0,
            8.0,
            status="ok",
            attributes={"description": "dig"},
        ),
        model("m2", "sub1", "digger", "small", 200_000, 10_000, start=1.5),
        Span(
            "task2",
            "sub1",
            "task",
            "task",
            "digger",
            1,
            2.0,
            7.0,
            status="ok",
            attributes={"description": "deeper", "subagent_type": "digger"},
        ),
        Span(
            "sub2",
            "task2",
            "subagent",
            "digger",
            "digger",
            2,
            2.0,
            7.0,
            status="ok",
            attributes={"description": "deeper"},
        ),
        model("m3", "sub2", "digger", "small", 300_000, 20_000, start=2.5),
        model("m4", "main", "main", "big", 2_000_000, 0, start=9.0),
    ]


PRICES = {"big": ModelPrice(3.0, 15.0, 0.3), "small": ModelPrice(0.25, 1.25)}
# By hand, in dollars:
M1 = (
    Decimal("1.5") + Decimal("0.15") + Decimal("1.5")
)  # 500k in * 3 + 500k cached * .3 + 100k out * 15
M2 = Decimal("0.05") + Decimal("0.0125")  # 200k * .25 + 10k * 1.25
M3 = Decimal("0.075") + Decimal("0.025")  # 300k * .25 + 20k * 1.25
M4 = Decimal("6")  # 2M * 3


def test_cost_per_agent_own_and_including_descendants() -> None:
    trace = Trace(spans())
    frame = trace_cost(trace, PRICES)
    usage = trace.token_usage()
    # The rows and token columns are token_usage()'s; cost columns are added.
    pd.testing.assert_frame_equal(frame[usage.columns], usage)
    rows = {(r.agent, r.role): r for r in frame.itertuples()}
    assert rows["main", "main"].cost == float(M1 + M4)
    assert rows["main", "main"].cost_incl_descendants == float(M1 + M2 + M3 + M4)
    # Both spawns of "digger" in one row: own costs add up; the nested spawn is already in its
    # parent's total, so the row's total counts it once.
    assert rows["digger", "subagent"].cost == float(M2 + M3)
    assert rows["digger", "subagent"].cost_incl_descendants == float(M2 + M3)
    assert usage.set_index("agent").loc["digger", "total_tokens_incl_descendants"] == 530_000
    assert set(frame["unknown_models"]) == {""}
    assert total_cost(trace, PRICES) == Cost(M1 + M2 + M3 + M4)


def test_cost_per_spawn_and_per_call() -> None:
    trace = Trace(spans())
    spawn = trace_cost(trace, PRICES, per="spawn")
    assert list(spawn["span_id"]) == ["main", "sub1", "sub2"]
    assert list(spawn["cost"]) == [float(M1 + M4), float(M2), float(M3)]
    assert list(spawn["cost_incl_descendants"]) == [
        float(M1 + M2 + M3 + M4),
        float(M2 + M3),
        float(M3),
    ]
    calls = trace_cost(trace, PRICES, per="call")
    assert list(calls["span_id"]) == ["m1", "m2", "m3", "m4"]
    assert list(calls["cost"]) == [float(M1), float(M2), float(M3), float(M4)]
    assert list(calls["cache_read_tokens"]) == [500_000, 0, 0, 0]


def test_an_unknown_model_is_unknown_not_free() -> None:
    trace = Trace(spans())
    prices = {"big": PRICES["big"]}  # "small" missing
    frame = trace_cost(trace, prices)
    rows = {(r.agent, r.role): r for r in frame.itertuples()}
    assert rows["main", "main"].cost == float(M1 + M4)  # its own calls are all priced
    assert math.isnan(rows["main", "main"].cost_incl_descendants)
    assert rows["main", "main"].unknown_models == "small"
    assert math.isnan(rows["digger", "subagent"].cost)
    assert total_cost(trace, prices) == Cost(M1 + M4, frozenset({"small"}))
    assert total_cost(trace, prices).value() is None
    calls = trace_cost(trace, prices, per="call")
    assert list(calls["unknown_models"]) == ["", "small", "small", ""]
    # A call that used no tokens costs nothing, priced or not; a call without a model name is
    # unknown under a name that says so.
    assert span_cost(model("z", "main", "main", "nope", 0, 0), prices) == Cost()
    assert span_cost(model("n", "main", "main", None, 5, 5), prices).unknown == {
        "<no model name: Chat>"
    }


def exported_attributes(trace: Trace, prices: Any) -> dict[str, dict[str, Any]]:
    return {
        str(attrs["nbagents.span_id"]): dict(attrs)
        for attrs in (s.attributes or {} for s in to_otel_spans(trace, prices=prices))
    }


def test_cost_attributes_on_exported_spans() -> None:
    trace = Trace(spans())
    exported = {
        s.attributes["nbagents.span_id"]: s.attributes for s in to_otel_spans(trace, prices=PRICES)
    }
    assert exported["m1"]["nbagents.cost"] == float(M1)
    assert exported["main"]["nbagents.cost"] == float(M1 + M4)
    assert exported["main"]["nbagents.cost_incl_descendants"] == float(M1 + M2 + M3 + M4)
    assert exported["sub1"]["nbagents.cost_incl_descendants"] == float(M2 + M3)
    assert "nbagents.cost" not in exported["task1"]
    partial = {
        s.attributes["nbagents.span_id"]: s.attributes
        for s in to_otel_spans(trace, prices={"big": PRICES["big"]})
    }
    assert partial["m2"]["nbagents.cost.unknown_models"] == ["small"]
    assert "nbagents.cost_incl_descendants" not in partial["main"]
    plain = to_otel_spans(trace)
    assert not any(k.startswith("nbagents.cost") for s in plain for k in (s.attributes or {}))


# -- a real run -----------------------------------------------------------------------------------


def test_cost_of_a_real_run_matches_its_tokens_times_the_price() -> None:
    trace, reported = run(latency=0.0)
    frame = trace_cost(trace, {"scripted-model": (0.5, 4.0)})
    for row in frame.itertuples():
        expected = (
            Decimal(int(row.input_tokens)) * Decimal("0.5")
            + Decimal(int(row.output_tokens)) * Decimal(4)
        ) / Decimal(1_000_000)
        assert row.cost == float(expected)
    total = sum(reported.input.values()) * Decimal("0.5") + sum(reported.output.values()) * 4
    assert total_cost(trace, {"scripted-model": (0.5, 4.0)}) == Cost(total / Decimal(1_000_000))
    main: Any = frame[frame["role"] == "main"].iloc[0]
    assert main["cost_incl_descendants"] == float(total / Decimal(1_000_000))
    # The built-in table does not know the scripted model: unknown everywhere, never 0.
    unknown = trace_cost(trace)
    assert unknown["cost"].isna().all()
    assert set(unknown["unknown_models"]) == {"scripted-model"}
