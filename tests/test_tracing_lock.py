"""The trace's lock: what the tracer and the views rely on it for."""

from __future__ import annotations

import threading
import time

from nbagents.tracing import Trace
from nbagents.tracing._lock import TraceLock


def test_the_thread_holding_it_can_take_it_again() -> None:
    lock = TraceLock()
    with lock, lock:
        assert lock.acquire(blocking=False)
        lock.release()


def test_another_thread_cannot_take_it_while_it_is_held() -> None:
    lock = TraceLock()
    got: list[bool] = []
    with lock:
        other = threading.Thread(target=lambda: got.append(lock.acquire(blocking=False)))
        other.start()
        other.join()
    assert got == [False]
    assert lock.acquire(blocking=False)  # it was not taken by the thread that tried
    lock.release()


def test_a_waiting_thread_takes_it_once_it_is_released() -> None:
    lock = TraceLock()
    waiting = threading.Event()
    taken = threading.Event()

    def wait_for_it() -> None:
        waiting.set()
        with lock:
            taken.set()

    with lock:
        other = threading.Thread(target=wait_for_it)
        other.start()
        waiting.wait()
        time.sleep(0.05)  # the other thread is now napping between tries
        assert not taken.is_set()
    other.join(timeout=10)
    assert taken.is_set()


def test_many_threads_that_lose_the_gil_inside_it_still_take_turns() -> None:
    # The tracer's threads update spans under the lock; one preempted inside must not let
    # another in.
    lock = TraceLock()
    inside = 0
    overlaps = 0
    total = 0

    def work() -> None:
        nonlocal inside, overlaps, total
        for _ in range(200):
            with lock:
                inside += 1
                if inside > 1:
                    overlaps += 1
                time.sleep(0)  # gives the GIL away while holding the lock
                total += 1
                inside -= 1

    threads = [threading.Thread(target=work) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert (overlaps, total) == (0, 16 * 200)


def test_a_trace_guards_its_spans_with_it() -> None:
    trace = Trace()
    assert isinstance(trace.lock, TraceLock)
    with trace.lock:
        assert trace.spans == []  # the trace's own reads take it again on the same thread


def test_a_timed_take_gives_up_when_another_thread_keeps_it() -> None:
    lock = TraceLock()
    held = threading.Event()
    done = threading.Event()

    def hold() -> None:
        with lock:
            held.set()
            done.wait(timeout=10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(timeout=10)
    try:
        assert lock.acquire(timeout=0.05) is False
    finally:
        done.set()
        holder.join(timeout=10)
    assert lock.acquire(timeout=5)
    lock.release()
