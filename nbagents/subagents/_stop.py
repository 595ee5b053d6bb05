"""Ctrl-C during a synchronous ``invoke`` stops the run now, not when its sub-agents finish.

On Ctrl-C, LangGraph's executor waits for every running ``task`` call before the exception
reaches the user. A deep agent's sync ``stream``/``invoke`` on the main thread therefore opens a
:class:`StopScope`: SIGINT marks it stopped, then does what the previous handler did. Each sync
``task`` runs its sub-agent on a thread of its own (:class:`_Workers`) and waits for its result
or the stop, raising ``KeyboardInterrupt`` at once on a stop. A sub-agent left behind finishes
the step it is in, then stops (:class:`StopCheck`); its result is discarded. Off the main
thread, or with a SIGINT handler that is not a Python callable, LangGraph's behaviour is kept.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, wait
from types import FrameType
from typing import Any, TypeVar

from langchain_core.callbacks import BaseCallbackHandler

__all__ = [
    "StopCheck",
    "StopScope",
    "check_not_stopped",
    "ctrl_c_stops_subagents",
    "run_stoppable",
    "stop_check",
]

T = TypeVar("T")

_current: contextvars.ContextVar[StopScope | None] = contextvars.ContextVar(
    "nbagents_stop_scope", default=None
)


class StopScope:
    """Whether the user asked the run to stop: a future that is done once they did."""

    def __init__(self) -> None:
        self._stopped: Future[Any] = Future()

    @property
    def stopped(self) -> bool:
        return self._stopped.done()

    def stop(self) -> None:
        with contextlib.suppress(InvalidStateError):  # a second Ctrl-C
            self._stopped.set_result(None)

    def wait(self, future: Future[T]) -> T:
        """``future``'s result, or ``KeyboardInterrupt`` as soon as the scope is stopped."""
        wait((future, self._stopped), return_when=FIRST_COMPLETED)
        if not future.done():
            raise KeyboardInterrupt
        return future.result()


@contextlib.contextmanager
def ctrl_c_stops_subagents() -> Iterator[None]:
    """While the body runs on the main thread, Ctrl-C also stops the waiting for sub-agents."""
    previous = signal.getsignal(signal.SIGINT)
    if (
        _current.get() is not None
        or threading.current_thread() is not threading.main_thread()
        or not callable(previous)
    ):
        yield
        return
    scope = StopScope()
    forward: Callable[[int, FrameType | None], Any] = previous

    def on_sigint(signum: int, frame: FrameType | None) -> Any:
        scope.stop()
        return forward(signum, frame)

    signal.signal(signal.SIGINT, on_sigint)
    # Not a token reset: a generator's ``finally`` may run in another context than its start.
    _current.set(scope)
    try:
        yield
    finally:
        _current.set(None)
        if signal.getsignal(signal.SIGINT) is on_sigint:
            signal.signal(signal.SIGINT, previous)


def run_stoppable(call: Callable[[], T]) -> T:
    """``call()``, on its own thread when a stop scope is open so that a stop ends the wait."""
    scope = _current.get()
    if scope is None:
        return call()
    if scope.stopped:
        raise KeyboardInterrupt
    future: Future[T] = Future()
    context = contextvars.copy_context()  # the run's config and callbacks live in context vars

    def work() -> None:
        try:
            future.set_result(context.run(call))
        except BaseException as error:  # handed to the waiting thread, which re-raises it
            future.set_exception(error)

    _workers.submit(work)
    return scope.wait(future)


class _Workers:
    """The threads :func:`run_stoppable` runs sub-agents on, kept a while for the next ones.

    Starting a thread per sub-agent costs CPU under the GIL at every fan-out; a thread that
    finished waits :data:`IDLE_SECONDS` for another sub-agent instead (at most :data:`MAX_IDLE`
    wait). Threads are named :data:`BUSY` or :data:`IDLE`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # The inboxes of the idle threads; the last to finish is the first reused.
        self._idle: dict[queue.SimpleQueue[Callable[[], None]], None] = {}
        if hasattr(os, "register_at_fork"):
            # A forked child has none of these threads: handing work to one would wait forever.
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._idle = {}

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            inbox = self._idle.popitem()[0] if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name=BUSY, daemon=True).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        thread = threading.current_thread()
        job = inbox.get()
        while True:
            thread.name = BUSY
            job()
            del job  # an idle thread holds nothing of the run it served
            thread.name = IDLE
            with self._lock:
                if len(self._idle) >= MAX_IDLE:
                    return
                self._idle[inbox] = None
            try:
                job = inbox.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:
                        del self._idle[inbox]
                        return
                job = inbox.get()  # taken just as it timed out: its job is on the way


BUSY = "nbagents-subagent"
IDLE = "nbagents-subagent-idle"
IDLE_SECONDS = 20.0
"""How long a thread that ran a sub-agent waits for the next one before it ends."""
MAX_IDLE = 1024
"""At most this many threads wait for sub-agents; one more ends when its sub-agent does."""
_workers = _Workers()


def check_not_stopped() -> None:
    """Raise ``KeyboardInterrupt`` in a sub-agent the user has already stopped."""
    scope = _current.get()
    if scope is not None and scope.stopped:
        raise KeyboardInterrupt


class StopCheck(BaseCallbackHandler):
    """Stops a sub-agent before its next step once the user stopped the run.

    A callback handler, not a model-call hook (``create_agent`` wraps those in a LangSmith
    ``traceable``); LangChain lets the ``KeyboardInterrupt`` it raises through. It also checks at
    each node, so that a model call is stopped before a tracer has seen it start.
    """

    run_inline = True
    ignore_retriever = True
    ignore_retry = True
    ignore_custom_event = True

    def on_chain_start(self, *args: Any, **kwargs: Any) -> None:
        check_not_stopped()

    on_chat_model_start = on_llm_start = on_tool_start = on_chain_start  # type: ignore[assignment]


def stop_check() -> StopCheck | None:
    """The handler a sub-agent's run needs while a stop scope is open (a sync ``invoke`` on the
    main thread), else ``None``."""
    return StopCheck() if _current.get() is not None else None
