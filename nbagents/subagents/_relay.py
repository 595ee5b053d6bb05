"""A LangGraph server's run, re-emitted as LangChain callbacks under the ``task`` call.

A relay turns the parts of a remote run's stream into the callbacks a local run would have made,
so any callback handler sees the remote steps as if they had run here. It only plans calls
(:class:`Start`, :class:`Call`); the caller makes them on sync or async managers and reports each
run it opened back with ``opened``, so a plan can go on to call the run it has just opened.
``StepRelay`` (``_steps``) reads ``stream_mode="tasks"``; :class:`EventRelay` reads ``"events"``,
mirroring each run under the nearest ancestor (``parent_ids``) it already opened.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AnyMessage, BaseMessage, message_chunk_to_message
from langchain_core.outputs import ChatGeneration, Generation, LLMResult
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command
from pydantic import TypeAdapter

__all__ = [
    "Call",
    "EventRelay",
    "Plan",
    "Relay",
    "RemotePause",
    "RemoteStepError",
    "Start",
    "kept_metadata",
    "llm_result",
    "remote_error",
    "revive",
    "run_uuid",
]

_COMMAND_FIELDS = {"graph", "update", "resume", "goto"}
"""A ``Command`` as the server serialises it (its dataclass fields)."""

# Server bookkeeping (its run, thread, assistant and host) describes the remote run, not the
# local one: a handler reading ``thread_id`` must keep seeing the notebook's thread.
_KEPT_PREFIXES = ("ls_", "lc_", "nbagents_", "langgraph_node", "langgraph_step")
_KEPT_KEYS = frozenset({"langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns"})


@dataclass(frozen=True)
class Start:
    """Open a run under ``parent`` (a run manager): ``parent.get_child().<method>(...)``."""

    remote_id: str
    kind: str
    """``chain``, ``llm`` or ``tool``: which error callback closes it if the run breaks."""
    parent: Any
    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    graph: str = ""
    """The remote graph run it belongs to (a relay's own bookkeeping, not passed on)."""


@dataclass(frozen=True)
class Call:
    """Call ``manager.<method>(*args)`` on a run already open."""

    manager: Any
    method: str
    args: tuple[Any, ...]


Plan = Iterator[Start | Call]
"""Callbacks to make in order; each :class:`Start` is reported back through ``opened`` before
the next one is asked for."""


class RemoteStepError(Exception):
    """A step that failed on the server; :func:`remote_error` names a subclass after the remote
    exception, so a trace shows ``ValueError: ...`` as for the same step run here."""


class RemotePause(GraphBubbleUp):
    """A remote step that stopped for a human or was cut off by the run's end: a
    ``GraphBubbleUp``, so tracers mark it interrupted; not a ``GraphInterrupt``, which the
    ``task`` call's own interrupt carries (``_remote_pause``)."""


def remote_error(found: Any) -> BaseException:
    """The exception a step's error record (``{"error": "ValueError", "message": ...}``) stands
    for."""
    if isinstance(found, Mapping):
        kind, message = str(found.get("error") or ""), str(found.get("message") or "")
    else:
        kind, message = "", str(found)
    if kind in ("GraphInterrupt", "GraphBubbleUp"):
        return RemotePause(message or kind)
    return _error_class(kind)(message or kind or "failed on the server")


@functools.cache
def _error_class(name: str) -> type[RemoteStepError]:
    if not name.isidentifier():
        return RemoteStepError
    return type(name, (RemoteStepError,), {"__module__": __name__})


class Relay:
    """What the relays share: the runs they opened, by remote id (manager, kind, graph run).

    Not thread-safe: one run, one consumer."""

    def __init__(self, root: Any) -> None:
        self._root = root
        """The run manager of the sub-agent's chain run: the remote graph's run maps onto it."""
        self._open: dict[str, tuple[Any, str, str]] = {}

    def plan(self, event: str, data: Mapping[str, Any]) -> Plan:
        """The callbacks one stream part (``event``, ``data``) calls for."""
        raise NotImplementedError

    def opened(self, start: Start, manager: Any) -> None:
        """Record the run manager ``start`` produced."""
        self._open[start.remote_id] = (manager, start.kind, start.graph)

    def abandon(self, error: BaseException) -> list[Call]:
        """Error callbacks for the runs still open, innermost first, when the run broke off."""
        calls = [
            Call(m, f"on_{kind}_error", (error,)) for m, kind, _ in reversed(self._open.values())
        ]
        self._open.clear()
        return calls


class EventRelay(Relay):
    """Plans the callbacks of one remote run from its ``events`` parts."""

    _root_id: str | None = None

    def plan(self, event: str, data: Mapping[str, Any]) -> Plan:
        if event == "events":
            planned = self._plan(data)
            if planned is not None:
                yield planned

    def _plan(self, event: Mapping[str, Any]) -> Start | Call | None:
        kind = str(event.get("event", ""))
        run_id = str(event.get("run_id", ""))
        parents = [str(p) for p in event.get("parent_ids") or ()]
        data = event.get("data") or {}
        if self._root_id is None and not parents and kind == "on_chain_start":
            self._root_id = run_id
            return None
        if run_id == self._root_id:
            return None  # the sub-agent's own run: its caller ends it with the final state
        if kind.endswith("_start"):
            return self._start(kind, run_id, parents, event, data)
        if kind in ("on_chat_model_stream", "on_llm_stream"):
            token = _token(data.get("chunk"))
            found = self._open.get(run_id)
            return Call(found[0], "on_llm_new_token", (token,)) if found and token else None
        if kind.endswith("_end") or kind.endswith("_error"):
            return self._end(kind, run_id, data)
        return None

    def _start(
        self,
        kind: str,
        run_id: str,
        parents: list[str],
        event: Mapping[str, Any],
        data: Mapping[str, Any],
    ) -> Start | None:
        parent = self._root
        for ancestor in reversed(parents):
            if ancestor in self._open:
                parent = self._open[ancestor][0]
                break
        name = str(event.get("name") or "remote")
        inputs = data.get("input")
        kwargs: dict[str, Any] = {"run_id": run_uuid(run_id), "name": name}
        args: tuple[Any, ...]
        if kind == "on_chain_start":
            opens, args = "chain", (None, revive(inputs))
        elif kind == "on_chat_model_start":
            given = inputs.get("messages") if isinstance(inputs, Mapping) else None
            batch = given[0] if isinstance(given, list) and given else []
            messages = [m for m in map(revive, batch) if isinstance(m, BaseMessage)]
            opens, args = "llm", ({"name": name}, [messages])
        elif kind == "on_llm_start":
            prompts = inputs.get("prompts") if isinstance(inputs, Mapping) else None
            opens, args = "llm", ({"name": name}, [str(p) for p in prompts or [inputs]])
        elif kind == "on_tool_start":
            kwargs["inputs"] = dict(inputs) if isinstance(inputs, Mapping) else None
            opens, args = "tool", ({"name": name}, str(inputs))
        else:
            return None  # retrievers, prompts, parsers: not shown by the tracer either
        tags = [str(t) for t in event.get("tags") or ()]
        return Start(
            run_id, opens, parent, kind, args, kwargs, tags, kept_metadata(event.get("metadata"))
        )

    def _end(self, kind: str, run_id: str, data: Mapping[str, Any]) -> Call | None:
        found = self._open.pop(run_id, None)
        if found is None:
            return None
        manager, opened_as, _ = found
        if kind.endswith("_error"):
            error = remote_error(data.get("error") or "failed on the server")
            return Call(manager, f"on_{opened_as}_error", (error,))
        output = revive(data.get("output"))
        if opened_as == "llm":
            return Call(manager, "on_llm_end", (llm_result(output),))
        return Call(manager, f"on_{opened_as}_end", (output,))


def revive(value: Any) -> Any:
    """JSON from the server with its serialised messages and commands (a remote deep agent's
    ``task`` results) turned back into objects."""
    if isinstance(value, list):
        return [revive(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    if value.keys() == _COMMAND_FIELDS and isinstance(value["update"], Mapping | list):
        return Command(
            graph=value["graph"],
            update=revive(value["update"]),
            resume=value["resume"],
            goto=value["goto"] or (),
        )
    if "type" in value and "content" in value:
        try:  # LangChain's message classes, told apart by their ``type``
            return _messages().validate_python(value)
        except ValueError:
            pass  # not a message after all: keep it as data
    return {k: revive(v) for k, v in value.items()}


@functools.cache
def _messages() -> TypeAdapter[BaseMessage]:
    return TypeAdapter(AnyMessage)


def llm_result(output: Any) -> LLMResult:
    """What ``on_llm_end`` gets for a model's reply (a message, a text, or nothing)."""
    if isinstance(output, BaseMessage):
        return LLMResult(generations=[[ChatGeneration(message=message_chunk_to_message(output))]])
    return LLMResult(generations=[[Generation(text="" if output is None else str(output))]])


def _token(chunk: Any) -> str:
    if isinstance(chunk, Mapping):
        content = chunk.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return "".join(
                str(b.get("text") or "") if isinstance(b, Mapping) else str(b) for b in content
            )
    return chunk if isinstance(chunk, str) else ""


def kept_metadata(metadata: Any) -> dict[str, Any]:
    """The keys of a remote run's metadata that describe the step, not the server."""
    if not isinstance(metadata, Mapping):
        return {}
    return {
        str(k): v
        for k, v in metadata.items()
        if str(k) in _KEPT_KEYS or str(k).startswith(_KEPT_PREFIXES)
    }


def run_uuid(text: str) -> uuid.UUID:
    """A remote id as a run id (a new one when it is not a UUID)."""
    try:
        return uuid.UUID(text)
    except ValueError:
        return uuid.uuid4()
