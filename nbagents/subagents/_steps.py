"""A remote run's steps (``stream_mode="tasks"``), re-emitted as LangChain callbacks.

The server reports each step (one node run) when it starts, with its input, and when it ends,
with what it wrote, its error or its interrupts: enough for a trace, at a fraction of the
server's cost of ``stream_mode="events"``. A step that runs tool calls opens a tool run per call;
an agent graph's ``model`` step (``ls_integration`` in its metadata) opens a chat model run
ended with the reply it wrote (exact usage, model name); any other step opens a chain run named
after its node, with a model reply or tool result it wrote shown under it (not in an agent
graph, where such a tool result, an approval's rejection, ran no tool). A graph run inside a
step (``stream_subgraphs``) opens a chain run under that step's tool call. What only
``"events"`` shows (system prompt, streamed tokens, unwritten model calls) is listed in
``docs/remote-subagents.md``.
"""

from __future__ import annotations

import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import LLMResult

from nbagents.subagents._relay import (
    Call,
    Plan,
    Relay,
    RemotePause,
    Start,
    kept_metadata,
    llm_result,
    remote_error,
    revive,
    run_uuid,
)
from nbagents.subagents._stream import channel_writes

__all__ = ["StepRelay", "namespace_of"]

_MODEL_STEP = "model"
"""The node of an agent graph (``create_agent``, deepagents) that makes its model call."""


def namespace_of(event: str) -> tuple[str, ...]:
    """The graph a stream part comes from: ``"tasks|tools:<id>"`` names the graph run inside
    the step ``<id>``; ``"tasks"`` is the remote graph itself, ``()``."""
    return tuple(event.split("|")[1:])


@dataclass
class _Step:
    """What one running step opened: a run per tool call (``tools``, by call id), or one run."""

    graph: str  # the graph run it is a step of (its namespace, "" for the remote graph)
    node: str
    kind: str
    key: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    graphs: list[str] = field(default_factory=list)  # graph runs opened inside it
    of_agent: bool = False
    """A step of an agent graph: a tool result it writes (an approval's rejection) ran no tool."""


class StepRelay(Relay):
    """Plans the callbacks of one remote run from its ``tasks`` (and ``values``) parts."""

    def __init__(self, root: Any) -> None:
        super().__init__(root)
        self._steps: dict[str, _Step] = {}
        self._step_numbers: dict[str, int] = {}
        """Per graph run, its ``values`` parts so far: the number of the step that starts next."""
        self._graph_input: dict[str, Any] = {}
        self._graph_output: dict[str, Any] = {}
        self._seen: set[str] = set()
        """Ids of the messages steps were given or wrote: a reply is shown once."""
        self._calls: dict[str, Mapping[str, Any]] = {}
        """Tool calls of the replies so far, by id, for tool results no tool step announced."""

    def plan(self, event: str, data: Mapping[str, Any]) -> Plan:
        namespace = namespace_of(event)
        if event.startswith("values"):
            self._values(namespace, data)
        elif event.startswith("tasks"):
            step_id = str(data.get("id") or "")
            if "input" in data:
                yield from self._start(namespace, step_id, data)
            else:
                yield from self._end(step_id, data)

    def abandon(self, error: BaseException) -> list[Call]:
        self._steps.clear()
        return super().abandon(error)

    def _values(self, namespace: tuple[str, ...], data: Mapping[str, Any]) -> None:
        graph = _key(namespace)
        number = self._step_numbers.get(graph, 0)
        self._step_numbers[graph] = number + 1
        if number == 0:  # the graph run's input: messages it started from are no replies
            self._see(_messages_of(data))
            if namespace:
                self._graph_input[graph] = data
        if namespace:
            self._graph_output[graph] = data

    def _start(self, namespace: tuple[str, ...], step_id: str, data: Mapping[str, Any]) -> Plan:
        parent = yield from self._graph(namespace, data)
        graph = _key(namespace)
        node = str(data.get("name") or "step")
        found = data.get("metadata")
        md: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        tags = [str(t) for t in md.get("tags") or ()]
        metadata = {**kept_metadata(md), "langgraph_node": node}
        if graph in self._step_numbers:
            metadata["langgraph_step"] = self._step_numbers[graph]
        given = data.get("input")
        calls = _tool_calls(given)
        messages = _messages_of(given)
        common = {"parent": parent, "tags": tags, "metadata": metadata, "graph": graph}
        if calls is not None:
            step = _Step(graph, node, "tool")
            for position, call in enumerate(calls):
                call_id = str(call.get("id") or "")
                self._calls[call_id] = call
                key = f"{step_id}/{call_id or position}"
                yield _tool_start(key, call, call_id, **common)
                step.tools[call_id] = key
        else:
            self._see(messages)
            kwargs = {"run_id": run_uuid(step_id), "name": node}
            if node == _MODEL_STEP and md.get("ls_integration") and messages is not None:
                prompt = [m for m in map(revive, messages) if isinstance(m, BaseMessage)]
                kind, method = "llm", "on_chat_model_start"
                opening: tuple[Any, ...] = ({"name": node}, [prompt])
            else:
                kind, method, opening = "chain", "on_chain_start", (None, revive(given))
            # of_agent only matters to a chain step
            step = _Step(graph, node, kind, step_id, of_agent=bool(md.get("ls_integration")))
            yield Start(step_id, kind, method=method, args=opening, kwargs=kwargs, **common)
        self._steps[step_id] = step

    def _end(self, step_id: str, data: Mapping[str, Any]) -> Plan:
        step = self._steps.pop(step_id, None)
        if step is None:
            return
        failure: BaseException | None = None
        if data.get("error"):
            failure = remote_error(data["error"])
        elif data.get("interrupts"):
            asked = [i.get("value") if isinstance(i, Mapping) else i for i in data["interrupts"]]
            what = ", ".join(repr(v) for v in asked) or "an interrupt"
            failure = RemotePause(f"paused on the server for a human: {what}")
        yield from self._close_graphs(step, failure)
        result = data.get("result")
        # What the step wrote to its graph's ``messages`` (one write or several).
        found = result.get("messages") if isinstance(result, Mapping) else None
        written = [m for m in map(revive, channel_writes(found)) if isinstance(m, BaseMessage)]
        if step.kind == "tool":
            yield from self._end_tools(step, written, failure, result)
        elif step.kind == "llm":
            yield from self._end_model(step.key, written, failure)
        else:
            yield from self._end_chain(step, written, failure, result)
        self._seen.update(str(m.id) for m in written if m.id)

    def _end_tools(
        self, step: _Step, written: list[BaseMessage], failure: BaseException | None, result: Any
    ) -> Plan:
        results = {m.tool_call_id: m for m in written if isinstance(m, ToolMessage)}
        for call_id, key in step.tools.items():
            found = self._open.pop(key, None)
            if found is None:
                continue
            if call_id in results:
                yield Call(found[0], "on_tool_end", (results[call_id],))
            elif failure is not None:
                yield Call(found[0], "on_tool_error", (failure,))
            else:  # the tool only routed (a Command) or wrote no message
                yield Call(found[0], "on_tool_end", (revive(result),))

    def _end_model(
        self, key: str, written: list[BaseMessage], failure: BaseException | None
    ) -> Plan:
        found = self._open.pop(key, None)
        if found is None:
            return
        if failure is not None:
            yield Call(found[0], "on_llm_error", (failure,))
            return
        reply = next((m for m in written if isinstance(m, AIMessage)), None)
        self._remember_calls(reply)
        # No reply: a middleware answered in the model's place or jumped elsewhere.
        outcome = llm_result(reply) if reply is not None else LLMResult(generations=[[]])
        yield Call(found[0], "on_llm_end", (outcome,))

    def _end_chain(
        self, step: _Step, written: list[BaseMessage], failure: BaseException | None, result: Any
    ) -> Plan:
        found = self._open.get(step.key)
        if found is None:
            return
        manager = found[0]
        for message in written:
            if message.id and str(message.id) in self._seen:
                continue
            if _is_reply(message) or (isinstance(message, ToolMessage) and not step.of_agent):
                yield from self._written(step, manager, message)
        self._open.pop(step.key, None)
        if failure is not None:
            yield Call(manager, "on_chain_error", (failure,))
        else:
            yield Call(manager, "on_chain_end", (revive(result),))

    def _written(self, step: _Step, parent: Any, message: BaseMessage) -> Plan:
        """A model or tool call inside a plain graph's node, known only by what it wrote."""
        metadata = {"langgraph_node": step.node}
        if isinstance(message, ToolMessage):
            call = self._calls.get(message.tool_call_id) or {"name": message.name}
            key = f"{step.key}/tool/{message.tool_call_id}"
            yield _tool_start(key, call, message.tool_call_id, parent, [], metadata, step.graph)
            end: tuple[str, Any] = ("on_tool_end", message)
        else:
            key = f"{step.key}/reply/{message.id or uuid.uuid4()}"
            kwargs = {"run_id": uuid.uuid4(), "name": _MODEL_STEP}
            opening: tuple[Any, ...] = ({"name": _MODEL_STEP}, [[]])
            yield Start(
                key, "llm", parent, "on_chat_model_start", opening, kwargs, [], metadata, step.graph
            )
            self._remember_calls(message)
            end = ("on_llm_end", llm_result(message))
        found = self._open.pop(key, None)
        if found is not None:
            yield Call(found[0], end[0], (end[1],))

    def _graph(
        self, namespace: tuple[str, ...], data: Mapping[str, Any]
    ) -> Generator[Start | Call, None, Any]:
        """The run manager the steps of graph run ``namespace`` go under; that run is opened
        when the first of its steps starts."""
        if not namespace:
            return self._root
        graph = _key(namespace)
        if graph in self._open:
            return self._open[graph][0]
        node, _, step_id = namespace[-1].rpartition(":")
        holder = self._steps.get(step_id)
        parent = self._holder(holder)
        if parent is None:  # its step is not known: under the graph run around it
            parent = yield from self._graph(namespace[:-1], data)
        found = data.get("metadata")
        md: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        kwargs = {"run_id": uuid.uuid4(), "name": str(md.get("lc_agent_name") or node or "graph")}
        opening: tuple[Any, ...] = (None, revive(self._graph_input.get(graph, {})))
        outer = _key(namespace[:-1])
        yield Start(
            graph, "chain", parent, "on_chain_start", opening, kwargs, [], kept_metadata(md), outer
        )
        if holder is not None:
            holder.graphs.append(graph)
        found_run = self._open.get(graph)
        return found_run[0] if found_run is not None else parent

    def _holder(self, step: _Step | None) -> Any:
        """The run a graph run inside ``step`` goes under: its tool call, or the step's run."""
        if step is None:
            return None
        keys = list(step.tools.values()) if step.kind == "tool" else [step.key]
        found = self._open.get(keys[0]) if keys else None
        return found[0] if found is not None else None

    def _close_graphs(self, step: _Step, failure: BaseException | None) -> Plan:
        """End the graph runs inside ``step``, and what of theirs is still open."""
        for graph in reversed(step.graphs):
            inside = [
                key
                for key, (_, _, owner) in self._open.items()
                if owner == graph or owner.startswith(graph + "|")
            ]
            cut = failure or RemotePause("the remote run ended before this step did")
            for key in reversed(inside):
                manager, kind, _ = self._open.pop(key)
                yield Call(manager, f"on_{kind}_error", (cut,))
            found = self._open.pop(graph, None)
            output = self._graph_output.pop(graph, {})
            self._graph_input.pop(graph, None)
            if found is None:
                continue
            if failure is not None:
                yield Call(found[0], "on_chain_error", (failure,))
            else:
                yield Call(found[0], "on_chain_end", (revive(output),))

    def _see(self, messages: list[Any] | None) -> None:
        for message in messages or ():
            found = message.get("id") if isinstance(message, Mapping) else None
            if found:
                self._seen.add(str(found))

    def _remember_calls(self, reply: BaseMessage | None) -> None:
        for call in getattr(reply, "tool_calls", None) or ():
            if call.get("id"):
                self._calls[str(call["id"])] = call


def _key(namespace: tuple[str, ...]) -> str:
    return "|".join(namespace)


def _tool_start(
    key: str,
    call: Mapping[str, Any],
    call_id: str,
    parent: Any,
    tags: list[str],
    metadata: dict[str, Any],
    graph: str,
) -> Start:
    """Open a tool run as LangChain's ``BaseTool`` does for the tool call ``call``."""
    tool, args = str(call.get("name") or "tool"), call.get("args")
    kwargs = {
        "run_id": uuid.uuid4(),
        "name": tool,
        "inputs": dict(args) if isinstance(args, Mapping) else None,
        "tool_call_id": call_id or None,
    }
    opening = ({"name": tool}, str(args))
    return Start(key, "tool", parent, "on_tool_start", opening, kwargs, tags, metadata, graph)


def _tool_calls(given: Any) -> list[Mapping[str, Any]] | None:
    """The tool calls a step was sent (``create_agent`` sends ``[call]``; ``ToolNode`` also
    takes one call or a ``tool_call_with_context``), or None for any other input."""
    if isinstance(given, Mapping):
        if given.get("__type") == "tool_call_with_context":
            given = given.get("tool_call")
        return [given] if _is_tool_call(given) else None
    if isinstance(given, list) and given and all(_is_tool_call(c) for c in given):
        return list(given)
    return None


def _is_tool_call(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get("type") == "tool_call" and "name" in value


def _messages_of(given: Any) -> list[Any] | None:
    found = given.get("messages") if isinstance(given, Mapping) else None
    return found if isinstance(found, list) else None


def _is_reply(message: BaseMessage) -> bool:
    """A model's reply, not a message a node made up: it says what the model used."""
    return isinstance(message, AIMessage) and bool(
        message.usage_metadata or message.response_metadata
    )
