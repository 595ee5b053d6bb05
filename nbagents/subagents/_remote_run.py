"""One remote run as the parent's callbacks see it: what the server said, and which callbacks
that calls for.

:class:`RemoteRun` turns the parts of a run's stream into planned operations: open the
sub-agent's chain run (with a :class:`RemoteRecord` naming server, graph, thread and run),
mirror the run's steps through a relay, end or fail it; :func:`perform` and :func:`aperform`
make them. The transport (:mod:`nbagents.subagents._remote`) only reads the stream and cancels.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.types import Interrupt

from nbagents._contract import REMOTE_KEY, RemoteRecord
from nbagents.subagents._relay import Call, EventRelay, Relay, RemotePause, Start, revive
from nbagents.subagents._steps import StepRelay

__all__ = [
    "RemoteRun",
    "RemoteSubAgentError",
    "TraceDetail",
    "aperform",
    "perform",
]

TraceDetail = Literal["steps", "events"]
"""How much of a remote run the trace shows: its steps (``stream_mode="tasks"``) or every run
event inside them (``stream_mode="events"``, which costs the server far more CPU per run)."""


class RemoteSubAgentError(RuntimeError):
    """A remote sub-agent's run failed; the message names the server and the cause."""


@dataclass(eq=False)
class RemoteRun:
    """What one remote run has said so far, and which callbacks that calls for."""

    subagent: str
    url: str
    graph_id: str
    input: dict[str, Any]
    name: str
    """The sub-agent's run as the parent's trace names it (the config's ``run_name``)."""
    detail: TraceDetail = "steps"
    thread_id: str = ""
    run_id: str = ""
    ended: bool = False
    final: dict[str, Any] | None = None
    paused: bool = False  # a state of the run listed interrupts
    interrupts: tuple[Interrupt, ...] = ()  # what the paused thread waits for
    answered: int = 0  # answers the task call has used so far (see ask_parent)
    root: Any = None
    relay: Relay | None = None
    _early: list[tuple[str, Any]] = field(default_factory=list)
    """``values`` parts before the run's first step, for the relay once it is made."""

    @property
    def active(self) -> bool:
        """Created on the server and not known to have ended there."""
        return bool(self.run_id) and not self.ended

    def created(self, info: Mapping[str, Any]) -> None:
        self.ended = self.paused = False  # a paused thread's resumption is a run of its own
        self.run_id = str(info.get("run_id") or "")
        self.thread_id = str(info.get("thread_id") or self.thread_id)

    def accept(self, event: str, data: Any) -> list[_Op]:
        """The callbacks one stream part calls for."""
        if event == "metadata" and isinstance(data, Mapping) and not self.run_id:
            self.run_id = str(data.get("run_id") or "")
        if event == "values" and isinstance(data, Mapping):
            self.final = {k: v for k, v in data.items() if k != "__interrupt__"}
            self.paused = self.paused or "__interrupt__" in data
        elif event == "error":
            self.ended = True
            raise RemoteSubAgentError(
                f"LangGraph server {self.url}: the run of graph {self.graph_id!r} "
                f"failed there: {_remote_error(data)}"
            )
        elif event == "end":
            self.ended = True
        kind = event.partition("|")[0]
        relayed = ("events",) if self.detail == "events" else ("tasks", "values")
        if not isinstance(data, Mapping) or kind not in relayed:
            return []
        if self.root is None and kind == "values":
            self._early.append((event, data))  # the run opens with its first step
            return []
        return [*self._open_root(data), (event, data)]

    def _open_root(self, data: Mapping[str, Any]) -> list[_Op]:
        if self.root is not None:
            return []
        early, self._early = self._early, []
        # The keys of the remote graph's own run that say what kind of graph it is.
        metadata = data.get("metadata")
        kind = metadata.get("ls_integration") if isinstance(metadata, Mapping) else None
        extra = {"ls_integration": kind} if kind else {}
        return [_OpenRoot("streamed", extra), *early]

    def result(self) -> dict[str, Any]:
        self.ended = True
        if self.final is None:
            raise RemoteSubAgentError(
                f"LangGraph server {self.url}: the run of graph {self.graph_id!r} "
                f"ended without a final state."
            )
        return {k: revive(v) for k, v in self.final.items()}

    def succeed(self, result: dict[str, Any]) -> list[_Op]:
        what = "run events" if self.detail == "events" else "steps"
        return self._closing(f"the server sent no {what}", "on_chain_end", result, _CUT_OFF)

    def fail(self, error: BaseException) -> list[_Op]:
        if self.root is None and not self.run_id:
            return []  # nothing ran remotely: the task call's error says it all
        return self._closing("the run failed before its first step", "on_chain_error", error, error)

    def pause(self, pause: BaseException) -> list[_Op]:
        """Show the sub-agent waiting: its steps end, its run ends with ``pause`` (the parent's
        ``GraphInterrupt``, which carries what the parent now waits for)."""
        return self._closing("the run waits for a decision", "on_chain_error", pause, _CUT_OFF)

    def _closing(self, unstreamed: str, method: str, value: Any, cut: BaseException) -> list[_Op]:
        """:class:`_CloseRoot`, after opening the sub-agent's run if no part of the stream did."""
        close = _CloseRoot(method, value, cut)
        opening = [] if self.root is not None else [_OpenRoot(f"not streamed: {unstreamed}", {})]
        return [*opening, close]

    def record(self, steps: str) -> RemoteRecord:
        return RemoteRecord(
            url=self.url,
            graph_id=self.graph_id,
            thread_id=self.thread_id,
            run_id=self.run_id,
            steps=steps,
            trace=self.detail,
        )


@dataclass(frozen=True)
class _OpenRoot:
    """Open the sub-agent's chain run: the remote graph's run, as the parent sees it."""

    steps: str
    extra: dict[str, Any]


@dataclass(frozen=True)
class _CloseRoot:
    """End the sub-agent's chain run (``method``: ``on_chain_end`` or ``on_chain_error``, given
    ``value``), first closing with ``cut`` what the server never said had ended (a step cut off
    by an interrupt elsewhere in the run shows interrupted)."""

    method: str
    value: Any
    cut: BaseException


_Op = _OpenRoot | tuple[str, Mapping[str, Any]] | _CloseRoot
"""What a stream part or the run's end calls for; a part (``event``, ``data``) is for the relay
to mirror."""

_CUT_OFF = RemotePause("the remote run ended before this step reported its end")


_Callback = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]


def _callbacks(
    op: _Op | Start | Call, manager: Any, run: RemoteRun
) -> Generator[_Callback, Any, None]:
    """The callbacks one planned operation makes, in order; each one's result is sent back."""
    if isinstance(op, _OpenRoot):
        opening = manager.copy()
        opening.add_metadata({**op.extra, REMOTE_KEY: run.record(op.steps)}, inherit=False)
        kwargs = {"run_id": uuid.uuid4(), "name": run.name}
        run.root = yield opening.on_chain_start, (None, run.input), kwargs
        run.relay = StepRelay(run.root) if run.detail == "steps" else EventRelay(run.root)
    elif isinstance(op, tuple):
        for planned in run.relay.plan(*op) if run.relay is not None else ():
            yield from _callbacks(planned, manager, run)
    elif isinstance(op, _CloseRoot):
        for call in run.relay.abandon(op.cut) if run.relay is not None else ():
            yield from _callbacks(call, manager, run)
        yield getattr(run.root, op.method), (op.value,), {}
    elif isinstance(op, Start):
        child = op.parent.get_child()
        child.add_tags(op.tags)
        child.add_metadata(op.metadata)
        opened = yield getattr(child, op.method), op.args, op.kwargs
        if run.relay is not None:
            run.relay.opened(op, opened[0] if isinstance(opened, list) else opened)
    else:
        yield getattr(op.manager, op.method), op.args, {}


def perform(op: _Op | Start | Call, manager: Any, run: RemoteRun) -> None:
    """Make one planned callback on sync managers."""
    calls, answer = _callbacks(op, manager, run), None
    with contextlib.suppress(StopIteration):
        while True:
            method, args, kwargs = calls.send(answer)
            answer = method(*args, **kwargs)


async def aperform(op: _Op | Start | Call, manager: Any, run: RemoteRun) -> None:
    """Make one planned callback on async managers."""
    calls, answer = _callbacks(op, manager, run), None
    with contextlib.suppress(StopIteration):
        while True:
            method, args, kwargs = calls.send(answer)
            answer = await method(*args, **kwargs)


def _remote_error(data: Any) -> str:
    if isinstance(data, Mapping):
        kind, message = data.get("error"), data.get("message")
        return f"{kind}: {message}" if kind and message else str(message or kind or data)
    return str(data)
