"""A large run's live view is built by a worker process beside the kernel: the same view, the
kernel only sends the spans that changed, and anything the worker cannot take falls back."""

from __future__ import annotations

import json
import logging
import os
import pickle
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from support.view_mirror import final_view, follow, saved_view

import nbagents.display._viewsource as viewsource
from nbagents import ScriptedChatModel, SubAgent, Tracer, create_deep_agent
from nbagents.display._spanview import whole_input
from nbagents.display._viewmodel import build_view
from nbagents.display._viewsource import (
    OFFLOAD_SPANS,
    LocalSource,
    RemoteSource,
    ViewWorker,
    view_worker,
)
from nbagents.display.live import LiveView
from nbagents.models import call, delegate, parallel, say
from nbagents.tracing import Span, Trace
from nbagents.tracing._jsonready import Deferred

INPUT = {"messages": [("user", "go")]}
WORKERS = 60
"""Sub-agents of the wide run: about 9 steps each, past OFFLOAD_SPANS."""


def _comparable(view: dict[str, Any]) -> dict[str, Any]:
    same: dict[str, Any] = json.loads(json.dumps({k: v for k, v in view.items() if k != "rev"}))
    return same


def _wide_agent(
    workers: int = WORKERS, latency: float = 0.0, before_lookup: Callable[[], None] | None = None
) -> Any:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        if before_lookup is not None:
            before_lookup()
        return f"value of {key}"

    model = ScriptedChatModel(
        script={
            "main": [
                parallel(*(delegate(f"job {i}", "worker") for i in range(workers))),
                say("done"),
            ],
            "worker": [call("lookup", key="k"), say("found it")],
        },
        latency=latency,
    )
    worker: SubAgent = {
        "name": "worker",
        "description": "Looks things up.",
        "system_prompt": "Look up.",
    }
    return create_deep_agent(model, [lookup], subagents=[worker])


@pytest.fixture
def worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[ViewWorker]:
    """A worker of this test's own, up before the run starts (its imports take seconds)."""
    monkeypatch.delenv(viewsource.ENV, raising=False)
    monkeypatch.setattr(viewsource, "_worker", None)
    monkeypatch.setattr(viewsource, "_gave_up", False)
    started = view_worker()
    assert started is not None
    assert started.ready.wait(60), started.broken
    yield started
    started.close()


REVS: list[int] = []
"""The revision of every view and patch the last ``_run``'s widget was sent, in order."""


def _run(agent: Any, payload: Any = None) -> tuple[LiveView, Trace, Any]:
    """A run with the view following it; ``payload`` rides in the user's message, so every
    model call's input holds it."""
    tracer = Tracer(Trace())
    view = LiveView(tracer.trace)
    REVS.clear()
    view.widget.observe(
        lambda change: REVS.append(json.loads(change["new"])["rev"]),
        names=["view_json", "patch_json"],
    )
    view.start()
    mirror = follow(view)
    message = HumanMessage("go", additional_kwargs={} if payload is None else {"extra": payload})
    agent.invoke({"messages": [message]}, {"callbacks": [tracer]})
    tracer.trace.finished = True
    view.sync()  # the widget's last patch, as a view that is not displayed sends it
    return view, tracer.trace, mirror


def test_a_large_run_is_built_by_the_worker_into_the_view_the_kernel_would_build(
    worker: ViewWorker,
) -> None:
    view, trace, mirror = _run(_wide_agent())
    assert len(trace) > OFFLOAD_SPANS
    assert isinstance(view.source, RemoteSource)
    assert worker.pid != os.getpid()
    expected = _comparable(dict(build_view(trace)))
    # The widget's messages (local views, then the worker's whole view and patches) add up to
    # the view built here from the trace, and so does the saved output.
    assert _comparable(mirror.view()) == expected
    view.finish()
    assert _comparable(saved_view(view._bundle()["text/html"])) == expected
    # Its revisions go on from the kernel's: a page's last patch is never applied to the
    # worker's first view.
    assert view.wholes >= 2 and len(REVS) == view.updates
    assert sorted(set(REVS)) == REVS, REVS


def test_a_small_run_stays_in_the_kernel(worker: ViewWorker) -> None:
    view, trace, _ = _run(_wide_agent(workers=2))
    view.finish()
    assert len(trace) < OFFLOAD_SPANS
    assert isinstance(view.source, LocalSource)


def test_no_worker_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(viewsource, "_worker", None)
    monkeypatch.setattr(viewsource, "_gave_up", False)
    monkeypatch.setenv(viewsource.ENV, "0")
    view, trace, mirror = _run(_wide_agent())
    assert isinstance(view.source, LocalSource) and viewsource._worker is None
    assert _comparable(mirror.view()) == _comparable(dict(build_view(trace)))


class _KernelOnly:
    """A class the worker cannot import: like one defined in the notebook."""

    def __init__(self, value: str) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"KernelOnly({self.value})"


def test_inputs_the_worker_cannot_unpickle_are_sent_converted(worker: ViewWorker) -> None:
    module = types.ModuleType("nbagents_kernel_only")
    module._KernelOnly = _KernelOnly  # type: ignore[attr-defined]
    _KernelOnly.__module__ = module.__name__
    sys.modules[module.__name__] = module
    try:
        view, trace, mirror = _run(_wide_agent(), _KernelOnly("x"))
    finally:
        del sys.modules[module.__name__]
    assert isinstance(view.source, RemoteSource) and view.source._converting
    assert _comparable(mirror.view()) == _comparable(dict(build_view(trace)))


def test_inputs_that_cannot_be_pickled_are_sent_converted(worker: ViewWorker) -> None:
    view, trace, mirror = _run(_wide_agent(), threading.Lock())
    assert isinstance(view.source, RemoteSource) and view.source._converting
    assert _comparable(mirror.view()) == _comparable(dict(build_view(trace)))


def test_a_worker_that_dies_leaves_the_view_in_the_kernel_whole(
    worker: ViewWorker, caplog: pytest.LogCaptureFixture
) -> None:
    # The sub-agents' tools wait until the view moved to the worker and kill it there: the run
    # cannot end first (under a loaded machine the flusher's first look past OFFLOAD_SPANS came
    # after a run whose model calls took a second each).
    killed = threading.Event()
    kill = threading.Lock()

    def kill_once_offloaded() -> None:
        deadline = time.monotonic() + 60
        while not killed.is_set() and time.monotonic() < deadline:
            with kill:
                if not killed.is_set() and isinstance(view.source, RemoteSource):
                    os.kill(worker.pid, 9)
                    killed.set()
            time.sleep(0.02)

    agent = _wide_agent(before_lookup=kill_once_offloaded)
    tracer = Tracer(Trace())
    view = LiveView(tracer.trace).start()
    with caplog.at_level(logging.WARNING, logger="nbagents"):
        agent.invoke(INPUT, {"callbacks": [tracer]})
        tracer.trace.finished = True
        view.finish()
    assert killed.is_set()
    assert isinstance(view.source, LocalSource)
    assert any("view worker failed" in r.getMessage() for r in caplog.records)
    built = _comparable(dict(build_view(tracer.trace)))
    assert _comparable(saved_view(view._bundle()["text/html"])) == built
    # No worker is started again in this process: views stay in the kernel.
    assert view_worker() is None


def test_a_forked_process_does_not_use_its_parents_worker(worker: ViewWorker) -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its own worker, or none
        try:
            mine = viewsource._worker
            os.write(write, b"none" if mine is None else b"parent's")
        finally:
            os._exit(0)
    os.close(write)
    try:
        assert os.read(read, 16) == b"none"
    finally:
        os.close(read)
        os.waitpid(pid, 0)


def test_a_deferred_value_pickles_as_given_or_as_converted() -> None:
    pending = Deferred({"messages": [("user", "hi")]}, 1000)
    again = pickle.loads(pickle.dumps(pending))
    assert again.resolve() == pending.resolve()
    converted = pickle.loads(pickle.dumps(pending))  # resolved now: its result goes
    assert converted.resolve() == pending.resolve()


def test_put_replaces_a_span_in_place_and_keeps_its_parent() -> None:
    trace = Trace()
    root = Span(id="r", parent_id=None, kind="agent", name="a", agent="a", depth=0, start=0.0)
    child = Span(id="c", parent_id="r", kind="tool", name="t", agent="a", depth=0, start=0.1)
    trace.put(root)
    trace.put(child)
    ended = Span(
        id="c", parent_id="r", kind="tool", name="t", agent="a", depth=0, start=0.1, end=0.2
    )
    trace.put(ended)
    assert [s.id for s in trace.spans] == ["r", "c"] and trace.get("c").end == 0.2
    assert [s.id for s in trace.children("r")] == ["c"]
    moved = Span(id="c", parent_id=None, kind="tool", name="t", agent="a", depth=0, start=0.1)
    with pytest.raises(ValueError, match="parent"):
        trace.put(moved)


def test_a_view_answers_a_whole_input_request_through_the_worker(worker: ViewWorker) -> None:
    view, trace, mirror = _run(_wide_agent())
    assert isinstance(view.source, RemoteSource)
    model = next(s for s in trace.spans if s.kind == "model" and s.agent == "worker")
    nodes = mirror.view()["nodes"]
    key = next(n["id"] for n in nodes if n["kind"] == "model" and n["start"] == model.start)
    sent: list[dict[str, Any]] = []
    view.widget.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    deadline = time.monotonic() + 10
    view._on_msg(view.widget, {"type": "input", "id": key}, [])
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sent and sent[0]["id"] == key
    label, messages = whole_input(model)
    assert sent[0]["label"] == label and sent[0]["messages"] == messages
    assert messages[-1]["content"].startswith("job ")


def test_a_run_that_grows_large_moves_to_the_worker_at_once_not_when_the_next_update_is_due(
    worker: ViewWorker,
) -> None:
    # A view built in the kernel waits after each update (MAX_DUTY times its cost). Past
    # OFFLOAD_SPANS the next update moves it to the worker without that wait: held back, a
    # 500-way run's view moved at ~2,000 steps, and the page had 3 MB to draw at once.
    step = {"agent": "main", "depth": 0, "start": 0.0}
    trace = Trace([Span(id="main", parent_id=None, kind="agent", name="main", **step)])
    view = LiveView(trace).start()
    view._send_at = time.monotonic() + 3600  # the kernel-built view's next update is far off
    for i in range(OFFLOAD_SPANS):
        trace.add(Span(id=f"t{i}", parent_id="main", kind="tool", name=f"tool {i}", **step))
    deadline = time.monotonic() + 60
    while not isinstance(view.source, RemoteSource) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert isinstance(view.source, RemoteSource)
    view.finish()
    assert [n["name"] for n in final_view(view)["nodes"]][-1] == f"tool {OFFLOAD_SPANS - 1}"
