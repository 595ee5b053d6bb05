"""The live view builds with the cyclic garbage collector paused (nbagents._gc), and always turns
it back on; NBAGENTS_DEFER_GC=0 leaves the collector alone."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from nbagents import ScriptedChatModel, _gc, create_deep_agent, trace
from nbagents._gc import view_work
from nbagents.display.live import LiveView


@pytest.fixture(autouse=True)
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_the_collector_is_paused_inside_and_on_again_after() -> None:
    with view_work():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_it_is_on_again_after_the_body_raised() -> None:
    with pytest.raises(ValueError), view_work():
        raise ValueError("the view failed")
    assert gc.isenabled()


def test_pauses_on_two_threads_end_when_the_last_one_does() -> None:
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with view_work():
            inside.set()
            leave.wait(timeout=10)

    thread = threading.Thread(target=other)
    with view_work():
        thread.start()
        inside.wait(timeout=10)
    assert not gc.isenabled()  # the other thread's pause goes on
    leave.set()
    thread.join(timeout=10)
    assert gc.isenabled()


def test_a_collector_the_user_turned_off_stays_off() -> None:
    gc.disable()
    with view_work():
        pass
    assert not gc.isenabled()


def test_the_live_view_leaves_the_collector_on() -> None:
    agent = create_deep_agent(ScriptedChatModel(script={"main": ["hello"]}))
    with trace(display=False) as t:
        agent.invoke({"messages": [("user", "hi")]})
    view = LiveView(t).start()
    view.finish()
    assert view.updates >= 1
    assert gc.isenabled()


def test_switched_off_the_view_leaves_the_collector_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_gc.ENV, "0")
    with view_work():
        assert gc.isenabled()
    assert gc.isenabled()
