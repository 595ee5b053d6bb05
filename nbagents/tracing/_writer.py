"""What each LangChain callback means for the trace: the events a :class:`Tracer` queues.

The open runs and the life of their spans are :class:`~nbagents.tracing._openruns.OpenRuns`;
which kind a run is lives in :mod:`nbagents.tracing._classify`; what is read out of a
callback's payload lives in :mod:`nbagents.tracing._extract`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from nbagents._contract import STEP_KEY, SUMMARIZATION_STEP, WRITE_TODOS_TOOL
from nbagents._guard import Guard, guarded
from nbagents._resumable import AGENT_REF
from nbagents.tracing._classify import (
    chain_end_status,
    classify_chain,
    is_visible_node,
    step_of,
    tool_kind,
)
from nbagents.tracing._extract import (
    ModelResult,
    model_request,
    offered_skills,
    returned_keys,
    run_name,
    skill_arguments,
    subagent_attributes,
    task_arguments,
    tool_call_of,
    tool_outcome,
)
from nbagents.tracing._jsonready import deferred, jsonready, shape
from nbagents.tracing._openruns import OpenRuns, new_span
from nbagents.tracing._rubric import grader_pass, pass_name, verdict_of
from nbagents.tracing._runs import RunFrame
from nbagents.tracing.model import STREAMED, STREAMED_CHARS, SpanKind, Trace
from nbagents.tracing.pending import AGENT, THREAD, is_resume, thread_of
from nbagents.tracing.span import AGENT_KINDS

__all__ = ["VISIBLE_CHARS", "TraceWriter"]

VISIBLE_CHARS = 200_000


def _on_run(
    method: Callable[[TraceWriter, RunFrame, Any], None],
) -> Callable[[TraceWriter, Any, UUID], None]:
    """The event ``method(run, value)`` on the open run ``run_id``, under the trace's lock; a
    run never seen (started before the tracer was attached) is left alone."""

    @guarded
    @functools.wraps(method)
    def event(self: TraceWriter, value: Any, run_id: UUID) -> None:
        with self._lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            method(self, run, value)
        self.trace.changed()

    return event


class TraceWriter:
    """Applies a tracer's events to ``trace``; every change happens under the trace's lock."""

    def __init__(self, trace: Trace, guard: Guard) -> None:
        self.trace = trace
        self.guard = guard
        self._runs = OpenRuns(trace)
        self._lock = trace.lock  # taken several times per event: no property hops

    def apply(self, at: float, event: Callable[..., None], args: tuple[Any, ...]) -> None:
        """Apply one queued event, which happened at ``at`` (``time.perf_counter()``)."""
        self._runs.clock = at
        try:
            event(*args)
        finally:
            self._runs.clock = None

    @guarded
    def chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        name = run_name(serialized, kwargs, "chain")
        md = metadata or {}
        runs = self._runs
        with self._lock:
            now = runs.now()
            parent = runs.get(parent_run_id)
            kind, agent, node_of = classify_chain(name, md, parent)
            key = _resume_key(kind, parent, md, name)
            thread = thread_of(md)
            if parent is None and is_resume(inputs):
                runs.pauses.answered(thread, inputs.resume)
            # New input on a paused thread starts a new run; only Command(resume=...) continues.
            continues = key is not None and (parent is not None or is_resume(inputs))
            reopened = runs.pauses.resume(thread, kind, key, now) if continues and key else None
            span = reopened
            if span is None:
                span = new_span(run_id, parent, kind, name, agent, now)
                span.hidden = kind == "chain" and not is_visible_node(kind, name, md, node_of)
                if kind == "chain" and md.get(STEP_KEY) == name:
                    # a middleware's own step, e.g. a summarization (its runs inherit the key)
                    span.hidden = False
                    span.attributes["step"] = md[STEP_KEY]
                graded = grader_pass(name, md, inputs) if node_of is not None else None
                if graded is not None:  # a middleware hook, but one the views show as a step
                    span.hidden = False
                    span.attributes.update(graded)
                    span.name = pass_name(graded)
            if key is not None:
                runs.pauses.resumable(span, thread, key)
                if parent is None and thread is not None:
                    span.attributes[THREAD] = thread
                    if md.get(AGENT_REF):
                        span.attributes[AGENT] = str(md[AGENT_REF])
            run = RunFrame(span, agent, step_of(md, parent), node_of=node_of, parent=parent)
            if kind in AGENT_KINDS:
                agent.span_id = span.id
                agent.state_input = inputs
                span.attributes.update(offered_skills(inputs) or {})  # a resumed thread's
                if kind == "subagent" and parent is not None:
                    span.attributes.update(subagent_attributes(agent, md, parent, inputs))
            elif kind == "chain" and node_of is not None:
                span.attributes.update(runs.call_position(agent, tool_call_of(inputs)))
            if parent is not None and parent.span.kind == "task" and kind == "subagent":
                parent.subagent = span
            runs.add(run_id, run)
        if reopened is None:  # a continued span keeps what it was first given
            span.inputs = (
                shape(inputs) if span.hidden else deferred(inputs, max_chars=VISIBLE_CHARS)
            )
        runs.publish(span)

    @_on_run
    def chain_end(self, run: RunFrame, outputs: Any) -> None:
        if run.node_of is not None and run.span.parent_id == run.node_of.span_id:
            run.node_of.updates.append((run.step, outputs))
            self._runs.agent_offered(run.node_of, outputs)
        if "rubric_pass" in run.span.attributes:
            # Named before it ends: an ended step is read once by the live view.
            run.span.attributes.update(verdict_of(outputs))
            run.span.name = pass_name(run.span.attributes)
        status = chain_end_status(run, outputs)
        if run.span.attributes.get("step") == SUMMARIZATION_STEP and isinstance(outputs, dict):
            run.span.attributes["summarization"] = jsonready(outputs)
        converted = (
            shape(outputs) if run.span.hidden else deferred(outputs, max_chars=VISIBLE_CHARS)
        )
        self._runs.end(run, status, None, converted)
        if run.span.kind in AGENT_KINDS:
            run.agent.forget_state()

    @_on_run
    def failed(self, run: RunFrame, error: BaseException) -> None:
        """A chain, model, tool or retriever run raised ``error``."""
        self._runs.fail(run, error)

    @guarded
    def model_start(
        self,
        serialized: dict[str, Any] | None,
        prompt: Any,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        md = metadata or {}
        model, tools = model_request(md, kwargs)
        name = run_name(serialized, kwargs, "model")
        span = self._runs.open(run_id, parent_run_id, md, "model", name, prompt).span
        span.model = model
        if tools:
            span.attributes["tools"] = tools
        self.trace.add(span)

    @_on_run
    def model_end(self, run: RunFrame, result: ModelResult) -> None:
        outputs = jsonready(result.produced)
        self._runs.calls_made(run, result.calls)
        run.span.usage = result.usage
        run.span.attributes.pop(STREAMED, None)
        if result.model:
            run.span.model = result.model
        self._runs.end(run, "ok", None, outputs)

    @_on_run
    def new_token(self, run: RunFrame, token: str) -> None:
        if run.span.status == "running":
            attrs = run.span.attributes
            attrs[STREAMED] = (attrs.get(STREAMED, "") + token)[-STREAMED_CHARS:]

    @guarded
    def tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        name = run_name(serialized, kwargs, "tool")
        inputs = kwargs.get("inputs")
        kind = tool_kind(name, inputs)
        args = inputs if inputs is not None else input_str
        skill = skill_arguments(inputs) if kind == "skill" else None
        # A skill load is named by the skill it opens; the tool stays in its attributes.
        span_name = skill["skill"] if skill else name
        call_id = kwargs.get("tool_call_id")
        md = metadata or {}
        # A pause leaves a task span under its tool call id, which scripted models repeat across
        # agents, with its step's checkpoint namespace, which LangGraph derives from the
        # checkpoint the step ran from: the same for the resumed call and no other conversation.
        resume_key = (
            f"{md.get('checkpoint_ns', '')}|{call_id}" if kind == "task" and call_id else None
        )
        runs = self._runs
        run = runs.open(run_id, parent_run_id, md, kind, span_name, args, resume_key=resume_key)
        span = run.span
        with self._lock:
            if call_id:
                span.attributes["tool_call_id"] = str(call_id)
                span.attributes.update(runs.call_position(run.agent, str(call_id)))
            if kind == "task":
                span.attributes.update(task_arguments(inputs))
            if skill is not None:
                span.attributes.update(skill, tool=name)
                runs.agent_opened(run.agent, skill["skill"])
        runs.publish(span)

    @_on_run
    def tool_end(self, run: RunFrame, output: Any) -> None:
        status, text = tool_outcome(output, run.span.attributes.get("tool_call_id"))
        if run.span.name == WRITE_TODOS_TOOL and status == "ok":
            todos = run.span.inputs.get("todos") if isinstance(run.span.inputs, dict) else None
            self._runs.agent_planned(run.agent, todos, self._runs.now())
        sub = run.subagent
        if run.span.kind == "task" and sub is not None:
            sub.attributes["returned"] = returned_keys(output)
            sub.attributes["result"] = text
        self._runs.end(run, status, None if status == "ok" else text, deferred(output))

    @guarded
    def retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: dict[str, Any] | None,
        kwargs: dict[str, Any],
    ) -> None:
        name = run_name(serialized, kwargs, "retriever")
        span = self._runs.open(run_id, parent_run_id, metadata or {}, "tool", name, query).span
        span.attributes["retriever"] = True
        self.trace.add(span)

    @_on_run
    def retriever_end(self, run: RunFrame, documents: Any) -> None:
        self._runs.end(run, "ok", None, deferred(documents))

    @guarded
    def finish(self) -> None:
        """Mark the trace finished; spans still running are marked ``interrupted``."""
        with self._lock:
            self._runs.finish()
            self.trace.finished = True
        self.trace.changed()


def _resume_key(
    kind: SpanKind, parent: RunFrame | None, md: Mapping[str, Any], name: str
) -> str | None:
    """Under which key a pause leaves this chain's span: a root agent by the agent object that
    ran it, or, for a graph not built by ``create_deep_agent``, by its name (its thread is the
    other half of every key); a sub-agent by the ``task`` span it runs under; other chains are
    never continued."""
    if kind == "agent" and parent is None:
        return str(md.get(AGENT_REF) or f"graph:{name}")
    if kind == "subagent" and parent is not None and parent.span.kind == "task":
        return parent.span.id
    return None
