"""nbagents' one policy for Python's garbage collector: no full collection in the middle of a
wide run's work.

CPython collects its oldest generation when enough objects have survived two younger
collections, and a full collection walks every object the process holds. A wide run holds
many: every sub-agent in flight has thousands (its graph run, config, callbacks, messages), and
its trace thousands of spans. Two parts of nbagents allocate enough to make such collections
come again and again while nothing they walk can be freed yet:

- a wide fan-out (:func:`in_flight`): while at least :data:`WIDE` sub-agents run at once, the
  oldest generation's threshold is raised so that only young collections run (they still free
  short-lived cycles); when the count drops below it, the process's own threshold is put back,
  and the next full collection happens as it would have. Only the third threshold is touched,
  and only if nobody else changed it meanwhile.
- the live view's builds (:func:`view_work`): the collector is paused while the view's records
  are built. They are short-lived containers freed by reference counting, yet each 700
  allocations count towards a young collection and, through them, towards a full one.
  Nothing is lost: cycles made meanwhile are found by the next collection.

``NBAGENTS_DEFER_GC=0`` (or ``false``, ``no``, ``off``) in the environment turns both off; it
is read each time one begins.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

__all__ = ["ENV", "WIDE", "in_flight", "view_work"]

ENV = "NBAGENTS_DEFER_GC"
WIDE = 64
"""Sub-agents running at once from which full collections wait (narrower runs: no change)."""

_DEFERRED = 1_000_000
"""The oldest generation's threshold meanwhile: young collections before a full one."""

_lock = threading.Lock()
_running = 0
_saved: int | None = None
"""The process's own third threshold while it is raised, else ``None``."""
_pauses = 0
_resume = False
"""Whether the collector was on when the outermost pause began (a user's ``gc.disable()``
stays in force)."""


def _on() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in {"0", "false", "no", "off"}


@contextlib.contextmanager
def in_flight() -> Iterator[None]:
    """Counts one sub-agent as running for the body's duration."""
    global _running, _saved
    with _lock:
        _running += 1
        if _running >= WIDE and _saved is None and _on():
            first, second, third = gc.get_threshold()
            if third < _DEFERRED:
                _saved = third
                gc.set_threshold(first, second, _DEFERRED)
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running < WIDE and _saved is not None:
                first, second, third = gc.get_threshold()
                if third == _DEFERRED:  # someone else's setting since then is theirs to keep
                    gc.set_threshold(first, second, _saved)
                _saved = None


@contextlib.contextmanager
def view_work() -> Iterator[None]:
    """The collector paused for the body (a build of the live view); pauses nest."""
    global _pauses, _resume
    with _lock:
        pausing = _pauses > 0 or _on()
        if pausing:
            if _pauses == 0:
                _resume = gc.isenabled()
                gc.disable()
            _pauses += 1
    try:
        yield
    finally:
        if pausing:
            with _lock:
                _pauses -= 1
                if _pauses == 0 and _resume:
                    gc.enable()
