"""Map nbagents spans onto OpenTelemetry spans that follow the GenAI semantic conventions.

One nbagents ``Trace`` becomes one OpenTelemetry trace. Hidden plumbing spans (LangGraph node
wrappers, middleware hooks) are left out and their children hang under the nearest exported
ancestor, so the tree a backend shows is the tree the notebook shows.
"""

from __future__ import annotations

import json
import re
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from nbagents._distribution import __version__
from nbagents.cost import Prices, PriceSource, as_price_source
from nbagents.export._ids import otel_span_id, otel_trace_id
from nbagents.tracing import Span, SpanAttributes, Trace

__all__ = ["SpanConverter"]

_NANOS = 1_000_000_000
_CONTENT_CHARS = 8_000
_ERROR_TYPE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): ")


class SpanConverter:
    """Converts the spans of one trace; shared by the one-shot export and the live stream.

    ``origin_ns`` is the wall-clock time (Unix epoch, nanoseconds) of the trace's second 0.
    The trace id is derived from the first span's: a trace with no span has nothing to export.
    """

    def __init__(
        self,
        trace: Trace,
        origin_ns: int,
        resource: Resource | None,
        prices: Prices | None,
        include_content: bool,
    ) -> None:
        spans = trace.spans
        if not spans:
            raise ValueError("The trace has no spans: there is nothing to export.")
        self.trace = trace
        self.origin_ns = origin_ns
        self.trace_id = otel_trace_id(spans[0].id)
        self.resource = resource or Resource.create({"service.name": "nbagents"})
        self.prices = None if prices is None else as_price_source(prices)
        self.include_content = include_content
        self._scope = InstrumentationScope("nbagents", __version__)

    def convert(self, span: Span, *, end: float | None = None) -> ReadableSpan:
        """The OTel span of ``span``. ``end`` stands in for the end of a span still running."""
        parent = self.trace.parent(span)
        while parent is not None and parent.hidden:  # the nearest exported ancestor
            parent = self.trace.parent(parent)
        finish = span.end if span.end is not None else end if end is not None else span.start
        name, kind, attributes = _describe(span)
        attributes.update(self._extra(span))
        events: list[Event] = []
        status = Status(StatusCode.UNSET)
        if span.status == "error":
            message = span.error or "error"
            match = _ERROR_TYPE.match(message)
            attributes["error.type"] = match.group(1) if match else "_OTHER"
            status = Status(StatusCode.ERROR, message)
            facts = {"exception.type": str(attributes["error.type"]), "exception.message": message}
            events.append(Event("exception", facts, self._ns(finish)))
        elif span.status in ("interrupted", "running", "limit"):
            # Not a failure: a run paused for a human, stopped by its limit, or cut off when
            # the trace ended.
            facts = {"message": span.error} if span.error else {}
            events.append(Event(f"nbagents.{span.status}", facts, self._ns(finish)))
        # A pause that was resumed on the same thread: the span was waiting for a person.
        for pause in span.typed_attributes().get("paused", []):
            if len(pause) == 2:
                events.append(Event("nbagents.paused", {}, self._ns(float(pause[0]))))
                events.append(Event("nbagents.resumed", {}, self._ns(float(pause[1]))))
        events.sort(key=lambda e: e.timestamp or 0)
        return ReadableSpan(
            name=name,
            context=self._context(span),
            parent=self._context(parent) if parent is not None else None,
            resource=self.resource,
            attributes=attributes,
            events=events,
            kind=kind,
            status=status,
            start_time=self._ns(span.start),
            end_time=self._ns(max(finish, span.start)),
            instrumentation_scope=self._scope,
        )

    def _ns(self, seconds: float) -> int:
        return self.origin_ns + round(seconds * _NANOS)

    def _context(self, span: Span) -> SpanContext:
        return SpanContext(
            trace_id=self.trace_id,
            span_id=otel_span_id(span.id),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )

    def _extra(self, span: Span) -> dict[str, AttributeValue]:
        attributes: dict[str, AttributeValue] = {}
        if self.prices is not None:
            attributes.update(self._cost(span, self.prices))
        if self.include_content:
            # A tool call's input and result have GenAI attributes of their own (free-form
            # JSON); other spans' payloads have no such home, so they go under nbagents.*.
            tool = span.kind in ("tool", "task")
            if span.inputs is not None:
                key = "gen_ai.tool.call.arguments" if tool else "nbagents.inputs"
                attributes[key] = _json(span.inputs)
            if span.outputs is not None:
                key = "gen_ai.tool.call.result" if tool else "nbagents.outputs"
                attributes[key] = _json(span.outputs)
            if "rubric_pass" in span.attributes:
                # What a grading pass's grader wrote: model output, so exported with the content.
                a = span.typed_attributes()
                if a.get("rubric_explanation"):
                    attributes["nbagents.rubric.explanation"] = a["rubric_explanation"]
                if a.get("rubric_criteria"):
                    # OTel attribute values are flat: the criteria go as JSON text.
                    attributes["nbagents.rubric.criteria"] = _json(a["rubric_criteria"])
                if a.get("rubric_feedback"):
                    attributes["nbagents.rubric.feedback"] = a["rubric_feedback"]
        return attributes

    def _cost(self, span: Span, prices: PriceSource) -> dict[str, AttributeValue]:
        from nbagents.tracing.cost import cost_of_spans

        if span.kind == "model":
            scope = [span]
        elif span.kind in ("agent", "subagent"):
            scope = self.trace.own_model_spans(span)
        else:
            return {}
        out: dict[str, AttributeValue] = {}
        own = cost_of_spans(scope, prices)
        if own.unknown:
            out["nbagents.cost.unknown_models"] = sorted(own.unknown)
        else:
            out["nbagents.cost"] = float(own.amount)
        if span.kind != "model":
            models = [d for d in self.trace.descendants(span) if d.kind == "model"]
            total = cost_of_spans(models, prices)
            if not total.unknown:
                out["nbagents.cost_incl_descendants"] = float(total.amount)
        return out


def _describe(span: Span) -> tuple[str, SpanKind, dict[str, AttributeValue]]:
    """Span name, kind and attributes after the GenAI conventions, plus nbagents' own facts."""
    a = span.typed_attributes()
    attributes: dict[str, AttributeValue] = {
        "nbagents.span_id": span.id,
        "nbagents.kind": span.kind,
        "nbagents.agent": span.agent,
        "nbagents.depth": span.depth,
        "nbagents.status": span.status,
    }
    if "call_index" in a:
        attributes["nbagents.call_index"] = a["call_index"]
    if span.kind in ("agent", "subagent"):
        name, kind, specific = _agent(span, a)
    elif span.kind in ("task", "tool"):
        name, kind, specific = _tool(span, a)
    elif span.kind == "model":
        name, kind, specific = _model(span, a)
    else:  # a skill load, a visible graph node, a middleware's step
        name, kind, specific = _chain(span, a)
    attributes.update({k: v for k, v in specific.items() if v is not None and v != ""})
    return name, kind, attributes


def _agent(span: Span, a: SpanAttributes) -> tuple[str, SpanKind, dict[str, Any]]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": span.name,
    }
    if span.kind == "subagent":
        attrs.update(
            {
                "gen_ai.tool.call.id": a.get("tool_call_id"),
                "nbagents.subagent.type": a.get("subagent_type") or span.name,
                "nbagents.subagent.description": a.get("description"),
                "nbagents.subagent.parent_agent": a.get("parent_agent"),
                "nbagents.state.withheld": sorted(a["withheld"]) if "withheld" in a else None,
                "nbagents.state.passed": sorted(a["passed"]) if "passed" in a else None,
                "nbagents.state.returned": a.get("returned"),
            }
        )
    plan = a.get("plan", [])
    if plan:
        attrs["nbagents.plan.items"] = [str(item.get("content")) for item in plan]
        attrs["nbagents.plan.statuses"] = [str(item.get("status")) for item in plan]
    memory = a.get("memory")
    if memory is not None:
        attrs["nbagents.memory.files"] = list(memory)
        attrs["nbagents.memory.chars"] = list(memory.values())
    return f"invoke_agent {span.name}", SpanKind.INTERNAL, attrs


def _tool(span: Span, a: SpanAttributes) -> tuple[str, SpanKind, dict[str, Any]]:
    attrs = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": span.name,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": a.get("tool_call_id"),
    }
    if span.kind == "task":
        attrs["nbagents.subagent.type"] = a.get("subagent_type")
        attrs["nbagents.subagent.description"] = a.get("description")
    return f"execute_tool {span.name}", SpanKind.INTERNAL, attrs


def _model(span: Span, a: SpanAttributes) -> tuple[str, SpanKind, dict[str, Any]]:
    usage = span.usage
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": span.model,
        "gen_ai.response.model": span.model,
        "gen_ai.usage.input_tokens": usage.input,
        "gen_ai.usage.output_tokens": usage.output,
        "nbagents.usage.total_tokens": usage.total,
    }
    if usage.cache_read:
        attrs["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read
    if usage.cache_write:
        attrs["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write
    if usage.cache_write_1h:
        # The conventions have no attribute for writes to a longer-lived cache.
        attrs["nbagents.usage.cache_creation_1h.input_tokens"] = usage.cache_write_1h
    if usage.reasoning:
        attrs["gen_ai.usage.reasoning.output_tokens"] = usage.reasoning
    # The conventions name a chat span after the model; a call that reported none keeps the
    # chat model's class name, which is what the notebook view shows.
    return f"chat {span.model or span.name}", SpanKind.CLIENT, attrs


def _chain(span: Span, a: SpanAttributes) -> tuple[str, SpanKind, dict[str, Any]]:
    # A visible node of a plain LangGraph graph, or a middleware's step (a summarization, a
    # pass of upstream's rubric loop): no GenAI operation describes it.
    facts = a.get("summarization", {})
    attrs: dict[str, Any] = {
        f"nbagents.summarization.{key}": facts.get(key)
        for key in ("messages_folded", "tokens_before", "tokens_after", "history_path")
    }
    if "rubric_pass" in a:
        attrs["nbagents.rubric.pass"] = a["rubric_pass"]
        attrs["nbagents.rubric.verdict"] = a.get("rubric_verdict")
    return span.name, SpanKind.INTERNAL, attrs


def _json(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= _CONTENT_CHARS else text[: _CONTENT_CHARS - 1] + "…"
