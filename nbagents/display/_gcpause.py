"""The view's own work runs with Python's cyclic garbage collector paused.

Building the view allocates many short-lived containers, freed by reference counting as soon as
they are dropped. Each 700 allocations still count towards a young collection, every tenth
young collection towards an older one, and so on: at 500 sub-agents the view's updates and its
saved output added one full collection per run (~150 ms walking every object of the run's
trace and state). Paused, a build adds at most one young collection when it ends. Nothing is
lost: cycles made meanwhile are found by the next collection.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collections_paused"]

_lock = threading.Lock()
_depth = 0
_resume = False
"""Whether the collector was on when the outermost pause began (a user's ``gc.disable()``
stays in force)."""


@contextlib.contextmanager
def collections_paused() -> Iterator[None]:
    """Pause the cyclic collector for the body; pauses on several threads nest."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
