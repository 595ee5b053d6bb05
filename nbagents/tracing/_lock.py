"""The trace's lock: reentrant, and never handed to a thread that cannot run yet.

With ``threading.RLock`` a thread blocked on the lock is woken holding it and must then wait
for the GIL (up to the switch interval) while every other thread that wants the lock queues
behind it; with hundreds of agent threads such a queue can last as long as the run. Here a
thread that finds the lock taken sleeps briefly (without the GIL) and tries again: the lock is
only ever taken by a thread that is running, so no queue forms.
"""

from __future__ import annotations

import threading
import time

__all__ = ["TraceLock"]

_FIRST_NAP = 0.000_05
_LONGEST_NAP = 0.001


class TraceLock:
    """A reentrant lock, as ``threading.RLock`` is, with the waiting described above."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        """Take the lock, as ``RLock.acquire``: with ``blocking=False`` only if it is free,
        with a ``timeout`` (seconds) waiting at most that long. True when taken."""
        if self._lock.acquire(False):
            return True
        if not blocking:
            return False
        deadline = None if timeout < 0 else time.monotonic() + timeout
        nap = _FIRST_NAP
        while True:
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                nap = min(nap, left)
            time.sleep(nap)
            if self._lock.acquire(False):
                return True
            nap = min(nap * 2, _LONGEST_NAP)

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> TraceLock:
        if not self._lock.acquire(False):
            self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
