"""Ctrl-C during a synchronous ``invoke`` with parallel sub-agents stops the run at once.

LangGraph's sync executor waits for every running task before ``KeyboardInterrupt`` reaches the
caller, so Ctrl-C used to be honoured only when the sub-agents' tools finished. These tests send
a real SIGINT while three sub-agents sit in a tool that only the test can release: the
interrupt must arrive while the tools are still blocked, and the sub-agents left behind must
stop before their next model call.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import call, delegate, parallel
from nbagents.subagents._stop import BUSY

WORKER = {"name": "w", "description": "Works.", "system_prompt": "Work."}
HELD_FOR = 30.0
"""How long a held tool waits at most: only a broken fix ever waits it out."""


class Held:
    """A tool that blocks until released, counting who entered and who came back."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)
        self.finished = 0
        self._lock = threading.Lock()

        @tool
        def hold(x: str) -> str:
            """Blocks until the test releases it."""
            self.entered.release()
            self.release.wait(HELD_FOR)
            with self._lock:
                self.finished += 1
            return x

        self.tool = hold

    def wait_entered(self, count: int) -> None:
        for _ in range(count):
            assert self.entered.acquire(timeout=HELD_FOR), "the held tool was never called"


@pytest.fixture
def held(python_sigint: None) -> Iterator[Held]:
    h = Held()
    yield h
    h.release.set()
    _wait_until_no_subagent_runs()


def _busy() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == BUSY]


def _wait_until_no_subagent_runs() -> None:
    """Sub-agents' threads are kept for the next run when theirs ends: wait for that, not for
    the threads to end."""
    deadline = time.monotonic() + HELD_FOR
    while _busy() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _busy(), "a sub-agent left behind never stopped"


def _three_workers() -> ScriptedChatModel:
    return ScriptedChatModel(
        script={
            "main": [parallel(*(delegate(x, "w") for x in "ABC")), "done"],
            "w": [call("hold", x="1"), "ok"],
        }
    )


def _ctrl_c_once(held: Held, entered: int) -> None:
    def press() -> None:
        held.wait_entered(entered)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press, daemon=True).start()


def test_ctrl_c_stops_a_sync_invoke_while_its_subagents_are_still_busy(held: Held) -> None:
    model = _three_workers()
    agent = create_deep_agent(model, [held.tool], subagents=[WORKER])
    tracer = Tracer()
    _ctrl_c_once(held, entered=3)
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    assert held.finished == 0, "Ctrl-C was honoured only after the sub-agents' tools finished"
    assert not held.release.is_set()
    spans = [s for s in tracer.trace.spans if not s.hidden]
    assert {s.status for s in spans if s.kind in ("agent", "task", "subagent")} == {"interrupted"}
    assert tracer.trace.failures() == 0


def test_subagents_left_behind_stop_before_their_next_model_call(held: Held) -> None:
    model = _three_workers()
    agent = create_deep_agent(model, [held.tool], subagents=[WORKER])
    tracer = Tracer()
    _ctrl_c_once(held, entered=3)
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    assert len(_busy()) >= 3, "the sub-agents ran on the invoking thread's workers, not their own"
    held.release.set()
    _wait_until_no_subagent_runs()
    assert held.finished == 3
    workers = [s for s in tracer.trace.spans if s.kind == "subagent"]
    assert len(workers) == 3
    for worker in workers:
        models = [s for s in tracer.trace.descendants(worker) if s.kind == "model"]
        assert len(models) == 1, "a stopped sub-agent called its model again"
        assert worker.status == "interrupted"


def test_the_previous_sigint_handler_is_back_after_a_run_ends_or_is_stopped(held: Held) -> None:
    before = signal.getsignal(signal.SIGINT)
    quick = ScriptedChatModel(script={"main": [delegate("A", "w"), "done"], "w": ["ok"]})
    create_deep_agent(quick, subagents=[WORKER]).invoke({"messages": [("user", "go")]})
    assert signal.getsignal(signal.SIGINT) is before
    agent = create_deep_agent(_three_workers(), [held.tool], subagents=[WORKER])
    _ctrl_c_once(held, entered=3)
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]})
    assert signal.getsignal(signal.SIGINT) is before


def test_a_run_after_a_stopped_one_is_not_stopped(held: Held) -> None:
    agent = create_deep_agent(_three_workers(), [held.tool], subagents=[WORKER])
    _ctrl_c_once(held, entered=3)
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]})
    quick = ScriptedChatModel(script={"main": [delegate("A", "w"), "done"], "w": ["fine"]})
    result = create_deep_agent(quick, subagents=[WORKER]).invoke({"messages": [("user", "go")]})
    assert result["messages"][-1].content == "done"
    assert result["messages"][-2].content == "fine"


def test_a_custom_sigint_handler_still_runs(held: Held) -> None:
    seen: list[int] = []

    def mine(signum: int, frame: object) -> None:
        seen.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, mine)
    try:
        agent = create_deep_agent(_three_workers(), [held.tool], subagents=[WORKER])
        _ctrl_c_once(held, entered=3)
        with pytest.raises(KeyboardInterrupt):
            agent.invoke({"messages": [("user", "go")]})
        assert seen == [signal.SIGINT]
        assert held.finished == 0
        assert signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, previous)
