"""What OpenTelemetry export costs, next to what recording the same run cost.

One run of N parallel sub-agents (each a tool call and two model turns; N=1100 gives about
10,000 spans) is recorded with nbagents' ``Tracer``. Then the finished trace is converted to
OpenTelemetry spans, handed to the SDK's in-memory exporter, and encoded as the OTLP protobuf
request an OTLP exporter would send (no network). Separately, the run is recorded again with a
``LiveExport`` streaming every span as it ends. Figures are medians of ``--repeat`` runs.

    python benchmarks/bench_export.py [-n 1100] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

from _fanout import fanout_agent
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from nbagents import Trace, Tracer
from nbagents.export import LiveExport, export_trace, to_otel_spans


def record(agent: Any, live: bool = False) -> tuple[float, Trace, int]:
    tracer = Tracer()
    exporter = InMemorySpanExporter()
    stream = LiveExport(tracer.trace, exporter) if live else None
    start = time.perf_counter()
    agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    if stream is not None:
        stream.close()
    elapsed = time.perf_counter() - start
    return elapsed, tracer.trace, len(exporter.get_finished_spans())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=1100, help="parallel sub-agents")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    agent = fanout_agent(args.n)

    rec, conv, exp, enc, live = [], [], [], [], []
    trace = Trace()
    exported = streamed = 0
    for _ in range(args.repeat):
        seconds, trace, _ = record(agent)
        rec.append(seconds)
        t0 = time.perf_counter()
        spans = to_otel_spans(trace)
        conv.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        exported = len(export_trace(trace, InMemorySpanExporter()))
        exp.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        encode_spans(spans).SerializeToString()
        enc.append(time.perf_counter() - t0)
        seconds, _, streamed = record(agent, live=True)
        live.append(seconds)

    m = statistics.median
    print(f"{args.n} parallel sub-agents: {len(trace)} spans recorded, {exported} exported")
    print(f"  record the run (Tracer)              {m(rec):7.3f} s")
    print(
        f"  to_otel_spans                        {m(conv):7.3f} s  ({m(conv) / m(rec):.2f}x record)"
    )
    print(
        f"  export_trace, in-memory exporter     {m(exp):7.3f} s  ({m(exp) / m(rec):.2f}x record)"
    )
    print(f"  OTLP protobuf encoding of the spans  {m(enc):7.3f} s")
    print(f"  record with LiveExport streaming     {m(live):7.3f} s  ({streamed} spans streamed)")


if __name__ == "__main__":
    main()
