"""What a trace cost: per model call, per agent (own and including descendants), in total.

Prices come from :mod:`nbagents.cost`; ``Trace.token_usage(cost=True)`` calls :func:`trace_cost`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from nbagents.cost import Cost, Prices, PriceSource, as_price_source
from nbagents.tracing.model import Span, TokenUsage, Trace

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["cost_of_spans", "priced_call", "span_cost", "total_cost", "trace_cost"]


def span_cost(span: Span, prices: Prices | None = None) -> Cost:
    """The cost of one model call (a zero, known cost for any other kind of span).

    A model call that used no tokens costs nothing even when its model is unknown.
    """
    if span.kind != "model" or not span.usage:
        return Cost()
    return priced_call(span, as_price_source(prices))


def priced_call(span: Span, table: PriceSource) -> Cost:
    """The cost of a model call that used tokens, from a resolved price source (what
    :func:`span_cost` does after its checks; a view pricing thousands of calls skips them)."""
    amount = table.price_of(span.model, span.usage)
    if amount is None:
        return Cost(unknown=frozenset({span.model or f"<no model name: {span.name}>"}))
    return Cost(amount)


def cost_of_spans(spans: Iterable[Span], prices: Prices | None = None) -> Cost:
    table = as_price_source(prices)
    return sum((span_cost(span, table) for span in spans), Cost())


def trace_cost(
    trace: Trace,
    prices: Prices | None = None,
    per: Literal["agent", "spawn", "call"] = "agent",
) -> pd.DataFrame:
    """``trace.token_usage(per)`` with cost columns, or one row per model call (``per="call"``).

    Columns added: ``cost`` (the agent's own calls), ``cost_incl_descendants`` (with every
    sub-agent it spawned, recursively; per agent type, each call counted once even when the
    type delegates to itself) and ``unknown_models``. A cost is missing (NaN), never
    0, when a model in its scope is not in the price table; ``unknown_models`` says which.
    ``prices`` defaults to :func:`default_prices` (genai-prices' maintained table with the
    ``cost`` extra); a ``PriceTable``, or a mapping of model name to ``ModelPrice`` or
    ``(input, output[, cache_read[, cache_write]])`` per million tokens, is used alone.
    """
    table = as_price_source(prices)
    if per == "call":
        return _per_call(trace, table)
    if per not in ("agent", "spawn"):
        raise ValueError(f"per must be 'agent', 'spawn' or 'call', got {per!r}.")
    import pandas as pd

    from nbagents.tracing._frames import inside_same_agent

    frame = trace.token_usage(per="spawn")
    if frame.empty:
        return frame.assign(cost=[], cost_incl_descendants=[], unknown_models=[])
    spans = [trace.get(str(span_id)) for span_id in frame["span_id"]]
    own = [cost_of_spans(trace.own_model_spans(s), table) for s in spans]
    total = [
        cost_of_spans((d for d in trace.descendants(s) if d.kind == "model"), table) for s in spans
    ]
    if per == "agent":
        # Grouped exactly as token_usage() groups its rows (agent name and role, first seen
        # first), with the sums kept in Decimal until the end so they are exact. A spawn inside
        # another of its own type is already in that one's total: only the outer one's is added.
        nested = inside_same_agent(trace, frame)
        total = [Cost() if inside else t for t, inside in zip(total, nested, strict=True)]
        costs = {"agent": frame["agent"], "role": frame["role"], "own": own, "total": total}
        sums = pd.DataFrame(costs).groupby(["agent", "role"], sort=False).sum()
        frame, own, total = trace.token_usage(per="agent"), list(sums["own"]), list(sums["total"])
    return frame.assign(
        cost=[_cell(c) for c in own],
        cost_incl_descendants=[_cell(c) for c in total],
        unknown_models=[_names(o + t) for o, t in zip(own, total, strict=True)],
    )


def _per_call(trace: Trace, table: PriceSource) -> pd.DataFrame:
    import pandas as pd

    from nbagents.tracing._frames import token_cells

    calls = [(span, span_cost(span, table)) for span in trace.walk() if span.kind == "model"]
    rows = [
        {
            "agent": span.agent,
            "model": span.model,
            **token_cells(span.usage),
            "cost": _cell(cost),
            "unknown_models": _names(cost),
            "span_id": span.id,
        }
        for span, cost in calls
    ]
    columns = ["agent", "model", *token_cells(TokenUsage()), "cost", "unknown_models", "span_id"]
    columns.remove("total_tokens")  # not one of the columns
    return pd.DataFrame(rows, columns=columns)


def _cell(cost: Cost) -> float:
    return float(cost.amount) if cost.known else math.nan


def _names(cost: Cost) -> str:
    return ", ".join(sorted(cost.unknown))


def total_cost(trace: Trace, prices: Prices | None = None) -> Cost:
    """Every model call of the trace."""
    return cost_of_spans((s for s in trace.spans if s.kind == "model"), prices)
