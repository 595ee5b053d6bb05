"""Send a trace to OpenTelemetry: all at once when it is finished, or span by span while it runs."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from nbagents.cost import Prices, as_price_source
from nbagents.export._convert import SpanConverter
from nbagents.tracing import Span, Trace

__all__ = ["ExportError", "ExportTarget", "LiveExport", "export_trace", "to_otel_spans"]

ExportTarget = SpanExporter | SpanProcessor | SdkTracerProvider
"""Where spans go: any SDK exporter (OTLP HTTP/gRPC, console, in-memory), a span processor
(e.g. a ``BatchSpanProcessor``), or an SDK ``TracerProvider`` (its processors get the spans)."""

_NANOS = 1_000_000_000
_BATCH = 512
"""Spans per ``export`` call: the SDK's own batch size, well under receivers' request limits."""


class ExportError(RuntimeError):
    """The exporter reported that it could not deliver the spans."""


def to_otel_spans(
    trace: Trace,
    *,
    start_time_unix_nano: int | None = None,
    resource: Resource | None = None,
    prices: Prices | None = None,
    include_content: bool = False,
) -> list[ReadableSpan]:
    """The trace's exported spans (hidden plumbing left out), depth first in call order.

    ``start_time_unix_nano`` is the wall-clock time of the trace's second 0; by default the
    trace is taken to have ended now. ``prices`` (a ``PriceTable`` or a mapping) adds cost
    attributes; ``include_content`` adds the spans' inputs and outputs as JSON (off by default:
    prompts and tool results often hold what should not leave the notebook).
    """
    origin = start_time_unix_nano
    if origin is None:
        origin = time.time_ns() - round(trace.duration * _NANOS)
    converter = SpanConverter(trace, origin, resource, prices, include_content)
    end = trace.duration
    return [converter.convert(s, end=end) for s in trace.walk() if not s.hidden]


def export_trace(
    trace: Trace,
    target: ExportTarget,
    *,
    start_time_unix_nano: int | None = None,
    resource: Resource | None = None,
    prices: Prices | None = None,
    include_content: bool = False,
) -> list[ReadableSpan]:
    """Send a recorded trace to ``target`` and return the spans sent.

    Parents, children and times are the recorded ones; ids are derived from the nbagents ids,
    so exporting the same trace twice sends the same trace and span ids. An exporter gets them
    in ``export`` calls of at most 512 spans, and a failure raises :class:`ExportError`; a
    processor or provider gets them through ``on_end`` (its ``force_flush`` sends them).
    A ``TracerProvider``'s resource is used unless ``resource`` is given.
    """
    spans = to_otel_spans(
        trace,
        start_time_unix_nano=start_time_unix_nano,
        resource=resource or _resource_of(target),
        prices=prices,
        include_content=include_content,
    )
    _deliver(target)(spans)
    return spans


class LiveExport:
    """Streams a recording trace: each span is sent soon after it ends.

    >>> with nbagents.trace() as t:                  # doctest: +SKIP
    ...     with LiveExport(t, BatchSpanProcessor(OTLPSpanExporter())):
    ...         agent.invoke(...)

    The listener on the trace only wakes a background thread, which collects the spans that
    ended and sends them, at most every ``interval`` seconds: the agent's threads never convert
    or send, so streaming does not slow the run. A parent ends after its children, so backends
    receive children first and link them when the parent arrives (OpenTelemetry allows this;
    the ids are fixed from the start). Spans already finished when the stream began go out at
    once. ``flush()`` sends what has ended now; ``close()`` stops, sends spans still running as
    ending then (marked ``nbagents.status=running``) unless ``send_unfinished=False``, and
    flushes the target. The wall clock of second 0 is read when the first span is seen, unless
    ``start_time_unix_nano`` is given.
    """

    def __init__(
        self,
        trace: Trace,
        target: ExportTarget,
        *,
        start_time_unix_nano: int | None = None,
        resource: Resource | None = None,
        prices: Prices | None = None,
        include_content: bool = False,
        interval: float = 0.05,
    ) -> None:
        self.trace = trace
        self.interval = interval
        self._deliver = _deliver(target)
        self._target = target
        prices = None if prices is None else as_price_source(prices)  # a wrong type fails here
        self._settings = (resource or _resource_of(target), prices, include_content)
        self._origin = start_time_unix_nano
        self._converter: SpanConverter | None = None
        self._lock = threading.Lock()
        self._seen = 0
        self._pending: dict[str, Span] = {}
        self.exported = 0
        """How many spans have been sent so far."""
        self._closed = False
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nbagents-live-export", daemon=True)
        self._thread.start()
        self._unsubscribe: Callable[[], None] = trace.subscribe(self._on_change)
        self._on_change(trace)

    def _on_change(self, trace: Trace) -> None:
        if self._origin is None:
            self._take_origin()
        self._wake.set()

    def _take_origin(self) -> None:
        # Second 0 on the wall clock: now, minus the latest time the trace has reached. Read
        # in the notifying thread, so it is not late by the background thread's wait; without
        # our lock, so a notifier never waits for a send (two racing readings agree closely).
        spans = self.trace.spans
        if spans:
            latest = max(max(s.start, s.end or 0.0) for s in spans)
            origin = time.time_ns() - round(latest * _NANOS)
            if self._origin is None:
                self._origin = origin

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.flush()
            except Exception:  # those spans are lost, but the stream goes on with the next
                logging.getLogger("nbagents").exception("LiveExport could not send spans")
            # Coalesce a burst of changes (a fan-out ends many spans at once) into one send.
            self._stop.wait(self.interval)

    def flush(self) -> int:
        """Send the spans that have ended and were not sent yet; returns how many."""
        with self._lock:
            if self._closed:
                return 0
            spans = self._ready_spans()
        return self._send(spans)

    def _ready_spans(self, *, unfinished: bool = False) -> list[ReadableSpan]:
        # The trace's lock makes a span's end and status one consistent reading. Only the new
        # tail of the trace and the still-running spans need a look: spans are only appended.
        with self.trace.lock:
            fresh = self.trace.spans_from(self._seen)
            self._seen += len(fresh)
            self._pending.update((s.id, s) for s in fresh if not s.hidden)
            ready = [s for s in self._pending.values() if s.end is not None]
            for span in ready:
                del self._pending[span.id]
            if unfinished:
                ready += list(self._pending.values())
                self._pending.clear()
            if not ready:
                return []
            # In the order they ended, as if each had been sent the moment it ended.
            ready.sort(key=lambda s: (s.end is None, s.end or 0.0))
            if self._converter is None:
                self._take_origin()  # there are spans to send, so the trace has spans
                assert self._origin is not None
                self._converter = SpanConverter(self.trace, self._origin, *self._settings)
            end = self.trace.duration
            return [self._converter.convert(s, end=end) for s in ready]

    def _send(self, spans: list[ReadableSpan]) -> int:
        if spans:
            self._deliver(spans)
            with self._lock:
                self.exported += len(spans)
        return len(spans)

    def close(self, *, send_unfinished: bool = True) -> None:
        """Stop streaming, send what is left, and flush the target if it can be flushed."""
        self._unsubscribe()
        self._stop.set()
        self._wake.set()
        self._thread.join()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            spans = self._ready_spans(unfinished=send_unfinished)
        self._send(spans)
        flush = getattr(self._target, "force_flush", None)
        if callable(flush):
            flush()

    def __enter__(self) -> LiveExport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resource_of(target: ExportTarget) -> Resource | None:
    return target.resource if isinstance(target, SdkTracerProvider) else None


def _deliver(target: ExportTarget) -> Callable[[list[ReadableSpan]], None]:
    if isinstance(target, SpanExporter):
        exporter = target

        def export(spans: list[ReadableSpan]) -> None:
            for first in range(0, len(spans), _BATCH):
                batch = spans[first : first + _BATCH]
                result = exporter.export(batch)
                if result is not SpanExportResult.SUCCESS:
                    raise ExportError(
                        f"{type(exporter).__name__} could not export {len(batch)} span(s) "
                        f"({first} of {len(spans)} were sent before): {result}."
                    )

        return export
    if isinstance(target, SdkTracerProvider):
        # The SDK keeps a provider's processors private; its multi-processor is the one object
        # that forwards a finished span to every processor the user added.
        target = target._active_span_processor
    if isinstance(target, SpanProcessor):
        processor = target

        def process(spans: list[ReadableSpan]) -> None:
            for span in spans:
                processor.on_end(span)

        return process
    raise TypeError(
        "export target must be an OpenTelemetry SDK SpanExporter, SpanProcessor or "
        f"TracerProvider, not {type(target).__name__}."
    )
