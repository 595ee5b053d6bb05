"""Beyond the notebook: OpenTelemetry export of a ``Trace``, and what its model calls cost
(re-exported from :mod:`nbagents.cost` and :mod:`nbagents.tracing.cost`).

Cost needs nothing extra; the ``cost`` extra (``pip install "jupyter-nbagents[cost]"``) brings
the maintained price table, genai-prices, which then prices calls by default. OpenTelemetry
export needs the ``otel`` extra (``pip install "jupyter-nbagents[otel]"``): the official
``opentelemetry-sdk`` and the OTLP/HTTP exporter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.cost import (
    BUILTIN_PRICES,
    BUILTIN_PRICES_DATE,
    Cost,
    GenaiPrices,
    ModelPrice,
    PriceSource,
    PriceTable,
    default_prices,
)
from nbagents.tracing.cost import span_cost, total_cost, trace_cost

if TYPE_CHECKING:
    from nbagents.export._export import (
        ExportError,
        ExportTarget,
        LiveExport,
        export_trace,
        to_otel_spans,
    )

__all__ = [
    "BUILTIN_PRICES",
    "BUILTIN_PRICES_DATE",
    "Cost",
    "ExportError",
    "ExportTarget",
    "GenaiPrices",
    "LiveExport",
    "ModelPrice",
    "PriceSource",
    "PriceTable",
    "default_prices",
    "export_trace",
    "span_cost",
    "to_otel_spans",
    "total_cost",
    "trace_cost",
]


def __getattr__(name: str) -> Any:
    # The OpenTelemetry SDK is an optional extra: import it only when an export name is used,
    # so cost works without it and a missing SDK is reported with the command that fixes it.
    if name not in __all__:  # the names of __all__ not imported above are the export's
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from nbagents.export import _export
    except ImportError as error:
        raise ImportError(
            f"nbagents.export.{name} needs the OpenTelemetry SDK: "
            f"pip install 'jupyter-nbagents[otel]' ({error})."
        ) from error
    return getattr(_export, name)
