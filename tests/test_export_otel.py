"""OpenTelemetry export of a Trace, read back from the SDK's in-memory exporter.

The tree, names, GenAI attributes, times and tokens of a real run with parallel and nested
sub-agents; errors, interrupts and hidden plumbing on hand-made traces; a property check of
parent links over random traces; live streaming against the one-shot export.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from support.export_scenario import (
    EXPECTED_TREE,
    arun,
    assert_nearest_exported_parents,
    build_tree,
    run,
    tokens_per_agent,
)

from nbagents import Span, Trace
from nbagents.export import ExportError, LiveExport, export_trace, to_otel_spans

ORIGIN = 1_750_000_000_000_000_000  # 2025-06-15T15:06:40Z, in ns


@pytest.fixture(scope="module")
def recorded() -> Any:
    return run()


def records(spans: list[ReadableSpan]) -> list[dict[str, Any]]:
    return [
        {
            "span_id": f"{s.context.span_id:016x}",
            "parent_id": f"{s.parent.span_id:016x}" if s.parent else None,
            "name": s.name,
            "attributes": dict(s.attributes or {}),
        }
        for s in spans
    ]


# -- a real run -----------------------------------------------------------------------------------


def test_the_exported_tree_is_the_run_with_parallel_and_nested_subagents(recorded: Any) -> None:
    trace, _ = recorded
    exporter = InMemorySpanExporter()
    sent = export_trace(trace, exporter, start_time_unix_nano=ORIGIN)

    received = list(exporter.get_finished_spans())
    assert [s.context.span_id for s in received] == [s.context.span_id for s in sent]
    assert build_tree(records(received)) == EXPECTED_TREE
    # Every span is in the one trace, whose id is the first run id (a UUID) as a number.
    assert {s.context.trace_id for s in received} == {uuid.UUID(trace.spans[0].id).int}
    assert len(received) == sum(1 for s in trace.spans if not s.hidden)


async def test_an_async_run_exports_the_same_tree_and_tokens() -> None:
    trace, reported = await arun()
    spans = to_otel_spans(trace, start_time_unix_nano=ORIGIN)
    assert build_tree(records(spans)) == EXPECTED_TREE
    assert tokens_per_agent(records(spans)) == (reported.input, reported.output)
    subagents = [s for s in spans if s.attributes["nbagents.kind"] == "subagent"]  # type: ignore[index]
    first = min(subagents, key=lambda s: s.start_time or 0)
    assert sum(1 for s in subagents if (s.start_time or 0) < (first.end_time or 0)) >= 2


def test_every_exported_parent_is_the_nearest_visible_ancestor(recorded: Any) -> None:
    trace, _ = recorded
    spans = to_otel_spans(trace, start_time_unix_nano=ORIGIN)
    by_nbagents_id = {s.attributes["nbagents.span_id"]: s for s in spans}  # type: ignore[index]
    assert not [s.id for s in trace.spans if s.hidden and s.id in by_nbagents_id]
    assert_nearest_exported_parents(trace, spans)


def test_times_are_the_recorded_ones_on_the_given_clock(recorded: Any) -> None:
    trace, _ = recorded
    spans = {
        s.attributes["nbagents.span_id"]: s
        for s in to_otel_spans(  # type: ignore[index]
            trace, start_time_unix_nano=ORIGIN
        )
    }
    for span in trace.spans:
        if span.hidden:
            continue
        assert span.end is not None
        assert spans[span.id].start_time == ORIGIN + round(span.start * 1e9)
        assert spans[span.id].end_time == ORIGIN + round(span.end * 1e9)
    # The parallel sub-agents really overlapped, and the export keeps that.
    subagents = [s for s in spans.values() if s.attributes["nbagents.kind"] == "subagent"]  # type: ignore[index]
    first = min(subagents, key=lambda s: s.start_time or 0)
    assert sum(1 for s in subagents if (s.start_time or 0) < (first.end_time or 0)) >= 2


def test_gen_ai_attributes_and_token_sums(recorded: Any) -> None:
    trace, reported = recorded
    spans = to_otel_spans(trace, start_time_unix_nano=ORIGIN)
    by_op: dict[str, list[ReadableSpan]] = {}
    for span in spans:
        by_op.setdefault(str(span.attributes["gen_ai.operation.name"]), []).append(span)  # type: ignore[index]
    assert sorted(by_op) == ["chat", "execute_tool", "invoke_agent"]

    for span in by_op["invoke_agent"]:
        attrs = span.attributes or {}
        assert span.name == f"invoke_agent {attrs['gen_ai.agent.name']}"
        assert span.kind is SpanKind.INTERNAL
        if attrs["nbagents.kind"] == "subagent":
            assert (
                attrs["gen_ai.tool.call.id"]
                == _parent(spans, span).attributes["gen_ai.tool.call.id"]
            )  # type: ignore[index]
            assert attrs["nbagents.subagent.type"] == attrs["gen_ai.agent.name"]
            assert "messages" in attrs["nbagents.state.withheld"]  # type: ignore[operator]
    tasks = [s for s in by_op["execute_tool"] if s.attributes["gen_ai.tool.name"] == "task"]  # type: ignore[index]
    assert sorted(
        (s.attributes["nbagents.subagent.type"], s.attributes["nbagents.subagent.description"])  # type: ignore[index]
        for s in tasks
    ) == [
        ("general-purpose", "Draft beta notes"),
        ("researcher", "Research alpha"),
        ("researcher", "Research beta"),
        ("writer", "Write the summary"),
    ]
    assert all(str(s.attributes["gen_ai.tool.call.id"]).startswith("call_") for s in tasks)  # type: ignore[index]
    for span in by_op["chat"]:
        attrs = span.attributes or {}
        assert span.kind is SpanKind.CLIENT
        assert attrs["gen_ai.request.model"] == attrs["gen_ai.response.model"] == "scripted-model"

    # Tokens per agent, summed from the exported chat spans, equal what the model reported to
    # LangChain's callbacks (an independent count, not the Trace's).
    inputs, outputs = tokens_per_agent(records(spans))
    assert inputs == reported.input
    assert outputs == reported.output
    assert sum(inputs.values()) == trace.total_usage().input


def test_the_same_trace_exports_the_same_ids(recorded: Any) -> None:
    trace, _ = recorded
    first = to_otel_spans(trace)
    again = to_otel_spans(Trace.from_json(trace.to_json()))
    assert [(s.context.trace_id, s.context.span_id) for s in first] == [
        (s.context.trace_id, s.context.span_id) for s in again
    ]
    assert [s.parent.span_id if s.parent else None for s in first] == [
        s.parent.span_id if s.parent else None for s in again
    ]


def test_default_clock_ends_the_trace_now(recorded: Any) -> None:
    import time

    trace, _ = recorded
    before = time.time_ns()
    spans = to_otel_spans(trace)
    after = time.time_ns()
    last_end = max(s.end_time or 0 for s in spans)
    assert before - 1_000 <= last_end <= after + 1_000


# -- statuses, hidden spans, content --------------------------------------------------------------


def span(
    sid: str, parent: str | None, kind: Any, name: str, start: float, end: float | None, **kw: Any
) -> Span:
    return Span(
        id=sid,
        parent_id=parent,
        kind=kind,
        name=name,
        agent=kw.pop("agent", "main"),
        depth=kw.pop("depth", 0),
        start=start,
        end=end,
        status=kw.pop("status", "ok"),
        **kw,
    )


def test_errors_interrupts_and_plumbing() -> None:
    trace = Trace(
        [
            span("a", None, "agent", "main", 0.0, 3.0, status="error", error="ValueError: boom"),
            span("h", "a", "chain", "tools", 0.5, 2.5, hidden=True),
            span("h2", "h", "chain", "wrap", 0.6, 2.4, hidden=True),
            span(
                "t",
                "h2",
                "tool",
                "lookup",
                1.0,
                2.0,
                status="error",
                error="tool said no",
                attributes={"tool_call_id": "call_1"},
            ),
            span("i", "h", "tool", "approve", 2.0, 2.2, status="interrupted", error="paused"),
            span("r", "a", "model", "ChatX", 2.9, None, status="running", model="m"),
        ]
    )
    spans = {
        s.attributes["nbagents.span_id"]: s
        for s in to_otel_spans(  # type: ignore[index]
            trace, start_time_unix_nano=ORIGIN
        )
    }
    assert sorted(spans) == ["a", "i", "r", "t"]
    root = spans["a"]
    assert root.status.status_code is StatusCode.ERROR
    assert root.status.description == "ValueError: boom"
    assert root.attributes["error.type"] == "ValueError"  # type: ignore[index]
    (event,) = root.events
    assert event.name == "exception"
    assert event.attributes == {
        "exception.type": "ValueError",
        "exception.message": "ValueError: boom",
    }
    assert event.timestamp == ORIGIN + 3_000_000_000

    tool = spans["t"]
    assert tool.parent is not None and tool.parent.span_id == root.context.span_id
    assert tool.name == "execute_tool lookup"
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"  # type: ignore[index]
    assert tool.attributes["error.type"] == "_OTHER"  # type: ignore[index]
    assert tool.status.status_code is StatusCode.ERROR

    paused = spans["i"]
    assert paused.status.status_code is StatusCode.UNSET
    assert paused.attributes["nbagents.status"] == "interrupted"  # type: ignore[index]
    assert [(e.name, dict(e.attributes or {})) for e in paused.events] == [
        ("nbagents.interrupted", {"message": "paused"})
    ]
    # A call still running when exported ends with the trace, and says so.
    running = spans["r"]
    assert running.end_time == ORIGIN + 3_000_000_000
    assert [e.name for e in running.events] == ["nbagents.running"]
    assert running.name == "chat m"


def test_content_only_when_asked() -> None:
    agent = span(
        "a", None, "agent", "main", 0.0, 1.0, inputs={"q": "secret"}, outputs={"a": "x" * 10_000}
    )
    lookup = span(
        "t", "a", "tool", "lookup", 0.2, 0.3, inputs={"query": "alpha"}, outputs="facts about alpha"
    )
    trace = Trace([agent, lookup])
    content = (
        "nbagents.inputs",
        "nbagents.outputs",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    )
    for plain in to_otel_spans(trace):
        assert not any(k in (plain.attributes or {}) for k in content)
    root, tool = (dict(s.attributes or {}) for s in to_otel_spans(trace, include_content=True))
    assert root["nbagents.inputs"] == '{"q": "secret"}'
    assert len(str(root["nbagents.outputs"])) == 8_000
    assert str(root["nbagents.outputs"]).endswith("…")
    assert tool["gen_ai.tool.call.arguments"] == '{"query": "alpha"}'
    assert tool["gen_ai.tool.call.result"] == '"facts about alpha"'
    assert "nbagents.inputs" not in tool


def test_an_empty_trace_is_refused() -> None:
    with pytest.raises(ValueError, match="no spans"):
        to_otel_spans(Trace())


# -- random traces: the parent rule ---------------------------------------------------------------

KINDS = ["agent", "subagent", "task", "model", "tool", "chain"]


def random_trace(rng: random.Random) -> Trace:
    spans: list[Span] = []
    for i in range(rng.randint(1, 40)):
        parent = rng.choice(spans) if spans and rng.random() < 0.9 else None
        if not spans:
            parent = None
        start = (parent.start if parent else 0.0) + rng.random()
        kind = rng.choice(KINDS) if parent else "agent"
        status = rng.choice(["ok", "ok", "error", "interrupted", "running"])
        spans.append(
            span(
                f"s{i}",
                parent.id if parent else None,
                kind,
                f"n{i}",
                start,
                None if status == "running" else start + rng.random(),
                status=status,
                hidden=kind == "chain" and rng.random() < 0.7,
                model="m" if kind == "model" else None,
            )
        )
    return Trace(spans)


@pytest.mark.parametrize("seed", range(200))
def test_every_exported_parent_is_the_exported_trace_parent_on_random_traces(seed: int) -> None:
    trace = random_trace(random.Random(seed))
    exported = {s.attributes["nbagents.span_id"]: s for s in to_otel_spans(trace)}  # type: ignore[index]
    assert set(exported) == {s.id for s in trace.spans if not s.hidden}
    assert_nearest_exported_parents(trace, exported.values())
    assert len({s.context.trace_id for s in exported.values()}) == 1


# -- targets --------------------------------------------------------------------------------------


def test_a_span_processor_and_a_tracer_provider_get_the_spans(recorded: Any) -> None:
    trace, _ = recorded
    exporter = InMemorySpanExporter()
    export_trace(trace, SimpleSpanProcessor(exporter))
    assert len(exporter.get_finished_spans()) == len(to_otel_spans(trace))

    exporter.clear()
    provider = TracerProvider(resource=Resource.create({"service.name": "notebook-42"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    export_trace(trace, provider)
    received = exporter.get_finished_spans()
    assert len(received) == len(to_otel_spans(trace))
    assert {s.resource.attributes["service.name"] for s in received} == {"notebook-42"}


class Refusing(SpanExporter):
    def export(self, spans: Any) -> SpanExportResult:
        return SpanExportResult.FAILURE


def test_an_exporter_failure_raises(recorded: Any) -> None:
    with pytest.raises(ExportError, match="Refusing could not export"):
        export_trace(recorded[0], Refusing())


class Counting(InMemorySpanExporter):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def export(self, spans: Any) -> SpanExportResult:
        self.calls.append(len(spans))
        return super().export(spans)


def test_a_big_trace_goes_in_batches_a_receiver_accepts() -> None:
    tools = [span(f"t{i}", "a", "tool", "lookup", i / 1000, i / 1000 + 0.0005) for i in range(1199)]
    trace = Trace([span("a", None, "agent", "main", 0.0, 2.0), *tools])
    exporter = Counting()
    export_trace(trace, exporter)
    assert exporter.calls == [512, 512, 176]
    assert len({s.context.span_id for s in exporter.get_finished_spans()}) == 1200


def test_a_wrong_target_is_refused(recorded: Any) -> None:
    with pytest.raises(TypeError, match="SpanExporter, SpanProcessor or TracerProvider"):
        export_trace(recorded[0], object())  # type: ignore[arg-type]


# -- live streaming -------------------------------------------------------------------------------


class WatchingExporter(InMemorySpanExporter):
    """Remembers, for each span it receives, whether the recorded span had ended by then."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.ended_when_sent: list[bool] = []

    def export(self, spans: Any) -> SpanExportResult:
        for s in spans:
            recorded = self.trace.get(str(s.attributes["nbagents.span_id"]))
            self.ended_when_sent.append(recorded.end is not None)
        return super().export(spans)


def test_live_streaming_sends_each_span_once_when_it_ends() -> None:
    from nbagents import Tracer

    tracer = Tracer()
    exporter = WatchingExporter(tracer.trace)
    live = LiveExport(tracer.trace, exporter, start_time_unix_nano=ORIGIN)
    run(extra_callbacks=[tracer])
    sent_while_running = len(exporter.get_finished_spans())
    live.close()
    streamed = list(exporter.get_finished_spans())
    # Sent during the run (not all at close), each after its span ended.
    assert sent_while_running > 0
    assert all(exporter.ended_when_sent)
    assert len(exporter.ended_when_sent) == len(streamed)

    # The stream equals a one-shot export of the finished trace: ids, parents, names, times.
    whole = to_otel_spans(tracer.trace, start_time_unix_nano=ORIGIN)
    assert sorted(_summary(s) for s in streamed) == sorted(_summary(s) for s in whole)
    assert build_tree(records(streamed)) == EXPECTED_TREE
    # Children before their parents: the root, which ends last, is sent last.
    assert streamed[-1].parent is None


def test_live_streaming_sends_unfinished_spans_on_close() -> None:
    trace = Trace([span("a", None, "agent", "main", 0.0, None, status="running")])
    exporter = InMemorySpanExporter()
    live = LiveExport(trace, exporter)
    trace.add(span("m", "a", "model", "ChatX", 0.1, 0.2, model="m"))
    live.flush()
    assert [s.name for s in exporter.get_finished_spans()] == ["chat m"]
    live.close()
    assert [s.name for s in exporter.get_finished_spans()] == ["chat m", "invoke_agent main"]
    trace.add(span("late", "a", "tool", "t", 0.3, 0.4))
    assert len(exporter.get_finished_spans()) == 2  # closed: no longer listening


def _summary(s: ReadableSpan) -> tuple[Any, ...]:
    return (
        s.context.span_id,
        s.parent.span_id if s.parent else None,
        s.name,
        s.start_time,
        s.end_time,
    )


def _parent(spans: list[ReadableSpan], child: ReadableSpan) -> ReadableSpan:
    assert child.parent is not None
    return next(s for s in spans if s.context.span_id == child.parent.span_id)
