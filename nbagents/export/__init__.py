"""Beyond the notebook: OpenTelemetry export of a ``Trace``, and what its model calls cost.

Cost needs nothing extra. OpenTelemetry export needs the ``otel`` extra
(``pip install "nbagents[otel]"``): the official ``opentelemetry-sdk`` and the OTLP/HTTP exporter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.export._cost import Cost, span_cost, total_cost, trace_cost
from nbagents.export._prices import BUILTIN_PRICES, BUILTIN_PRICES_DATE, ModelPrice, PriceTable

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
    "LiveExport",
    "ModelPrice",
    "PriceTable",
    "export_trace",
    "span_cost",
    "to_otel_spans",
    "total_cost",
    "trace_cost",
]

_OTEL_NAMES = {"ExportError", "ExportTarget", "LiveExport", "export_trace", "to_otel_spans"}


def __getattr__(name: str) -> Any:
    # The OpenTelemetry SDK is an optional extra: import it only when an export name is used,
    # so cost works without it and a missing SDK is reported with the command that fixes it.
    if name not in _OTEL_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        from nbagents.export import _export
    except ImportError as error:
        raise ImportError(
            f"nbagents.export.{name} needs the OpenTelemetry SDK: pip install 'nbagents[otel]' "
            f"({error})."
        ) from error
    return getattr(_export, name)
