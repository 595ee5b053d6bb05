"""``nbagents.rerun``: one sub-agent of a recorded run, run again alone on the input it was
given, with its spec as it was or changed, and compared with the original spawn."""

from __future__ import annotations

import contextlib
import dataclasses
from html import escape
from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig

from nbagents._contract import DEPTH_KEY, LimitReached
from nbagents._notebook import trace as traced
from nbagents.comparison import Comparison
from nbagents.history import StoreLike
from nbagents.subagents import SubAgent
from nbagents.subagents.limits import LimitGuard, StepGuard, guarded_config
from nbagents.tracing.messages import was_cut
from nbagents.tracing.model import Span, SubAgentRecord, Trace


class Rerun:
    """A sub-agent run again: the new run's ``trace`` and ``result``, the ``original`` spawn,
    whether the input was the same (``exact``, and ``notes`` saying why not), and the
    ``comparison`` of the two, which is what it displays."""

    def __init__(self, original: Trace, trace: Trace, notes: list[str], label: str) -> None:
        self.original = original
        """The original spawn, as a trace of its own (``subtree``)."""
        self.trace = trace
        self.notes = notes
        self.comparison = Comparison(original, trace, ("A: as recorded", f"B: {label}"))

    @property
    def exact(self) -> bool:
        """Whether the sub-agent got the same input as when it was recorded."""
        return not self.notes

    @property
    def result(self) -> str | None:
        rows = self.comparison.rows
        return rows[0].b.result if rows else None

    def to_html(self) -> str:
        notes = "".join(
            f'<div class="nba-empty">Not an exact re-run: {escape(n, quote=True)}</div>'
            for n in self.notes
        )
        return notes + self.comparison.to_html()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/plain": repr(self), "text/html": self.to_html()}

    def __repr__(self) -> str:
        exact = "exact" if self.exact else "not exact: " + "; ".join(self.notes)
        return f"<Rerun ({exact}) {self.comparison.summary()}>"


def rerun(
    trace: Trace,
    spawn: SubAgentRecord | Span | str | int,
    agent: Any,
    *,
    spec: SubAgent | None = None,
    name: str | None = None,
    store: StoreLike = None,
    display: bool | None = False,
    **changes: Any,
) -> Rerun:
    """Run one sub-agent of ``trace`` again, alone, on the input it was given.

    ``spawn`` picks it: one of ``trace.subagents``, a span id, a sub-agent type (when it was
    spawned once) or a position. ``agent`` is the agent ``create_deep_agent`` built, which
    knows how its sub-agents are built (inherited model and tools, files, skills, nested
    sub-agents). Change the sub-agent with keyword arguments of its spec
    (``system_prompt=...``, ``model=...``, ``tools=[...]``, ``response_format=...``) or give a
    whole ``spec``. The new run is traced (kept in the run history under ``name``) and
    compared with the original spawn, which is what the result shows. Where the re-run cannot
    be exact (the recorded input was shortened; tools the original used are gone; a remote or
    compiled sub-agent), ``notes`` says so.
    """
    registry = getattr(agent, "subagent_registry", None)
    if registry is None:
        raise TypeError(
            "rerun needs the agent create_deep_agent built (it knows how its sub-agents are "
            f"built), not {type(agent).__name__}."
        )
    span = find_spawn(trace, spawn)
    recorded = registry.specs.get(span.name)
    if recorded is None:
        raise KeyError(
            f"This agent has no sub-agent {span.name!r} (it has {sorted(registry.specs)}): "
            "pass the agent that made the run."
        )
    if spec is not None and changes:
        raise TypeError("Give either spec= or changes to the recorded spec, not both.")
    notes: list[str] = []
    if "runnable" in recorded or "graph_id" in recorded:
        if spec is not None or changes:
            kind = "CompiledSubAgent" if "runnable" in recorded else "RemoteSubAgent"
            raise ValueError(f"Sub-agent {span.name!r} is a {kind}: its spec cannot be changed.")
        graph = registry.graphs[span.name]
        limits = registry.limits_of(span.name)
        if "graph_id" in recorded:
            notes.append("it runs on a LangGraph server, which may have changed since")
    else:
        new_spec = spec if spec is not None else {**recorded, **changes}
        limits = new_spec.get("limits")
        graph = registry.build(new_spec, admits=bool(limits))
    original = subtree(trace, span)
    state, cut = _recorded_input(span)
    notes += cut + _missing_tools(original, graph)
    chosen = span.typed_attributes().get("response_format")
    given = "response_format" in (spec if spec is not None else changes)
    if chosen is not None and not given:
        notes.append(
            f"the run asked this call for {chosen} (a response format chosen per call, which "
            "the trace names but does not keep): pass response_format= to ask for it again"
        )
    label = name or f"{span.name} re-run"
    # At its own nesting level, so its sub-agents meet the depth limit where they met it before.
    config: RunnableConfig = {"metadata": {DEPTH_KEY: _level(trace, span)}}
    if limits:  # its spec's limits hold in a re-run as they did in the run
        guard = StepGuard if "runnable" in recorded else LimitGuard
        config = guarded_config(config, guard(limits, f"sub-agent {span.name!r}"))
    # A limit reached is an answer, as in the run: the new trace shows where it stopped.
    with (
        traced(display=display, name=label, tags=["rerun"], store=store) as new,
        contextlib.suppress(LimitReached),
    ):
        graph.invoke(state, config)
    return Rerun(original, new, notes, label)


def _level(trace: Trace, span: Span) -> int:
    """How deep ``span`` sat among sub-agents: 1 under the main agent, 2 under one of those."""
    level = 1
    parent = trace.parent(span)
    while parent is not None:
        level += parent.kind == "subagent"
        parent = trace.parent(parent)
    return level


def _recorded_input(span: Span) -> tuple[dict[str, Any], list[str]]:
    """What the sub-agent was given, from its span: the task as its one message, and the
    state keys its parent passed. Notes where the recording is not the whole input."""
    recorded = span.inputs if isinstance(span.inputs, dict) else {}
    description = span.typed_attributes().get("description", "")
    state: dict[str, Any] = {k: v for k, v in recorded.items() if k != "messages"}
    state["messages"] = [HumanMessage(content=description)]
    note = "the recorded input was shortened (over the trace's size bounds)"
    return state, [note] if was_cut(description) or was_cut(state) else []


def _missing_tools(original: Trace, graph: Any) -> list[str]:
    node = getattr(graph, "nodes", {}).get("tools")
    have = set(getattr(getattr(node, "bound", None), "tools_by_name", {}))
    used = sorted({s.name for s in original.spans if s.kind == "tool"} - {"task"})
    missing = [t for t in used if t not in have]
    note = f"the original called {', '.join(missing)}, which this re-run does not have"
    return [note] if missing else []


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
    with contextlib.suppress(KeyError):  # a span id, if it names a spawn
        if (found := trace.get(spawn)).kind == "subagent":
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
