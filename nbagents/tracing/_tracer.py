"""``Tracer``: a LangChain callback handler that records any run as a :class:`Trace`.

It works on nbagents agents, upstream ``deepagents`` agents and plain LangGraph graphs without
any change to them. Spans are keyed by LangChain run id and parented by ``parent_run_id``, so
parallel sub-agents running on many threads (or tasks) never mix up their children.

A callback only takes down what happened and when, in a queue on the trace; the trace applies
the queued events (:class:`~nbagents.tracing._writer.TraceWriter`), in order, when something
reads it (a view, an export, ``len(trace)``), when the tracer finishes, or once
:data:`APPLY_AT` events are waiting: done in one pass, the work stays in the processor's caches,
which hundreds of agent threads taking turns would evict. What must be read at the time is read
at the time: the clock, a root run's containers (the caller may change them afterwards) and a
model's reply (``create_agent`` renames it once the call has ended).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult

from nbagents._guard import Guard, guarded
from nbagents.tracing._extract import model_result
from nbagents.tracing._writer import TraceWriter
from nbagents.tracing.model import Trace

__all__ = ["APPLY_AT", "Tracer"]

APPLY_AT = 256
"""Events waiting in the queue at which the callback that adds one applies them all. Short,
because a queued event keeps alive what its callback was given (whole graph states) and the
garbage collector walks it (``bench_tracer_overhead.py`` measures it)."""


def _as_given(value: Any, parent_run_id: UUID | None) -> Any:
    """What a span keeps of a run's input or output, before it is converted when read. A root
    run's belongs to its caller, who may change it once the call returns (append to
    ``result["messages"]``): its containers are copied now (the messages in them are not:
    nobody edits a sent message). Inside a run, LangChain and LangGraph make new messages and
    states rather than change them: a reference is kept."""
    return _containers_copied(value) if parent_run_id is None else value


def _prompt_as_given(prompts: list[Any], parent_run_id: UUID | None) -> Any:
    """A model run's messages (or texts) as given: the one list (or text) of a single prompt."""
    return _as_given(prompts[0] if len(prompts) == 1 else prompts, parent_run_id)


def _containers_copied(value: Any, depth: int = 0) -> Any:
    """``value`` with its dicts and lists (four levels down) copied, not what they hold."""
    if depth > 3:
        return value
    if isinstance(value, Mapping):
        return {k: _containers_copied(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_containers_copied(v, depth + 1) for v in value]
    return value


def _on_start(event: Callable[..., None], given: Callable[[Any, UUID | None], Any]) -> Any:
    """The callback for a run's start: queues ``event`` (a :class:`TraceWriter` method) with
    what the run was given, as ``given`` keeps it (a tool's ``inputs``, its arguments beside
    their text, as :func:`_as_given` keeps them)."""

    @guarded
    def on_start(
        self: Tracer,
        serialized: dict[str, Any] | None,
        payload: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if "inputs" in kwargs:
            kwargs["inputs"] = _as_given(kwargs["inputs"], parent_run_id)
        payload = given(payload, parent_run_id)
        self._later(
            event, self._writer, serialized, payload, run_id, parent_run_id, metadata, kwargs
        )

    return on_start


def _on_end(event: Callable[..., None]) -> Any:
    """The callback for a run's end: queues ``event`` (a :class:`TraceWriter` method) with the
    run's output as given."""

    @guarded
    def on_end(
        self: Tracer, output: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kw: Any
    ) -> None:
        self._later(event, self._writer, _as_given(output, parent_run_id), run_id)

    return on_end


class Tracer(BaseCallbackHandler):
    """Records every run it sees into ``self.trace``.

    Pass it as ``config={"callbacks": [tracer]}``, or use ``nbagents.trace()`` to attach one to
    every run of a block. Thread-safe and async-safe: LangChain calls it inline from both sync
    and async runs; events are applied in the order they happened, under the trace's lock.
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
        self._writer = TraceWriter(self.trace, self.guard)
        self._apply = self._writer.apply
        self._queued = self.trace._queued

    def __repr__(self) -> str:
        return f"<Tracer: {self.trace.summary()}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Tracer:
        # Callback managers are sometimes deep-copied with a config; a tracer must stay one.
        return self

    def __copy__(self) -> Tracer:
        return self

    def _later(self, event: Callable[..., None], *args: Any) -> None:
        """Queue ``event(*args)`` for the trace to apply, stamped with the time it happened."""
        queued = self._queued
        queued.append((self._apply, time.perf_counter(), event, args))
        if len(queued) >= APPLY_AT:
            self.trace._catch_up()
        self.trace.changed()

    on_chain_start = _on_start(TraceWriter.chain_start, _as_given)
    on_chain_end = _on_end(TraceWriter.chain_end)

    on_chain_error = _on_end(TraceWriter.failed)  # an error is no container: kept as given
    # A model, tool or retriever run that failed is recorded as a chain run that failed is.
    on_llm_error = on_tool_error = on_retriever_error = on_chain_error

    on_chat_model_start = _on_start(TraceWriter.model_start, _prompt_as_given)
    # A completion model's prompts are recorded as a chat model's messages are.
    on_llm_start = on_chat_model_start

    @guarded
    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        result = model_result(response)
        # The reply as the model gave it: create_agent names it after its agent once the call
        # has ended. A shallow copy keeps it so; nobody edits what the message holds.
        produced = result.produced
        if isinstance(produced, BaseMessage):
            result.produced = copy.copy(produced)
        elif isinstance(produced, list):
            result.produced = [copy.copy(m) if isinstance(m, BaseMessage) else m for m in produced]
        self._later(self._writer.model_end, result, run_id)

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
        if isinstance(token, str) and token:
            self._later(self._writer.new_token, token, run_id)

    on_tool_start = _on_start(TraceWriter.tool_start, _as_given)
    on_tool_end = _on_end(TraceWriter.tool_end)

    on_retriever_start = _on_start(TraceWriter.retriever_start, _as_given)
    on_retriever_end = _on_end(TraceWriter.retriever_end)

    def finish(self) -> None:
        """Mark the trace finished; spans still running are marked ``interrupted``.

        A span that ends later (a run that outlived the traced block) still records its end.
        """
        self.trace._catch_up()
        self._writer.finish()
