"""One spawn of a run as a trace of its own: the sub-agent and everything under it."""

from __future__ import annotations

import dataclasses

from nbagents.tracing.model import Span, SubAgentRecord, Trace


def find_spawn(trace: Trace, spawn: SubAgentRecord | Span | str | int) -> Span:
    """The sub-agent span ``spawn`` names: a record of ``trace.subagents``, a span or its id,
    a sub-agent type (its only spawn), or a position in ``trace.subagents``."""
    records = trace.subagents
    if isinstance(spawn, SubAgentRecord):
        return trace.get(spawn.span_id)
    if isinstance(spawn, Span):
        return trace.get(spawn.id)
    if isinstance(spawn, bool) or not isinstance(spawn, int | str):
        raise TypeError(
            f"spawn must be one of trace.subagents, a span id, a sub-agent type or a position, "
            f"not {type(spawn).__name__}"
        )
    if isinstance(spawn, int):
        if not -len(records) <= spawn < len(records):
            raise IndexError(f"The run has {len(records)} spawns; there is no spawn {spawn}.")
        return trace.get(records[spawn].span_id)
    try:
        found = trace.get(spawn)
    except KeyError:
        found = None
    if found is not None and found.kind == "subagent":
        return found
    of_type = [r for r in records if r.type == spawn]
    if len(of_type) == 1:
        return trace.get(of_type[0].span_id)
    types = sorted({r.type for r in records})
    if not of_type:
        raise KeyError(f"No spawn {spawn!r} in the run; its sub-agent types are {types}.")
    positions = [records.index(r) for r in of_type]
    raise ValueError(
        f"The run spawned {spawn!r} {len(of_type)} times (positions {positions} of "
        "trace.subagents): pass one of those positions or records."
    )


def subtree(trace: Trace, span: Span) -> Trace:
    """``span`` and every step under it, as a trace starting when ``span`` started."""
    with trace.lock:
        spans = [span, *trace.descendants(span)]
    shift = span.start

    def moved(s: Span) -> Span:
        end = None if s.end is None else s.end - shift
        parent = None if s is span else s.parent_id
        return dataclasses.replace(s, start=s.start - shift, end=end, parent_id=parent)

    part = Trace([moved(s) for s in spans], title=trace.title)
    part.finished = trace.finished
    return part
