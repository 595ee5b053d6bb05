"""What model calls cost: price tables, the maintained table (genai-prices, the ``cost`` extra),
and :class:`Cost`. Below tracing and the sub-agents: cost limits and
``Trace.token_usage(cost=True)`` price with :func:`default_prices`, as the views do."""

from nbagents.cost._genai_prices import GenaiPrices
from nbagents.cost._prices import (
    BUILTIN_PRICES,
    BUILTIN_PRICES_DATE,
    Cost,
    ModelPrice,
    Prices,
    PriceSource,
    PriceTable,
    as_price_source,
    default_prices,
)

__all__ = [
    "BUILTIN_PRICES",
    "BUILTIN_PRICES_DATE",
    "Cost",
    "GenaiPrices",
    "ModelPrice",
    "PriceSource",
    "PriceTable",
    "Prices",
    "as_price_source",
    "default_prices",
]
