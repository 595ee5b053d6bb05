"""Where the live view's records are built: in the kernel, or in a process beside it.

:class:`LocalSource` builds them here with a :class:`~nbagents.display._viewmodel.ViewBuilder`:
what a small run needs, and all that a kernel without subprocesses has. :class:`RemoteSource`
finds here which spans changed and sends them to :mod:`nbagents.display._viewworker`, which
builds the same records on another core; the kernel keeps only finding and pickling the changed
spans, about a tenth of building their view. :class:`~nbagents.display.live.LiveView` starts
local and moves a run to the worker once the run grows past a few hundred steps
(:data:`OFFLOAD_SPANS`).

One worker serves every view of a kernel (:func:`view_worker`); it starts the first time a run
grows that large and ends with the kernel. ``NBAGENTS_VIEW_WORKER=0`` in the environment keeps
every view in the kernel. A worker that fails or dies is not started again: the views it held
go on in the kernel, from a whole view.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import pickle
import subprocess
import sys
import threading
from typing import TYPE_CHECKING, Any, Protocol

from nbagents.display._fingerprints import SpanFingerprints, copy_span
from nbagents.display._gcpause import collections_paused
from nbagents.display._html import render_view
from nbagents.display._saved import saved_html
from nbagents.display._viewmodel import ViewBuilder, _Changes
from nbagents.display._viewworker import read_frame, write_frame

if TYPE_CHECKING:
    from nbagents.tracing.model import Span, Trace

__all__ = [
    "OFFLOAD_SPANS",
    "LocalSource",
    "RemoteSource",
    "ViewSource",
    "ViewWorker",
    "WorkerError",
    "view_worker",
]

logger = logging.getLogger("nbagents")

OFFLOAD_SPANS = 300
"""A run with this many steps starts the worker, and its view moves there once it is ready.
Below it the view costs the kernel little, and a run that stays small never starts a process."""
READY_SECONDS = 60.0
"""Longest wait for a started worker to come up (its imports) before a call gives up on it."""
ENV = "NBAGENTS_VIEW_WORKER"


class WorkerError(RuntimeError):
    """The view worker failed or is gone."""


class ViewSource(Protocol):
    """What :class:`~nbagents.display.live.LiveView` asks of whoever builds its records."""

    @property
    def rev(self) -> int:
        """The revision of the last update."""
        ...

    @property
    def waiting(self) -> bool:
        """Whether the run is paused for decisions, as of the last update."""
        ...

    @property
    def cheap_updates(self) -> bool:
        """Whether taking in changes costs the kernel little (then it is done often, and the
        widget is sent what changed only as often as the page can draw it)."""
        ...

    def update(self, *, thorough: bool = True) -> bool:
        """Take in what changed in the trace; whether the view changed. Not ``thorough``: a
        change to a step that ended a while ago may be left for a later update."""
        ...

    def view_json(self) -> str:
        """The whole view; the next patch starts from it."""
        ...

    def patch_json(self) -> str:
        """What the updates since the last patch or whole view changed."""
        ...

    def snapshot_html(self) -> str: ...

    def saved_html(self, uid: str) -> str: ...

    def span_id(self, key: str) -> str | None:
        """The id of the span a view node id stands for."""
        ...

    def close(self) -> None: ...


class LocalSource:
    """The records built in this process."""

    cheap_updates = False

    def __init__(self, trace: Trace, rev: int = 0) -> None:
        self.builder = ViewBuilder(trace)
        self.builder.rev = rev
        self._changes = _Changes()

    @property
    def rev(self) -> int:
        return self.builder.rev

    @property
    def waiting(self) -> bool:
        return self.builder.waiting

    # The builder's work runs with the collector paused (nbagents.display._gcpause says why).
    def update(self, *, thorough: bool = True) -> bool:
        with collections_paused():
            changes = self.builder.update(thorough=thorough)
        self._changes.merge(changes)
        return bool(changes)

    def view_json(self) -> str:
        self._changes = _Changes()
        with collections_paused():
            return self.builder.view_json()

    def patch_json(self) -> str:
        changes, self._changes = self._changes, _Changes()
        with collections_paused():
            return self.builder.patch_json(changes)

    def snapshot_html(self) -> str:
        with collections_paused():
            return render_view(self.builder.snapshot_view())

    def saved_html(self, uid: str) -> str:
        with collections_paused():
            return saved_html(self.builder, uid)

    def span_id(self, key: str) -> str | None:
        span = self.builder.span_of(key)
        return span.id if span is not None else None

    def close(self) -> None:
        pass


class RemoteSource:
    """The records built by the worker, from the spans this process sends it as they change."""

    cheap_updates = True

    def __init__(self, trace: Trace, worker: ViewWorker, rev: int = 0) -> None:
        self.trace = trace
        self._worker = worker
        self._view = worker.open(rev)
        self._fingerprints = SpanFingerprints()
        self._rev = rev
        self._waiting = False
        self._converting = False
        """Set once the worker could not read spans as the tracer keeps them: from then on
        they go converted (JSON-ready), which any process can read."""

    @property
    def rev(self) -> int:
        return self._rev

    @property
    def waiting(self) -> bool:
        return self._waiting

    def update(self, *, thorough: bool = True) -> bool:
        trace = self.trace
        with trace.lock:
            dirty = self._fingerprints.changed(trace, thorough=thorough)
            state = (trace.status, bool(trace.finished), trace.title, thorough)
        payload = None
        if not self._converting:
            try:
                payload = _pickled(dirty)
            except Exception as error:  # a lock, a generator, a local function in an input
                self._convert_from_now(error)
        reply = None
        if payload is not None:
            try:
                reply = self._worker.call("update", self._view, payload, *state)
            except _Retry as why:
                self._convert_from_now(why)
        if reply is None:
            reply = self._worker.call("update", self._view, _pickled(_converted(dirty)), *state)
        changed, self._waiting, self._rev = reply
        return bool(changed)

    def _convert_from_now(self, why: BaseException) -> None:
        logger.debug("The view worker cannot take spans as recorded (%s): converted now.", why)
        self._converting = True

    def view_json(self) -> str:
        return str(self._worker.call("whole", self._view))

    def patch_json(self) -> str:
        return str(self._worker.call("patch", self._view))

    def snapshot_html(self) -> str:
        return str(self._worker.call("snapshot", self._view))

    def saved_html(self, uid: str) -> str:
        return str(self._worker.call("saved", self._view, uid))

    def span_id(self, key: str) -> str | None:
        found = self._worker.call("span_id", self._view, key)
        return found if isinstance(found, str) else None

    def close(self) -> None:
        self._worker.close_view(self._view)


def _pickled(dirty: list[tuple[Span, bool]]) -> bytes:
    # One pickle for the batch: a message shared by several spans (a conversation's earlier
    # turns are in every later model call's input) goes once.
    return pickle.dumps(dirty, protocol=pickle.HIGHEST_PROTOCOL)


def _converted(dirty: list[tuple[Span, bool]]) -> list[tuple[Span, bool]]:
    """``dirty`` with each span's inputs and outputs as JSON-ready data, which any process can
    unpickle (the tracer's references may hold classes only this one knows)."""
    out = []
    for span, final in dirty:
        copied = copy_span(span)
        copied.inputs = span.inputs
        copied.outputs = span.outputs
        out.append((copied, final))
    return out


class _Retry(Exception):
    """The worker could not unpickle a request's spans."""


class ViewWorker:
    """The worker process and the pipes to it; one call at a time, from any thread."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(
            [sys.executable, "-m", "nbagents.display._viewworker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
        )
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.ready = threading.Event()
        """Set once the worker has started (its imports take a second or two)."""
        self.broken: str | None = None
        """Why the worker can no longer be used, once it cannot."""
        threading.Thread(target=self._await_ready, name="nbagents-view-worker", daemon=True).start()

    @property
    def pid(self) -> int:
        return self._process.pid

    def _await_ready(self) -> None:
        assert self._process.stdout is not None
        try:
            hello = read_frame(self._process.stdout)
        except Exception as error:
            self.broken = f"it did not start: {type(error).__name__}: {error}"
            return
        if not (isinstance(hello, tuple) and hello[:1] == ("ready",)):
            self.broken = f"it started with {hello!r}"
            return
        self.ready.set()

    def open(self, rev: int) -> int:
        view = next(self._ids)
        self.call("open", view, rev)
        return view

    def close_view(self, view: int) -> None:
        if self.broken is None and self._process.poll() is None:
            self.call("close", view)

    def call(self, *request: Any) -> Any:
        """Send ``request``, return the worker's answer; :class:`WorkerError` when it failed."""
        with self._lock:
            if self.broken is not None:
                raise WorkerError(f"The view worker cannot be used: {self.broken}")
            if not self.ready.wait(READY_SECONDS):
                self._fail("it did not start in time")
            assert self._process.stdin is not None and self._process.stdout is not None
            try:
                write_frame(self._process.stdin, request)
                status, value = read_frame(self._process.stdout)
            except (OSError, EOFError, ValueError) as error:
                self._fail(f"{type(error).__name__}: {error}")
        if status == "retry":
            raise _Retry(value)
        if status != "ok":
            self._fail(f"it failed:\n{value}")
        return value

    def _fail(self, why: str) -> None:
        self.broken = why
        self._stop()
        raise WorkerError(f"The view worker failed; views go on in the kernel ({why}).")

    def _stop(self) -> None:
        process = self._process
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        try:
            process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def close(self) -> None:
        """End the worker (it ends by itself when this process does)."""
        with self._lock:
            if self.broken is None:
                self.broken = "it was closed"
            self._stop()


_worker: ViewWorker | None = None
_worker_lock = threading.Lock()
_gave_up = False


def view_worker(*, start: bool = True) -> ViewWorker | None:
    """This process's view worker, started if ``start`` and not yet running; ``None`` when
    views stay in the kernel (switched off, or a worker failed before)."""
    global _worker, _gave_up
    if _gave_up or os.environ.get(ENV, "1").strip().lower() in {"0", "false", "no", "off"}:
        return None
    with _worker_lock:
        if _worker is not None and _worker.broken is not None:
            logger.warning(
                "The nbagents view worker stopped (%s); views stay in the kernel.", _worker.broken
            )
            _worker, _gave_up = None, True
            return None
        if _worker is None and start:
            try:
                _worker = ViewWorker()
            except OSError as error:
                logger.warning(
                    "The nbagents view worker did not start (%s); views stay in the kernel.", error
                )
                _gave_up = True
                return None
        return _worker


def _forget_in_child() -> None:
    # A forked process has the parent's pipes, not its worker: it starts one of its own.
    global _worker, _worker_lock
    _worker = None
    _worker_lock = threading.Lock()


@atexit.register
def _close_at_exit() -> None:
    if _worker is not None:
        _worker.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
