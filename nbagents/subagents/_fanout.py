"""Python's full garbage collections wait while a wide fan-out of sub-agents is in flight.

CPython collects its oldest generation when enough objects have survived two younger
collections. Every sub-agent in flight holds thousands of such objects (its graph run, its
config, callbacks, messages), so during a wide fan-out that condition keeps coming true, and
each full collection walks every object of every sub-agent still running: a cost per spawn
that grows with the width. Measured on a 2,000-way fan-out with no model latency: 14 full
collections took 2.2 s of 7.1 s of CPU; the young collections together took 0.45 s.

While at least :data:`WIDE` sub-agents run at once, the oldest generation's threshold is
raised so that only young collections run (they still free short-lived cycles); when the
count drops below it, the threshold the process had is put back, and the next full
collection happens as it would have. Only the third threshold is touched, and only if nobody
else changed it meanwhile. This is nbagents' one change to the collector;
``NBAGENTS_DEFER_GC=0`` in the environment turns it off (read as each wide fan-out begins).
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

__all__ = ["ENV", "WIDE", "in_flight"]

WIDE = 64
"""Sub-agents running at once from which full collections wait (narrower runs: no change)."""

ENV = "NBAGENTS_DEFER_GC"
"""``0`` (or ``false``, ``no``, ``off``) leaves the collector's thresholds alone."""

_DEFERRED = 1_000_000
"""The oldest generation's threshold meanwhile: young collections before a full one."""

_lock = threading.Lock()
_running = 0
_saved: int | None = None
"""The process's own third threshold while it is raised, else ``None``."""


@contextlib.contextmanager
def in_flight() -> Iterator[None]:
    """Counts one sub-agent as running for the body's duration."""
    _enter()
    try:
        yield
    finally:
        _leave()


def _enter() -> None:
    global _running, _saved
    with _lock:
        _running += 1
        if _running >= WIDE and _saved is None and _deferring():
            first, second, third = gc.get_threshold()
            if third < _DEFERRED:
                _saved = third
                gc.set_threshold(first, second, _DEFERRED)


def _leave() -> None:
    global _running, _saved
    with _lock:
        _running -= 1
        if _running < WIDE and _saved is not None:
            first, second, third = gc.get_threshold()
            if third == _DEFERRED:  # someone else's setting since then is theirs to keep
                gc.set_threshold(first, second, _saved)
            _saved = None


def _deferring() -> bool:
    return os.environ.get(ENV, "1").strip().lower() not in {"0", "false", "no", "off"}
