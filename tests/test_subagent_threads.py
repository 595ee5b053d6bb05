"""The threads a sync fan-out runs its sub-agents on are kept for the next run, for a while.

Under a sync ``invoke`` on the main thread each sub-agent runs on a thread of its own, so that
Ctrl-C ends the wait for it (``tests/test_subagents_ctrl_c.py``). A notebook re-running a wide
fan-out would start and end hundreds of threads each time; finished ones wait for the next
sub-agent instead, and end when none comes.
"""

from __future__ import annotations

import contextvars
import multiprocessing
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from nbagents import ScriptedChatModel, create_deep_agent
from nbagents.models import delegate, parallel
from nbagents.subagents import _stop
from nbagents.subagents._stop import BUSY, IDLE

PATIENCE = 30.0


class Seen:
    """A sub-agent that notes the thread it runs on; all of a run's wait for each other, so
    the run needs as many threads as it has sub-agents."""

    def __init__(self, width: int) -> None:
        self.threads: list[int] = []
        self.barrier = threading.Barrier(width, timeout=PATIENCE)

        def work(state: dict[str, Any]) -> dict[str, Any]:
            self.threads.append(threading.get_ident())
            self.barrier.wait()
            return {"messages": [AIMessage("ok")]}

        self.subagent = {"name": "w", "description": "Works.", "runnable": RunnableLambda(work)}


def _run(width: int) -> Seen:
    seen = Seen(width)
    model = ScriptedChatModel(
        script={"main": [parallel(*(delegate(str(i), "w") for i in range(width))), "done"]}
    )
    agent = create_deep_agent(model, subagents=[seen.subagent])
    result = agent.invoke({"messages": [("user", "go")]})
    assert result["messages"][-1].content == "done"
    assert len(seen.threads) == width
    return seen


def _named(name: str) -> set[int]:
    return {t.ident for t in threading.enumerate() if t.name == name and t.ident is not None}


def _wait_for(check: object, what: str) -> None:
    deadline = time.monotonic() + PATIENCE
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.01)
    assert check(), what  # type: ignore[operator]


@pytest.fixture
def fresh_workers(python_sigint: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A pool of its own for the test. Its threads wait long enough for the test's next run on a
    loaded machine (building the next agent can take over a second there) and end after it."""
    monkeypatch.setattr(_stop, "_workers", _stop._Workers())
    monkeypatch.setattr(_stop, "IDLE_SECONDS", 30.0)
    yield


def test_a_second_run_reuses_the_threads_of_the_first(fresh_workers: None) -> None:
    first = _run(4)
    assert len(set(first.threads)) == 4, "each sub-agent has a thread of its own"
    kept = set(first.threads)
    _wait_for(lambda: kept <= _named(IDLE), "finished sub-agents' threads were not kept")
    second = _run(4)
    assert set(second.threads) == kept


def test_kept_threads_end_when_no_sub_agent_comes(
    fresh_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stop, "IDLE_SECONDS", 1.0)
    threads = set(_run(3).threads)
    _wait_for(lambda: not threads & (_named(IDLE) | _named(BUSY)), "idle threads never ended")


def test_no_more_threads_than_max_idle_are_kept(
    fresh_workers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_stop, "MAX_IDLE", 2)
    threads = set(_run(5).threads)
    _wait_for(lambda: not threads & _named(BUSY), "the sub-agents' threads stayed busy")
    assert len(threads & _named(IDLE)) <= 2


def test_a_wider_run_than_the_threads_kept_starts_more(fresh_workers: None) -> None:
    kept = set(_run(2).threads)
    _wait_for(lambda: kept <= _named(IDLE), "finished sub-agents' threads were not kept")
    wider = set(_run(5).threads)
    assert kept < wider and len(wider) == 5


_LEFT: contextvars.ContextVar[str] = contextvars.ContextVar("left_by_a_sub_agent", default="")


def test_a_reused_thread_carries_nothing_of_the_sub_agent_before(fresh_workers: None) -> None:
    # The run's config and callbacks live in context variables: a thread kept from one run
    # must give the next sub-agent the context of its own caller, not what the last one left.
    def first() -> tuple[int, str]:
        _LEFT.set("secret of run 1")
        return threading.get_ident(), _LEFT.get()

    def second() -> tuple[int, str]:
        return threading.get_ident(), _LEFT.get()

    with _stop.ctrl_c_stops_subagents():
        thread_1, value_1 = _stop.run_stoppable(first)
        _wait_for(lambda: thread_1 in _named(IDLE), "the sub-agent's thread was not kept")
        thread_2, value_2 = _stop.run_stoppable(second)
    assert thread_1 == thread_2, "the second sub-agent did not reuse the first one's thread"
    assert value_1 == "secret of run 1"
    assert value_2 == ""
    assert _LEFT.get() == ""


def _in_child(queue: multiprocessing.Queue[str]) -> None:
    done = threading.Event()
    _stop._workers.submit(done.set)
    queue.put("ran" if done.wait(10) else "hung")


def test_a_forked_process_starts_its_own_threads(fresh_workers: None) -> None:
    # The parent's kept threads do not exist in a forked child: handing them work would hang.
    kept = set(_run(2).threads)
    _wait_for(lambda: kept <= _named(IDLE), "finished sub-agents' threads were not kept")
    context = multiprocessing.get_context("fork")
    queue: multiprocessing.Queue[str] = context.Queue()
    child = context.Process(target=_in_child, args=(queue,))
    child.start()
    try:
        assert queue.get(timeout=PATIENCE) == "ran"
    finally:
        child.join(PATIENCE)
