"""``Tracer``: a LangChain callback handler that records any run as a :class:`Trace`.

It works on nbagents agents, upstream ``deepagents`` agents and plain LangGraph graphs without
any change to them. Spans are keyed by LangChain run id and parented by ``parent_run_id``, so
parallel sub-agents running on many threads (or tasks) never mix up their children.

Kinds:

- ``agent``: a root run, or an agent graph started outside a ``task`` call;
- ``subagent``: the run directly under a ``task`` tool run (or a run nbagents tagged as a
  sub-agent spawn);
- ``task``: a tool run named ``task``; ``model``: chat model and LLM calls; ``tool``: other tools
  and retrievers;
- ``chain``: LangGraph plumbing (node wrappers, middleware hooks, sequences), kept with
  ``hidden=True`` -- except a graph's own steps: every node of a plain LangGraph graph, and the
  nodes of an agent graph other than ``model``, ``tools`` and middleware hooks (``Name.hook``).

For a sub-agent spawned by nbagents' ``task`` tool the state diff comes from the run's metadata,
exactly; for other ``task`` tools (upstream deepagents) it is inferred: the child's input keys
against the parent's state at the call, tracked from the parent graph's input and node outputs
(``attributes["state_diff"] == "inferred"``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, LLMResult

from nbagents._contract import GENERAL_PURPOSE, SUBAGENT_TAG, TASK_TOOL, SpawnRecord, read_spawn
from nbagents._tokens import TokenUsage
from nbagents.tracing.inference import infer_diff, node_updates
from nbagents.tracing.jsonready import jsonready, shape
from nbagents.tracing.model import Span, SpanKind, SpanStatus, Trace

__all__ = ["Tracer"]

_log = logging.getLogger("nbagents.tracing")

VISIBLE_CHARS = 200_000

F = TypeVar("F", bound=Callable[..., None])


@dataclass(eq=False)
class _Agent:
    """What the tracer knows about one running agent (or sub-agent, or root run)."""

    span_id: str | None
    name: str
    depth: int
    spawn_id: str | None = None
    """The tool call id that spawned this sub-agent."""
    plain_graph: bool = False
    """A graph with no ``ls_integration`` metadata (not ``create_agent``/deepagents): all of its
    nodes are shown, not only the ones that are not agent plumbing."""
    state_input: Any = None
    updates: list[tuple[int, Any]] = field(default_factory=list)
    """Node outputs with their LangGraph step: to infer the state a ``task`` call saw."""


@dataclass(eq=False)
class _Run:
    span: Span
    agent: _Agent
    """The agent this run belongs to (for agent and sub-agent spans: their own)."""
    step: int
    node_of: _Agent | None = None
    """Set when this run is a LangGraph node of ``node_of``'s graph."""
    subagent: Span | None = None
    """For a ``task`` run: the sub-agent span it spawned."""
    parent: _Run | None = None
    paused_child: bool = False
    """A child was interrupted: a graph that then ends normally has paused, not finished."""


def _safe(method: F) -> F:
    """Never let a tracing failure reach the traced run; log the first one."""

    def wrapper(self: Tracer, *args: Any, **kwargs: Any) -> None:
        try:
            method(self, *args, **kwargs)
        except Exception:
            self._failures += 1
            if self._failures == 1:
                _log.exception(
                    "nbagents Tracer failed in %s; the run goes on, the trace may be incomplete "
                    "(further failures are not logged).",
                    method.__name__,
                )

    wrapper.__name__ = method.__name__
    wrapper.__doc__ = method.__doc__
    return cast(F, wrapper)


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
        self._runs: dict[UUID, _Run] = {}
        self._calls: dict[tuple[str | None, str], tuple[str, int]] = {}
        """(agent span id, tool call id) → (model span id, position in its tool calls)."""
        self._origin: float | None = None
        self._failures = 0

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

    @_safe
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
        name = _run_name(serialized, kwargs, "chain")
        md = metadata or {}
        tags = tags or []
        with self.lock:
            now = self._now()
            parent = self._runs.get(parent_run_id) if parent_run_id else None
            kind, agent, node_of = self._classify_chain(name, md, tags, parent)
            visible_node = (
                kind == "chain"
                and node_of is not None
                and md.get("langgraph_node") == name
                and (node_of.plain_graph or not _agent_plumbing(name))
            )
            span = Span(
                id=str(run_id),
                parent_id=parent.span.id if parent else None,
                kind=kind,
                name=name,
                agent=agent.name,
                depth=agent.depth,
                start=now,
                hidden=kind == "chain" and not visible_node,
            )
            run = _Run(span, agent, _step(md, parent), node_of=node_of, parent=parent)
            if kind in ("agent", "subagent"):
                agent.span_id = span.id
                agent.state_input = inputs
                span.attributes.update(self._agent_attributes(kind, agent, md, parent, inputs))
            elif kind == "chain" and node_of is not None:
                span.attributes.update(self._call_position(agent, _tool_call_of(inputs)))
            if parent is not None and parent.span.kind == "task" and kind == "subagent":
                parent.subagent = span
            self._runs[run_id] = run
        span.inputs = shape(inputs) if span.hidden else jsonready(inputs, max_chars=VISIBLE_CHARS)
        self.trace.add(span)

    def _classify_chain(
        self, name: str, md: Mapping[str, Any], tags: Sequence[str], parent: _Run | None
    ) -> tuple[SpanKind, _Agent, _Agent | None]:
        """The kind of a chain run, the agent it belongs to, and the graph it is a node of."""
        create_agent_graph = bool(md.get("ls_integration"))
        if parent is None:
            agent = _Agent(
                None,
                str(md.get("lc_agent_name") or name),
                0,
                spawn_id=_spawn_id(read_spawn(md)),
                plain_graph=not create_agent_graph,
            )
            return "agent", agent, None
        outer = parent.agent
        spawn = read_spawn(md)
        spawned_here = parent.span.kind == "task" or (
            SUBAGENT_TAG in tags and spawn is not None and spawn["tool_call_id"] != outer.spawn_id
        )
        if spawned_here:
            call_id = (
                parent.span.attributes.get("tool_call_id") if parent.span.kind == "task" else None
            )
            agent = _Agent(
                None,
                name,
                outer.depth + 1,
                spawn_id=call_id or _spawn_id(spawn),
                plain_graph=not create_agent_graph,
            )
            return "subagent", agent, None
        if (
            md.get("lc_agent_name") == name
            and name != outer.name
            and parent.span.kind in ("tool", "chain")
        ):
            agent = _Agent(None, name, outer.depth + 1, outer.spawn_id, not create_agent_graph)
            return "agent", agent, None
        node_of = outer if parent.span.id == outer.span_id else None
        return "chain", outer, node_of

    def _agent_attributes(
        self,
        kind: str,
        agent: _Agent,
        md: Mapping[str, Any],
        parent: _Run | None,
        inputs: Any,
    ) -> dict[str, Any]:
        if kind != "subagent" or parent is None:
            return {}
        task = parent if parent.span.kind == "task" else None
        spawn = read_spawn(md)
        attrs: dict[str, Any] = {
            "description": "",
            "parent_agent": parent.agent.name,
            "tool_call_id": agent.spawn_id,
        }
        if task is not None:
            attrs["description"] = task.span.attributes.get("description", "")
            attrs["subagent_type"] = task.span.attributes.get("subagent_type", agent.name)
        if spawn is not None and spawn["tool_call_id"] == agent.spawn_id:
            # nbagents' task tool says exactly what it withheld and passed.
            attrs["description"] = spawn["description"]
            attrs["withheld"] = spawn["withheld"]
            attrs["passed"] = spawn["passed"]
        else:
            withheld, passed = infer_diff(
                parent.agent.state_input, parent.agent.updates, parent.step, inputs
            )
            attrs["withheld"], attrs["passed"] = withheld, passed
            attrs["state_diff"] = "inferred"
        return attrs

    @_safe
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
        status: SpanStatus = "ok"
        if run.span.kind in ("agent", "subagent") and (
            run.paused_child or _interrupted_output(outputs)
        ):
            status = "interrupted"
        converted = (
            shape(outputs) if run.span.hidden else jsonready(outputs, max_chars=VISIBLE_CHARS)
        )
        with self.lock:
            self._end(run, status, None, converted)
            if run.span.kind in ("agent", "subagent"):
                run.agent.state_input = None
                run.agent.updates = []
        self.trace.changed()

    @_safe
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

    @_safe
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

    @_safe
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
        params: Mapping[str, Any] = kwargs.get("invocation_params") or {}
        model = md.get("ls_model_name") or _first(params, "model", "model_name", "model_id")
        tools = [_tool_name(t) for t in params.get("tools") or ()]
        span = self._open(
            run_id, parent_run_id, md, "model", _run_name(serialized, kwargs, "model"), prompt
        )
        span.model = str(model) if model else None
        if tools:
            span.attributes["tools"] = tools
        self.trace.add(span)

    @_safe
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
        messages: list[BaseMessage] = []
        texts: list[str] = []
        for generations in response.generations:
            for generation in generations:
                if isinstance(generation, ChatGeneration):
                    messages.append(generation.message)
                else:
                    texts.append(generation.text)
        usage = TokenUsage()
        model: str | None = None
        calls: list[tuple[str, int]] = []
        for message in messages:
            usage = usage + TokenUsage.from_usage_metadata(getattr(message, "usage_metadata", None))
            meta = message.response_metadata or {}
            model = model or _first(meta, "model_name", "model", "model_id")
            calls.extend(
                (str(c.get("id")), i)
                for i, c in enumerate(getattr(message, "tool_calls", None) or [])
                if c.get("id")
            )
        llm_output = response.llm_output or {}
        if not usage:
            usage = _legacy_usage(llm_output.get("token_usage") or llm_output.get("usage"))
        model = model or _first(llm_output, "model_name", "model", "model_id")
        produced: list[Any] = messages or texts
        outputs = jsonready(produced[0] if len(produced) == 1 else produced)
        with self.lock:
            for call_id, index in calls:
                self._calls[(run.agent.span_id, call_id)] = (run.span.id, index)
            run.span.usage = usage
            if model:
                run.span.model = str(model)
            self._end(run, "ok", None, outputs)
        self.trace.changed()

    @_safe
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

    @_safe
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
        name = _run_name(serialized, kwargs, "tool")
        kind: SpanKind = "task" if name == TASK_TOOL else "tool"
        args = inputs if inputs is not None else input_str
        span = self._open(run_id, parent_run_id, metadata or {}, kind, name, args)
        call_id = kwargs.get("tool_call_id")
        with self.lock:
            run = self._runs[run_id]
            if call_id:
                span.attributes["tool_call_id"] = str(call_id)
                span.attributes.update(self._call_position(run.agent, str(call_id)))
            if kind == "task":
                given = inputs if isinstance(inputs, Mapping) else {}
                span.attributes["description"] = str(given.get("description", ""))
                span.attributes["subagent_type"] = str(
                    given.get("subagent_type") or GENERAL_PURPOSE
                )
        self.trace.add(span)

    @_safe
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
        message = _tool_message(output, run.span.attributes.get("tool_call_id"))
        converted = jsonready(output)
        status: SpanStatus = "ok"
        error: str | None = None
        if message is not None and message.status == "error":
            status, error = "error", _text(message)
        with self.lock:
            sub = run.subagent
            if run.span.kind == "task" and sub is not None:
                sub.attributes["returned"] = _returned_keys(output)
                sub.attributes["result"] = _text(message) if message is not None else None
            self._end(run, status, error, converted)
        self.trace.changed()

    @_safe
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

    @_safe
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
        name = _run_name(serialized, kwargs, "retriever")
        span = self._open(run_id, parent_run_id, metadata or {}, "tool", name, query)
        span.attributes["retriever"] = True
        self.trace.add(span)

    @_safe
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

    @_safe
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

    # -- helpers ---------------------------------------------------------------------------------

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
    ) -> Span:
        """Create and register the span of a model, tool or retriever run (not yet added)."""
        converted = jsonready(inputs)
        with self.lock:
            parent = self._runs.get(parent_run_id) if parent_run_id else None
            if parent is not None:
                agent = parent.agent
            else:
                agent = _Agent(None, str(md.get("lc_agent_name") or name), 0)
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
            self._runs[run_id] = _Run(span, agent, _step(md, parent), parent=parent)
        return span

    def _call_position(self, agent: _Agent, call_id: str | None) -> dict[str, Any]:
        if not call_id:
            return {}
        found = self._calls.get((agent.span_id, call_id))
        if found is None:
            return {}
        return {"batch": found[0], "call_index": found[1]}

    def _end(self, run: _Run, status: SpanStatus, error: str | None, outputs: Any) -> None:
        span = run.span
        span.end = self._now()
        span.status = status
        span.error = error
        span.outputs = outputs

    def _fail(self, run_id: UUID, error: BaseException) -> None:
        with self.lock:
            run = self._runs.get(run_id)
            if run is None:
                return
            status = _error_status(error)
            text = None if status == "ok" else _error_text(error)
            self._end(run, status, text, None)
            if status == "interrupted" and run.parent is not None:
                run.parent.paused_child = True
            if run.span.kind in ("agent", "subagent"):
                run.agent.state_input = None
                run.agent.updates = []
        self.trace.changed()


# -- pure helpers ----------------------------------------------------------------------------------


def _run_name(serialized: Mapping[str, Any] | None, kwargs: Mapping[str, Any], default: str) -> str:
    name = kwargs.get("name")
    if name:
        return str(name)
    if serialized:
        if serialized.get("name"):
            return str(serialized["name"])
        ident = serialized.get("id")
        if isinstance(ident, list) and ident:
            return str(ident[-1])
    return default


def _agent_plumbing(node: str) -> bool:
    """Nodes of a ``create_agent`` graph that only wrap what users see as model and tool calls."""
    return node in ("model", "tools") or "." in node or node.startswith("__")


def _spawn_id(spawn: SpawnRecord | None) -> str | None:
    return spawn["tool_call_id"] if spawn is not None else None


def _step(md: Mapping[str, Any], parent: _Run | None) -> int:
    step = md.get("langgraph_step")
    if isinstance(step, int):
        return step
    return parent.step if parent is not None else -1


def _first(data: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = data.get(key)
        if value:
            return value
    return None


def _tool_name(tool: Any) -> str:
    if isinstance(tool, Mapping):
        function = tool.get("function")
        if isinstance(function, Mapping) and function.get("name"):
            return str(function["name"])
        if tool.get("name"):
            return str(tool["name"])
    return str(getattr(tool, "name", "?"))


def _legacy_usage(usage: Any) -> TokenUsage:
    """Token counts from ``llm_output`` of providers that report no ``usage_metadata``."""
    if not isinstance(usage, Mapping):
        return TokenUsage()
    inp = int(usage.get("prompt_tokens", usage.get("input_tokens", 0)) or 0)
    out = int(usage.get("completion_tokens", usage.get("output_tokens", 0)) or 0)
    total = int(usage.get("total_tokens", inp + out) or 0)
    return TokenUsage(input=inp, output=out, total=total)


def _tool_call_of(inputs: Any) -> str | None:
    """The tool call id a LangGraph ``tools`` node run was sent (one ``Send`` per call)."""
    item = inputs
    if isinstance(item, list | tuple) and len(item) == 1:
        item = item[0]
    if isinstance(item, Mapping):
        if item.get("__type") == "tool_call_with_context":
            item = item.get("tool_call")
        if isinstance(item, Mapping) and item.get("type") == "tool_call" and item.get("id"):
            return str(item["id"])
    return None


def _interrupted_output(outputs: Any) -> bool:
    return isinstance(outputs, Mapping) and bool(outputs.get("__interrupt__"))


def _error_status(error: BaseException) -> SpanStatus:
    names = {cls.__name__ for cls in type(error).__mro__}
    if "ParentCommand" in names:
        return "ok"  # a Command routed to the parent graph: control flow, not a failure
    if "GraphBubbleUp" in names or "GraphInterrupt" in names:
        return "interrupted"
    return "error"


def _error_text(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 20_000 else text[:20_000] + "…"


def _tool_message(output: Any, call_id: Any) -> ToolMessage | None:
    if isinstance(output, ToolMessage):
        return output
    messages: list[Any] = []
    for update in node_updates(output):
        found = update.get("messages")
        messages.extend(found if isinstance(found, list | tuple) else [found])
    tool_messages = [m for m in messages if isinstance(m, ToolMessage)]
    for message in tool_messages:
        if call_id and message.tool_call_id == call_id:
            return message
    return tool_messages[-1] if tool_messages else None


def _returned_keys(output: Any) -> list[str]:
    keys = {k for update in node_updates(output) for k in update if k != "messages"}
    return sorted(keys)


def _text(message: ToolMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return message.text
