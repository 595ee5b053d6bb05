"""A trace in the Chrome trace event format, which ui.perfetto.dev and chrome://tracing open.

One track (a ``tid``) per agent: the main agent and every sub-agent spawn, in call order, named
after the agent and its task. On its track, the agent's run is one slice and its model, tool,
``task`` and skill calls (and a plain graph's visible steps) are slices inside it, so a
long parallel run reads as a flame chart: the ``task`` slice on the parent's track spans the
time its sub-agent's track is busy. Parallel calls of one agent overlap, and a track's slices
must nest: the second of two overlapping calls goes to a lane, a track named after the agent
(``main ‖ 2``) right below it. Times are whole microseconds since the trace began;
children are clamped into their parent, so rounding never breaks the nesting a viewer needs.
A step still running ends where the trace's record ends, marked ``running`` in its args.

Format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
(``X`` complete events, ``M`` metadata events naming the process and threads).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nbagents.tracing.span import AGENT_KINDS

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace
    from nbagents.tracing.span import Span

__all__ = ["chrome_trace"]

PID = 1
_US = 1_000_000


def chrome_trace(trace: Trace) -> dict[str, Any]:
    """The trace as a Chrome trace event JSON object (``{"traceEvents": [...], ...}``)."""
    with trace.lock:
        horizon = _us(trace.duration)
        events: list[dict[str, Any]] = [
            _meta("process_name", 0, {"name": trace.title or "nbagents trace"}),
        ]
        tids = iter(range(1, 1 << 31))
        for span in trace.walk():
            if span.kind in AGENT_KINDS and not span.hidden:
                label = span.name
                description = span.typed_attributes().get("description")
                if span.kind == "subagent" and description:
                    label = f"{span.name}: {' '.join(description.split())[:80]}"
                track = _Track(label, tids, events)
                track.place(trace, span, (_us(span.start), _end(span, horizon)), 0)
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {"producer": "nbagents", "spans": len(trace)},
    }


class _Track:
    """One agent's track, and the lanes its overlapping calls need (Perfetto drops a slice
    that ends outside the one it started in)."""

    def __init__(self, label: str, tids: Any, events: list[dict[str, Any]]) -> None:
        self.label = label
        self.tids = tids
        self.events = events
        self.lanes: list[tuple[int, list[tuple[int, int, str]]]] = []
        self._lane()

    def _lane(self) -> int:
        tid: int = next(self.tids)
        name = self.label if not self.lanes else f"{self.label} \u2016 {len(self.lanes) + 1}"
        self.events.append(_meta("thread_name", tid, {"name": name}))
        self.events.append(_meta("thread_sort_index", tid, {"sort_index": tid}))
        self.lanes.append((tid, []))
        return len(self.lanes) - 1

    def _fits(self, lane: int, start: int, end: int, above: frozenset[str]) -> bool:
        """Whether a slice may go in ``lane``: every slice there that it meets in time is one
        of its ancestors (``above``). A sibling it fits inside would nest it under that
        sibling, which says what did not happen."""
        return all(e <= start or s >= end or sid in above for s, e, sid in self.lanes[lane][1])

    def place(
        self,
        trace: Trace,
        span: Span,
        bounds: tuple[int, int],
        lane: int,
        above: frozenset[str] = frozenset(),
    ) -> None:
        """``span``'s slice clamped into ``bounds`` (its parent's), in ``lane`` if it fits
        there, else in the first lane where it does; then its children after it. A sub-agent
        under it has a track of its own (see :func:`chrome_trace`)."""
        start = min(max(_us(span.start), bounds[0]), bounds[1])
        end = min(max(_end(span, bounds[1]), start), bounds[1])
        if not self._fits(lane, start, end, above):
            lanes = range(len(self.lanes))
            found = next((i for i in lanes if self._fits(i, start, end, above)), None)
            lane = found if found is not None else self._lane()
        tid, taken = self.lanes[lane]
        taken.append((start, end, span.id))
        what = {"name": _name(span), "cat": span.kind, "ph": "X", "ts": start, "dur": end - start}
        self.events.append({**what, "pid": PID, "tid": tid, "args": _args(span)})
        stack = list(reversed(trace.children(span)))
        while stack:
            child = stack.pop()
            if child.kind in AGENT_KINDS:
                continue  # its own track
            if child.hidden:
                stack.extend(reversed(trace.children(child)))
                continue
            self.place(trace, child, (start, end), lane, above | {span.id})


def _name(span: Span) -> str:
    attrs = span.typed_attributes()
    if span.kind == "task":
        return f"task → {attrs.get('subagent_type') or '?'}"
    if span.kind == "model":
        return span.model or span.name
    return span.name


def _args(span: Span) -> dict[str, Any]:
    attrs = span.typed_attributes()
    args: dict[str, Any] = {"status": span.status, "span_id": span.id, "agent": span.agent}
    if span.error:
        args["error"] = span.error
    if span.kind == "model":
        args["input_tokens"] = span.usage.input
        args["output_tokens"] = span.usage.output
        args["total_tokens"] = span.usage.total
    if "description" in attrs:
        args["task"] = attrs["description"]
    if attrs.get("tool_call_id"):
        args["tool_call_id"] = attrs["tool_call_id"]
    return args


def _meta(name: str, tid: int, args: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "ph": "M", "pid": PID, "tid": tid, "args": args}


def _us(seconds: float) -> int:
    return round(seconds * _US)


def _end(span: Span, horizon: int) -> int:
    return _us(span.end) if span.end is not None else horizon
