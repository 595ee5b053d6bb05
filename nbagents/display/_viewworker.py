"""The process that builds a large run's view, beside the kernel: ``python -m`` this module.

Building the view of a wide run (details, conversations, their JSON, the saved output) costs
as much CPU as a sixth of the run itself, and in the kernel every bit of it holds the GIL the
agent's threads need. Here it runs on another core, at a lower priority than the kernel, from
a copy of the trace: :class:`~nbagents.display._viewsource.RemoteSource` sends each span as it
changes (pickled as the tracer keeps it: its messages unconverted, shared ones once), this
process puts it in its copy (:meth:`~nbagents.tracing.model.Trace.put`) and hands it to the
same :class:`~nbagents.display._viewmodel.ViewBuilder` the kernel would use, and sends back the
texts the widget and the saved output need.

The protocol is frames on this process's stdin and stdout: an 8-byte length, then a pickle.
The first frame out is ``("ready", pid)``, sent once the imports are done; then one reply per
request, ``("ok", value)``, ``("retry", why)`` when a request's spans could not be unpickled
here (a class defined in the notebook), or ``("error", traceback)``. Anything the code here
prints goes to stderr, never into the frames. The process ends when its stdin closes.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import sys
import time
import traceback
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbagents.display._viewmodel import ViewBuilder
    from nbagents.tracing.model import Trace

__all__ = ["DRAW_AHEAD_SECONDS", "NICENESS", "read_frame", "write_frame"]

NICENESS = 10
"""How much lower this process's priority is than the kernel's where the idle scheduling class
is not available: the agent's own work comes first, the view takes the cores' spare time."""
DRAW_AHEAD_SECONDS = 0.5
_HEADER = struct.Struct("<Q")


def write_frame(stream: IO[bytes], value: Any) -> None:
    """Send ``value`` as one frame."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next frame's value; raises ``EOFError`` when the other side has gone."""
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the other end of the view worker's pipe closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other end of the view worker's pipe closed mid-frame")
    return pickle.loads(data)


class _Replica:
    """One view's copy of its trace, and the builder that follows it."""

    def __init__(self, rev: int) -> None:
        from nbagents.display._viewmodel import ViewBuilder, _Changes
        from nbagents.tracing.model import Trace

        self.trace: Trace = Trace()
        self.builder: ViewBuilder = ViewBuilder(self.trace)
        self.builder.rev = rev
        self.changes = _Changes()
        """What the updates since the last patch or whole view changed."""
        self.drawn_at = 0.0
        """When the snapshot's call tree was last drawn ahead (:meth:`prepare`)."""

    def prepare(self) -> None:
        """Between requests: make the records the next whole view or saved output needs, and
        draw the snapshot's call tree ahead at most every :data:`DRAW_AHEAD_SECONDS` (at 500
        sub-agents the steps that are still running change at every update, and drawing
        them at each would double this process's work)."""
        from nbagents.display._html import draw_ahead

        self.builder.prepare()
        now = time.monotonic()
        if now - self.drawn_at >= DRAW_AHEAD_SECONDS:
            self.drawn_at = now
            draw_ahead(self.builder.snapshot_view())

    def update(
        self, spans: bytes, status: str, finished: bool, title: str, thorough: bool = True
    ) -> Any:
        try:
            dirty = pickle.loads(spans)
        except Exception as error:  # a class only the kernel knows (defined in the notebook)
            raise _Unreadable(f"{type(error).__name__}: {error}") from error
        for span, _final in dirty:
            self.trace.put(span)
        self.trace.finished = finished
        self.trace.title = title
        changes = self.builder.take_in(dirty, status, finished, title, thorough=thorough)
        self.changes.merge(changes)
        return bool(changes), self.builder.waiting, self.builder.rev


_released: list[_Replica | None] = []


class _Unreadable(Exception):
    """The spans sent could not be unpickled here: the kernel sends them again converted."""


def _handle(replicas: dict[int, _Replica], request: tuple[Any, ...]) -> Any:
    from nbagents.display._viewmodel import _Changes

    op, view, *args = request
    if op == "open":
        replicas[view] = _Replica(*args)
        return None
    if op == "close":
        # Freed after the reply: a wide run's copy takes tens of milliseconds to free.
        _released.append(replicas.pop(view, None))
        return None
    replica = replicas[view]
    builder = replica.builder
    if op == "update":
        return replica.update(*args)
    if op == "whole":
        replica.changes = _Changes()
        return builder.view_json()
    if op == "patch":
        changes, replica.changes = replica.changes, _Changes()
        return builder.patch_json(changes)
    if op == "snapshot":
        from nbagents.display._html import render_view

        return render_view(builder.snapshot_view())
    if op == "saved":
        from nbagents.display._saved import saved_html

        return saved_html(builder, *args)
    if op == "span_id":
        span = builder.span_of(*args)
        return span.id if span is not None else None
    raise ValueError(f"unknown request {op!r}")


def _lower_priority() -> None:
    """Run only when the kernel does not need the core: a task of the idle class never delays
    one of the kernel's threads waking up (Linux); elsewhere a lower priority."""
    if hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
            return
        except OSError:
            pass
    if hasattr(os, "nice"):
        os.nice(NICENESS)


def main() -> None:
    # The frames own the real stdout; whatever else writes there (a warning, a print in a
    # library) goes to stderr instead.
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    _lower_priority()
    import gc

    # The builder's objects live as long as their view; collections would walk them all again
    # and again while the run goes on (the kernel's builder pauses the collector for the same
    # reason). Reference counting frees everything else.
    gc.disable()
    import nbagents.display._saved  # noqa: F401  (the imports are the start-up time)
    from nbagents.display._costview import load_prices

    # The price table imports genai-prices' data: done before "ready", not when the first
    # view opens, where it held up a wide run's first update from the worker by 0.5-2 s.
    load_prices()

    replicas: dict[int, _Replica] = {}
    write_frame(channel, ("ready", os.getpid()))
    while True:
        try:
            request = read_frame(requests)
        except EOFError:
            return
        try:
            reply = ("ok", _handle(replicas, request))
        except _Unreadable as error:
            reply = ("retry", str(error))
        except Exception:
            reply = ("error", traceback.format_exc())
        write_frame(channel, reply)
        _released.clear()
        if request[0] == "update" and request[1] in replicas:
            # A failure here is reported by the next request that needs these records.
            with contextlib.suppress(Exception):
                replicas[request[1]].prepare()
        if not replicas:
            gc.collect()


if __name__ == "__main__":
    main()
