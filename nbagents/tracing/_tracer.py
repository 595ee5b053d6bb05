"""``Tracer``: a LangChain callback handler that records any run as a :class:`Trace`.

It works on nbagents agents, upstream ``deepagents`` agents and plain LangGraph graphs without
any change to them. Spans are keyed by LangChain run id and parented by ``parent_run_id``, so
parallel sub-agents running on many threads (or tasks) never mix up their children.

This module is the bookkeeping: open runs, their spans and the trace's lock. Which kind a run
is lives in :mod:`nbagents.tracing._classify`; what is read out of a callback's payload lives in
:mod:`nbagents.tracing._extract`. (Its length is the twelve callback methods' keyword
signatures, which LangChain fixes; each body is a few lines.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult

from nbagents._guard import Guard, guarded
from nbagents.tracing._classify import (
    AGENT_KINDS,
    agent_of,
    chain_end_status,
    classify_chain,
    error_status,
    is_visible_node,
    step_of,
    tool_kind,
)
from nbagents.tracing._extract import (
    error_text,
    model_request,
    model_result,
    offered_skills,
    returned_keys,
    run_name,
    skill_arguments,
    subagent_attributes,
    task_arguments,
    tool_call_of,
    tool_outcome,
)
from nbagents.tracing._jsonready import jsonready, shape
from nbagents.tracing._pending import (
    PENDING,
    THREAD,
    PausedSpans,
    is_pause,
    is_resume,
    pending_requests,
    thread_of,
)
from nbagents.tracing._runs import AgentFrame, RunFrame
from nbagents.tracing.model import STREAMED, STREAMED_CHARS, Span, SpanKind, SpanStatus, Trace

__all__ = ["Tracer"]

VISIBLE_CHARS = 200_000


class Tracer(BaseCallbackHandler):
    """Records every run it sees into ``self.trace``.

    Pass it as ``config={"callbacks": [tracer]}``, or use ``nbagents.trace()`` to attach one to
    every run of a block. Thread-safe and async-safe: LangChain calls it inline from both sync
    and async runs, and every change happens under the trace's lock.
    """

    run_inline = True
    """Called directly in async runs (not in a thread pool), so events keep their order."""
    raise_error = False

    def __init__(self, trace: Trace | None = None, *, title: str = "") -> None:
        super().__init__()
        self.trace = trace if trace is not None else Trace(title=title)
        self.trace._recorder = self
        self.guard = Guard(
            "nbagents Tracer failed in {name}; the run goes on, the trace may be incomplete "
            "(further failures are not logged).",
            logger="nbagents.tracing",
        )
        self._runs: dict[UUID, RunFrame] = {}
        self._calls: dict[tuple[str | None, str], tuple[str, int]] = {}
        """(agent span id, tool call id) → (model span id, position in its tool calls)."""
        self._origin: float | None = None
        self._paused = PausedSpans()
        self._resume_keys: dict[str, tuple[str | None, str]] = {}
        self._placed: set[str] = set()
        """Interrupt ids whose requests are on a span (see ``_pending``)."""
        self._waiting: dict[str | None, list[Span]] = {}
        """Spans holding pending requests, by the thread of their run."""
        """span id → (thread, key) under which a pause leaves it for its resumption."""

    @property
    def lock(self) -> threading.RLock:
        return self.trace.lock

    def __repr__(self) -> str:
        return f"<Tracer: {self.trace.summary()}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Tracer:
        # Callback managers are sometimes deep-copied with a config; a tracer must stay one.
        return self

    def __copy__(self) -> Tracer:
        return self

    # -- chains: graphs, nodes, sequences --------------------------------------------------------

    @guarded
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = run_name(serialized, kwargs, "chain")
        md = metadata or {}
        with self.lock:
            now = self._now()
            parent = self._runs.get(parent_run_id) if parent_run_id else None
            kind, agent, node_of = classify_chain(name, md, tags or [], parent)
            key = _resume_key(kind, parent)
            # New input on a paused thread starts a new run; only Command(resume=...) continues.
            continues = key is not None and (parent is not None or is_resume(inputs))
            if parent is None and is_resume(inputs):
                self._answered(thread_of(md))
            reopened = self._reopen(md, kind, key, now) if continues and key is not None else None
            span = reopened or Span(
                id=str(run_id),
                parent_id=parent.span.id if parent else None,
                kind=kind,
                name=name,
                agent=agent.name,
                depth=agent.depth,
                start=now,
                hidden=kind == "chain" and not is_visible_node(kind, name, md, node_of),
            )
            if key is not None:
                self._resume_keys[span.id] = (thread_of(md), key)
                if parent is None and thread_of(md) is not None:
                    span.attributes[THREAD] = thread_of(md)
            run = RunFrame(span, agent, step_of(md, parent), node_of=node_of, parent=parent)
            if kind in AGENT_KINDS:
                agent.span_id = span.id
                agent.state_input = inputs
                span.attributes.update(offered_skills(inputs) or {})  # a resumed thread's
                if kind == "subagent" and parent is not None:
                    span.attributes.update(subagent_attributes(agent, md, parent, inputs))
            elif kind == "chain" and node_of is not None:
                span.attributes.update(self._call_position(agent, tool_call_of(inputs)))
            if parent is not None and parent.span.kind == "task" and kind == "subagent":
                parent.subagent = span
            self._runs[run_id] = run
        if reopened is None:  # a continued span keeps what it was first given
            span.inputs = (
                shape(inputs) if span.hidden else jsonready(inputs, max_chars=VISIBLE_CHARS)
            )
        self._publish(span)

    @guarded
    def on_chain_end(
        self,
        outputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self.lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            if run.node_of is not None and run.span.parent_id == run.node_of.span_id:
                run.node_of.updates.append((run.step, outputs))
                self._agent_offered(run.node_of, outputs)
        status = chain_end_status(run, outputs)
        converted = (
            shape(outputs) if run.span.hidden else jsonready(outputs, max_chars=VISIBLE_CHARS)
        )
        with self.lock:
            self._end(run, status, None, converted)
            if run.span.kind in AGENT_KINDS:
                run.agent.forget_state()
        self.trace.changed()

    @guarded
    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._fail(run_id, error)

    # -- models ----------------------------------------------------------------------------------

    @guarded
    def on_chat_model_start(
        self,
        serialized: dict[str, Any] | None,
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        prompt = messages[0] if len(messages) == 1 else messages
        self._start_model(serialized, prompt, run_id, parent_run_id, metadata, kwargs)

    @guarded
    def on_llm_start(
        self,
        serialized: dict[str, Any] | None,
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        prompt = prompts[0] if len(prompts) == 1 else prompts
        self._start_model(serialized, prompt, run_id, parent_run_id, metadata, kwargs)

    def _start_model(
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
        span = self._open(
            run_id, parent_run_id, md, "model", run_name(serialized, kwargs, "model"), prompt
        )
        span.model = model
        if tools:
            span.attributes["tools"] = tools
        self.trace.add(span)

    @guarded
    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self.lock:
            run = self._runs.get(run_id)
        if run is None:
            return
        result = model_result(response)
        outputs = jsonready(result.produced)
        with self.lock:
            for call_id, index in result.calls:
                self._calls[(run.agent.span_id, call_id)] = (run.span.id, index)
            run.span.usage = result.usage
            run.span.attributes.pop(STREAMED, None)
            if result.model:
                run.span.model = result.model
            self._end(run, "ok", None, outputs)
        self.trace.changed()

    @guarded
    def on_llm_new_token(
        self, token: str | list[str | dict[str, Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        # The views show a streaming reply growing; the finished reply replaces it at on_llm_end.
        if isinstance(token, list):  # content blocks (e.g. Anthropic): their text parts
            token = "".join(
                b if isinstance(b, str) else str(b.get("text") or "")
                for b in token
                if isinstance(b, str | dict)
            )
        if not isinstance(token, str) or not token:
            return
        with self.lock:
            run = self._runs.get(run_id)
            if run is None or run.span.status != "running":
                return
            attrs = run.span.attributes
            text = attrs.get(STREAMED, "") + token
            attrs[STREAMED] = text[-STREAMED_CHARS:]
        self.trace.changed()

    @guarded
    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._fail(run_id, error)

    # -- tools -----------------------------------------------------------------------------------

    @guarded
    def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = run_name(serialized, kwargs, "tool")
        kind = tool_kind(name, inputs)
        args = inputs if inputs is not None else input_str
        skill = skill_arguments(inputs) if kind == "skill" else None
        # A skill load is named by the skill it opens; the tool stays in its attributes.
        span_name = skill["skill"] if skill else name
        call_id = kwargs.get("tool_call_id")
        resume_key = str(call_id) if kind == "task" and call_id else None
        span = self._open(
            run_id, parent_run_id, metadata or {}, kind, span_name, args, resume_key=resume_key
        )
        with self.lock:
            run = self._runs[run_id]
            if call_id:
                span.attributes["tool_call_id"] = str(call_id)
                span.attributes.update(self._call_position(run.agent, str(call_id)))
            if kind == "task":
                span.attributes.update(task_arguments(inputs))
            if skill is not None:
                span.attributes.update(skill, tool=name)
                self._agent_opened(run.agent, skill["skill"])
        self._publish(span)

    @guarded
    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self.lock:
            run = self._runs.get(run_id)
        if run is None:
            return
        outcome = tool_outcome(output, run.span.attributes.get("tool_call_id"))
        converted = jsonready(output)
        with self.lock:
            sub = run.subagent
            if run.span.kind == "task" and sub is not None:
                sub.attributes["returned"] = returned_keys(output)
                sub.attributes["result"] = outcome.text
            self._end(run, outcome.status, outcome.error, converted)
        self.trace.changed()

    @guarded
    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._fail(run_id, error)

    # -- retrievers (shown as tools) ---------------------------------------------------------------

    @guarded
    def on_retriever_start(
        self,
        serialized: dict[str, Any] | None,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        name = run_name(serialized, kwargs, "retriever")
        span = self._open(run_id, parent_run_id, metadata or {}, "tool", name, query)
        span.attributes["retriever"] = True
        self.trace.add(span)

    @guarded
    def on_retriever_end(
        self,
        documents: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        with self.lock:
            run = self._runs.get(run_id)
        if run is None:
            return
        converted = jsonready(documents)
        with self.lock:
            self._end(run, "ok", None, converted)
        self.trace.changed()

    @guarded
    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self._fail(run_id, error)

    # -- ending the trace --------------------------------------------------------------------------

    @guarded
    def finish(self) -> None:
        """Mark the trace finished; spans still running are marked ``interrupted``.

        A span that ends later (a run that outlived the traced block) still records its end.
        """
        with self.lock:
            for run in self._runs.values():
                if run.span.status == "running":
                    run.span.status = "interrupted"
                    run.span.error = "still running when the trace ended"
            self.trace.finished = True
        self.trace.changed()

    # -- bookkeeping -----------------------------------------------------------------------------

    def _now(self) -> float:
        now = time.perf_counter()
        if self._origin is None:
            self._origin = now
        return round(now - self._origin, 6)

    def _open(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        md: Mapping[str, Any],
        kind: SpanKind,
        name: str,
        inputs: Any,
        *,
        resume_key: str | None = None,
    ) -> Span:
        """Create and register the span of a model, tool or retriever run (not yet added), or
        reopen the one a pause left under ``resume_key`` (a ``task`` call's id)."""
        converted = jsonready(inputs)
        with self.lock:
            parent = self._runs.get(parent_run_id) if parent_run_id else None
            agent = agent_of(md, name, parent)
            if resume_key is not None:
                reopened = self._reopen(md, kind, resume_key, self._now())
                if reopened is not None:
                    frame = RunFrame(reopened, agent, step_of(md, parent), parent=parent)
                    self._runs[run_id] = frame
                    return reopened
                self._resume_keys[str(run_id)] = (thread_of(md), resume_key)
            span = Span(
                id=str(run_id),
                parent_id=parent.span.id if parent else None,
                kind=kind,
                name=name,
                agent=agent.name,
                depth=agent.depth,
                start=self._now(),
                inputs=converted,
            )
            self._runs[run_id] = RunFrame(span, agent, step_of(md, parent), parent=parent)
        return span

    def _reopen(self, md: Mapping[str, Any], kind: str, key: str, now: float) -> Span | None:
        return self._paused.resume(thread_of(md), kind, key, now)

    def _publish(self, span: Span) -> None:
        """Add a new span to the trace, or tell it that a reopened one changed."""
        try:
            self.trace.get(span.id)
        except KeyError:
            self.trace.add(span)
        else:
            self.trace.changed()

    def _agent_span(self, agent: AgentFrame) -> Span | None:
        try:
            return self.trace.get(agent.span_id) if agent.span_id else None
        except KeyError:
            return None

    def _agent_offered(self, agent: AgentFrame, outputs: Any) -> None:
        """Record on the agent's span the skills a node (the skills middleware) offered it."""
        offered = offered_skills(outputs)
        span = self._agent_span(agent) if offered is not None else None
        if span is not None and offered is not None:
            span.attributes.update(offered)

    def _agent_opened(self, agent: AgentFrame, skill: str) -> None:
        span = self._agent_span(agent)
        if span is not None:
            opened = span.attributes.setdefault("skills_opened", [])
            if skill not in opened:
                opened.append(skill)

    def _call_position(self, agent: AgentFrame, call_id: str | None) -> dict[str, Any]:
        if not call_id:
            return {}
        found = self._calls.get((agent.span_id, call_id))
        if found is None:
            return {}
        return {"batch": found[0], "call_index": found[1]}

    def _end(self, run: RunFrame, status: SpanStatus, error: str | None, outputs: Any) -> None:
        span = run.span
        span.end = self._now()
        span.status = status
        span.error = error
        span.outputs = outputs
        if status == "interrupted" and span.id in self._resume_keys:
            self._paused.paused(span, *self._resume_keys[span.id])

    def _fail(self, run_id: UUID, error: BaseException) -> None:
        with self.lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            status = error_status(error)
            paused = is_pause(error)
            text = None if status == "ok" or paused else error_text(error)
            self._end(run, status, text, None)
            if paused:
                self._place_pending(run, error)
            if status == "interrupted" and run.parent is not None:
                run.parent.paused_child = True
            if run.span.kind in AGENT_KINDS:
                run.agent.forget_state()
                if status != "ok":
                    self._cut_off(run.span, text)
        self.trace.changed()

    def _place_pending(self, run: RunFrame, error: BaseException) -> None:
        """Put what the pause waits for on the nearest visible span it passed, once."""
        requests = [r for r in pending_requests(error) if r["interrupt_id"] not in self._placed]
        if not requests:
            return
        frame: RunFrame | None = run
        while frame is not None and frame.span.hidden:
            frame = frame.parent
        if frame is None:
            return
        frame.span.attributes.setdefault(PENDING, []).extend(requests)
        self._placed.update(r["interrupt_id"] for r in requests)
        root = frame
        while root.parent is not None:
            root = root.parent
        self._waiting.setdefault(root.span.attributes.get(THREAD), []).append(frame.span)

    def _answered(self, thread: str | None) -> None:
        """Resuming a thread answers what it waited for (what is left unanswered pauses again)."""
        for span in self._waiting.pop(thread, ()):
            for request in span.attributes.pop(PENDING, ()):
                self._placed.discard(request["interrupt_id"])

    def _cut_off(self, agent_span: Span, reason: str | None) -> None:
        """Close what an agent left running when it stopped: LangChain reports no end for a
        tool or ``task`` call whose task was cancelled under it, so it would run forever."""
        now = self._now()
        for span in self.trace.descendants(agent_span):
            if span.status == "running":
                span.status = "interrupted"
                span.end = now
                span.error = (
                    f"stopped with its agent: {reason}" if reason else "stopped with its agent"
                )


def _resume_key(kind: SpanKind, parent: RunFrame | None) -> str | None:
    """Under which key a pause leaves this chain's span: a root agent by its thread alone, a
    sub-agent by the ``task`` span it runs under; other chains are never continued."""
    if kind == "agent" and parent is None:
        return ""
    if kind == "subagent" and parent is not None and parent.span.kind == "task":
        return parent.span.id
    return None
