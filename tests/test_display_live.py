"""The live view: widget state, updates during a synchronous run, throttling, failure isolation."""

from __future__ import annotations

import contextvars
import itertools
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from support.display_fixtures import build_trace, make_agent
from support.view_mirror import final_view, follow, saved_view, stat

import nbagents.display.live as live
from nbagents.display._fingerprints import SpanFingerprints
from nbagents.display._format import format_tokens
from nbagents.display._html import render_view, trace_html
from nbagents.display._saved import _code, unpacked
from nbagents.display._viewmodel import ViewBuilder, build_view
from nbagents.display.live import LIVE_HTML_END, LIVE_HTML_START, LIVE_TEXT_PREFIX, LiveView
from nbagents.tracing import Span, Trace, recording
from nbagents.tracing.span import SpanKind, SpanStatus

INPUT = {"messages": [("user", "go")]}


class Recorder:
    """The view as the front end has it after every widget update, with the time and the
    thread the update came from."""

    def __init__(self, view: LiveView) -> None:
        self.events: list[tuple[float, str, dict[str, Any]]] = []
        self.mirror = follow(view)
        view.widget.observe(self._on_change, names=["view_json", "patch_json"])

    def _on_change(self, change: dict[str, Any]) -> None:
        state = self.mirror.view()
        self.events.append((time.perf_counter(), threading.current_thread().name, state))


def _without_rev(view: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps({k: v for k, v in view.items() if k not in ("rev", "version")}))


def _kinds(state: dict[str, Any]) -> list[str]:
    return [n["kind"] for n in state["nodes"]]


def test_widget_state_after_a_run_has_the_tree_and_the_token_table() -> None:
    agent = make_agent(latency=0.02, fail_writer=True)
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        result = agent.invoke(INPUT)
    view.finish()
    assert result["messages"][-1].content == "Done: combined."
    state = final_view(view)
    trace = tracer.trace
    assert state["status"] == "ok" and state["finished"] is True
    assert stat(state, "sub-agent spawns") == "4" and stat(state, "agents") == "4"
    assert _kinds(state).count("subagent") == 4 and _kinds(state).count("task") == 4
    assert _kinds(state).count("tool") == 1 and "chain" not in _kinds(state)
    assert [n["status"] for n in state["nodes"] if n["kind"] == "subagent"] == [
        "ok",
        "ok",
        "ok",
        "error",
    ]
    rows = {(r["cells"][0], r["cells"][1]): r["cells"] for r in state["agent_rows"]}
    assert set(rows) == {
        ("main", ""),
        ("researcher", "Research A"),
        ("researcher", "Research B"),
        ("general-purpose", "Dig deeper"),
        ("writer", "Write C"),
    }
    own_total, incl_total = (
        state["columns"].index("own total"),
        state["columns"].index("incl. sub-agents"),
    )
    assert rows[("main", "")][incl_total] == format_tokens(trace.total_usage().total)
    for rec in trace.subagents:
        row = rows[(rec.type, rec.description)]
        assert row[own_total] == format_tokens(rec.tokens_own.total)
        assert row[incl_total] == format_tokens(rec.tokens_total.total)
    b = rows[("researcher", "Research B")]
    assert int(b[incl_total].replace(",", "")) > int(b[own_total].replace(",", "")) > 0
    # the timeline shows the parallel researchers overlapping
    bars = [(r["start"], r["end"]) for r in state["timeline"] if r["depth"] == 1]
    assert len(bars) == 3 and max(bars[0][0], bars[1][0]) < min(bars[0][1], bars[1][1])
    # The front end is told which kinds and statuses there are: it keeps no copy of them.
    words = json.loads(view.widget.view_json)["vocabulary"]
    assert words == {
        "kinds": list(get_args(SpanKind)),
        "statuses": list(get_args(SpanStatus)),
        "agent_kinds": ["agent", "subagent"],
    }
    script = LiveView(build_trace()).widget._esm
    assert '"interrupted", "limit"' not in script and '"skill", "model"' not in script


def test_the_patches_add_up_to_the_view_of_the_finished_run() -> None:
    # What the front end holds after the first view and every patch is what a fresh build of
    # the finished trace shows, and most updates were patches, not whole views.
    # Updates are asked for here as the run goes, not left to the view's timer: how often that
    # fires depends on the machine's load, and the test is about what the patches add up to.
    agent = make_agent(latency=0.05, fail_writer=True)
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        mirror = follow(view)
        context = contextvars.copy_context()  # the thread's runs are recorded by this block
        run = threading.Thread(target=context.run, args=(agent.invoke, INPUT))
        run.start()
        while run.is_alive():
            view.sync()
            run.join(0.05)
        view.sync()
        seen, expected = mirror.view(), build_view(tracer.trace)
    view.finish()
    assert mirror.patches >= 3 and view.wholes == 1
    assert _without_rev(seen) == _without_rev(dict(expected))


def test_a_page_loaded_anew_is_sent_the_whole_view_as_it_is_and_no_whole_view_goes_unasked() -> (
    None
):
    # The widget holds its last whole view and last patch. A page loaded while the run goes on
    # asks for the whole state and gets the view as it is then; no other whole view goes out
    # mid-run (at 500 sub-agents each cost the page ~0.5 s and the kernel 4 MB to send).
    step = {"agent": "main", "depth": 0, "start": 0.0}
    trace = Trace([Span(id="main", parent_id=None, kind="agent", name="main", **step)])
    view = LiveView(trace)
    view.sync()
    for i in range(400):
        done = {"end": 0.2, "status": "ok", "outputs": {"content": "x" * 400}}
        trace.add(Span(id=f"t{i}", parent_id="main", kind="tool", name=f"tool {i}", **step, **done))
        view.sync()
    assert (view.updates, view.wholes) == (401, 1)
    state = view.widget.get_state()  # what ipywidgets answers a page's request for the state
    assert view.wholes == 2
    nodes = json.loads(state["view_json"])["nodes"]
    assert [n["name"] for n in nodes][-1] == "tool 399" and len(nodes) == 401
    # a trait sent as it changes does not build anything
    assert set(view.widget.get_state("notice")) == {"notice"} and view.wholes == 2
    view.finish()
    assert final_view(view)["nodes"][-1]["name"] == "tool 399"


def test_a_periodic_update_caught_by_finish_sends_nothing_and_finish_has_it_all() -> None:
    # The flusher's tick running while finish() begins takes the changes in but sends nothing:
    # finish() makes the last update (at 500 sub-agents a tick caught there sent a ~4 MB whole
    # view while the cell waited, for a widget replaced right after).
    step = {"agent": "main", "depth": 0, "start": 0.0, "end": 0.1, "status": "ok"}
    trace = Trace([Span(id="main", parent_id=None, kind="agent", name="main", **step)])
    view = LiveView(trace)
    view.sync()
    sent = view.updates
    trace.add(Span(id="late", parent_id="main", kind="tool", name="late", **step))
    view._send_at = 0.0  # an update is due
    view._stop.set()  # what finish() does first
    view._tick()
    assert view.updates == sent
    view._stop.clear()
    view.finish()
    assert [n["name"] for n in final_view(view)["nodes"]] == ["main", "late"]


def test_a_run_followed_after_its_output_was_saved_gets_a_widget_again() -> None:
    step = {"agent": "main", "depth": 0, "start": 0.0, "end": 0.1, "status": "ok"}
    trace = Trace([Span(id="main", parent_id=None, kind="agent", name="main", **step)])
    view = LiveView(trace)
    view.finish()
    assert set(view._repr_mimebundle_()) == {"text/html", "text/plain"}
    first, seen = view.widget, []

    def resumption() -> str:
        seen.append(view.widget.view_json)
        trace.add(Span(id="more", parent_id="main", kind="tool", name="more", **step))
        return "done"

    assert view.follow(resumption) == "done"
    # a new widget took the output back and was sent the whole view before the run went on
    assert view.widget is not first and json.loads(seen[0])["nodes"][0]["name"] == "main"
    assert first.comm is None
    assert [n["name"] for n in final_view(view)["nodes"]] == ["main", "more"]


def test_updates_arrive_during_a_synchronous_invoke() -> None:
    # Long enough for three updates where the flusher slows down because the machine is busy
    # (its rate follows how long a build takes).
    agent = make_agent(latency=0.3)
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        recorder = Recorder(view)
        t0 = time.perf_counter()
        agent.invoke(INPUT)
        t1 = time.perf_counter()
    view.finish()
    during = [(t, name, s) for t, name, s in recorder.events if t0 < t < t1]
    assert len(during) >= 3, [(round(t - t0, 3), len(s["nodes"])) for t, _, s in recorder.events]
    # sent by the flusher thread, not the agent's threads nor the main thread
    assert {name for _, name, _ in during} == {"nbagents-live"}
    # the tree grows while the run goes on
    sizes = [len(s["nodes"]) for _, _, s in during]
    assert sizes == sorted(sizes) and sizes[0] < sizes[-1]
    assert any(s["status"] == "running" and "subagent" in _kinds(s) for _, _, s in during)
    # the parallel sub-agents are seen running at the same time
    assert any(
        sum(1 for n in s["nodes"] if n["kind"] == "subagent" and n["status"] == "running") >= 2
        for _, _, s in during
    )
    final = recorder.events[-1][2]
    assert final["status"] == "ok" and final["finished"] and len(final["nodes"]) == 18


def test_updates_are_throttled_to_ten_a_second() -> None:
    trace = Trace()
    view = LiveView(trace).start()
    recorder = Recorder(view)
    trace.add(
        Span(id="root", parent_id=None, kind="agent", name="main", agent="main", depth=0, start=0.0)
    )

    def sent_since_start() -> int:
        return sum(t > t0 for t, _, _ in list(recorder.events))

    def flood() -> None:
        # ~2000 span changes in about a second, from a worker thread; longer on a loaded
        # machine, until two updates went out during it (the deadline only stops a broken view).
        end, deadline = time.perf_counter() + 1.0, time.perf_counter() + 30
        i = 0
        while time.perf_counter() < deadline and (
            time.perf_counter() < end or sent_since_start() < 2
        ):
            trace.add(
                Span(
                    id=f"s{i}",
                    parent_id="root",
                    kind="tool",
                    name="t",
                    agent="main",
                    depth=0,
                    start=0.001 * i,
                    end=0.001 * i + 0.0005,
                    status="ok",
                )
            )
            i += 1
            time.sleep(0.0005)

    worker = threading.Thread(target=flood)
    t0 = time.perf_counter()
    worker.start()
    worker.join()
    flood_end, flood_over = time.perf_counter(), time.monotonic()
    # The flusher sends the last change by itself, without finish(), once its rest after the
    # update before is over: MAX_DUTY times that update's processor time, which grows with the
    # trace (on a busy machine the flood lasts longer and adds thousands more spans). Wait for
    # it, bounded by that rest.
    while len(recorder.mirror.nodes) < len(trace):
        rest_over = max(flood_over, view._send_at)  # the flusher's clock is time.monotonic()
        assert time.monotonic() < rest_over + 10, "the last change was never sent"
        time.sleep(0.02)
    elapsed = time.perf_counter() - t0
    times = [t for t, _, _ in recorder.events if t > t0]
    view.finish()
    assert len(trace) > 200
    assert len(times) <= elapsed * 10 + 2, len(times)
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= 0.08, gaps
    # it kept updating while the flood went on, not only once at the end
    assert sum(t < flood_end for t in times) >= 2


def _grow_until(trace: Trace, recorder: Recorder, *, updates: int, pause: float) -> None:
    """Add a step every ``pause`` seconds until the widget got ``updates`` updates (the deadline
    only keeps a broken flusher from hanging: on a machine whose cores other work keeps busy, a
    slow build's CPU time, and so three updates, took over 30 s)."""
    end = time.perf_counter() + 120
    i = 0
    while len(recorder.events) < updates and time.perf_counter() < end:
        trace.add(
            Span(id=f"s{i}", parent_id=None, kind="agent", name="a", agent="a", depth=0, start=0.0)
        )
        i += 1
        time.sleep(pause)


def _gaps_before_finish(recorder: Recorder) -> list[float]:
    """Seconds between the widget's updates, not counting the one finish() sends at once."""
    times = [t for t, _, _ in recorder.events][:-1]
    return [b - a for a, b in itertools.pairwise(times)]


def _view_whose_update_first(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[], None]
) -> tuple[Trace, LiveView, Recorder]:
    """A live view of a new trace whose builder calls ``before()`` at each update."""
    update = ViewBuilder.update

    def slowed(self: ViewBuilder) -> Any:
        before()
        return update(self)

    monkeypatch.setattr(ViewBuilder, "update", slowed)
    trace = Trace()
    view = LiveView(trace).start()
    return trace, view, Recorder(view)


def test_a_view_slow_to_build_is_rebuilt_less_often(monkeypatch: pytest.MonkeyPatch) -> None:
    # Building the view holds the GIL the agent's threads need: its share of time is capped.
    def spin() -> None:
        busy_until = time.thread_time() + 0.05
        while time.thread_time() < busy_until:
            pass

    trace, view, recorder = _view_whose_update_first(monkeypatch, spin)
    # Until three updates went out: on a loaded machine (other test workers) the build, and so
    # the wait after it, only take longer.
    _grow_until(trace, recorder, updates=3, pause=0.005)
    # A change the flusher has not sent: finish() sends it at once. (Without it, whether the
    # last span of the loop was in the third update or not decided the count.)
    trace.add(
        Span(id="last", parent_id=None, kind="agent", name="a", agent="a", depth=0, start=0.0)
    )
    view.finish()
    gaps = _gaps_before_finish(recorder)
    assert len(recorder.events) >= 4
    # 10 updates a second would leave 0.1 s; a 0.05 s build keeps the flusher away 0.5 s.
    assert min(gaps) >= 0.3, gaps


def test_a_build_held_up_by_other_work_does_not_hold_the_view_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # On a machine busy with other work a cheap build can take long in wall time (its thread
    # waits for a core): the wait after it follows what it cost, not how long it took.
    trace, view, recorder = _view_whose_update_first(monkeypatch, lambda: time.sleep(0.15))
    _grow_until(trace, recorder, updates=4, pause=0.005)
    view.finish()
    gaps = _gaps_before_finish(recorder)
    # Twenty times 0.15 s of wall time would keep the flusher away 3 s after each update.
    assert len(gaps) >= 2 and max(gaps[1:]) < 1.5, gaps


def test_the_listener_only_signals_the_flusher(monkeypatch: pytest.MonkeyPatch) -> None:
    # The listener runs on the agent's threads: it must never build or send the view itself.
    view = LiveView(Trace())
    monkeypatch.setattr(ViewBuilder, "update", lambda self: pytest.fail("built on the listener"))
    for _ in range(1000):
        view._on_change(view.trace)
    assert view.updates == 0 and view._wake.is_set()


def test_a_failing_view_leaves_the_result_unchanged_and_logs_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    agent = make_agent(latency=0.02)
    expected = agent.invoke(INPUT)

    def boom(self: ViewBuilder) -> Any:
        raise RuntimeError("view exploded")

    monkeypatch.setattr(ViewBuilder, "update", boom)
    with caplog.at_level(logging.ERROR, logger="nbagents"), recording() as tracer:
        view = LiveView(tracer.trace).start()
        result = agent.invoke(INPUT)
    view.finish()
    assert [m.content for m in result["messages"]] == [m.content for m in expected["messages"]]
    failures = [r for r in caplog.records if "live view failed" in r.getMessage()]
    assert len(failures) == 1
    assert tracer.trace.status == "ok" and len(tracer.trace) > 10


def test_a_failing_widget_never_reaches_the_agent(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    agent = make_agent(latency=0.02)
    sends: list[str] = []
    with caplog.at_level(logging.ERROR, logger="nbagents"), recording() as tracer:
        view = LiveView(tracer.trace).start()

        def broken_send(*args: Any, **kwargs: Any) -> None:
            sends.append(threading.current_thread().name)
            raise OSError("comm closed")

        monkeypatch.setattr(view.widget, "send_state", broken_send)
        result = agent.invoke(INPUT)
    view.finish()  # on this thread: its failure must be swallowed too
    assert result["messages"][-1].content == "Done: combined."
    assert sends and sends[-1] == threading.current_thread().name
    failures = [r for r in caplog.records if "live view failed" in r.getMessage()]
    assert len(failures) == 1


def test_show_outside_ipython_does_nothing() -> None:
    view = LiveView(build_trace()).show()
    assert view.display_id is None and view._thread is None
    assert live.live_view(build_trace()) is None
    view.finish()  # harmless


class FakeEvents:
    def __init__(self) -> None:
        self.callbacks: dict[str, list[Any]] = {}

    def register(self, event: str, fn: Any) -> None:
        self.callbacks.setdefault(event, []).append(fn)

    def unregister(self, event: str, fn: Any) -> None:
        self.callbacks[event].remove(fn)

    def trigger(self, event: str) -> None:
        for fn in list(self.callbacks.get(event, [])):
            fn(None)


class FakeShell:
    kernel = object()

    def __init__(self) -> None:
        self.events = FakeEvents()


@pytest.fixture
def kernel(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A stand-in for a kernel shell, capturing display() and update_display()."""
    import IPython.display

    shell = FakeShell()
    calls: dict[str, Any] = {"display": [], "update": [], "shell": shell}

    def display(obj: Any, *, raw: bool = False, display_id: str | None = None) -> None:
        calls["display"].append((obj, raw, display_id, threading.current_thread().name))

    def update_display(obj: Any, *, raw: bool = False, display_id: str | None = None) -> None:
        calls["update"].append((obj, raw, display_id, threading.current_thread().name))

    monkeypatch.setattr(live, "_kernel_shell", lambda: shell)
    monkeypatch.setattr(IPython.display, "display", display)
    monkeypatch.setattr(IPython.display, "update_display", update_display)
    return calls


def test_show_displays_one_bundle_and_finish_refreshes_its_snapshot(
    kernel: dict[str, Any],
) -> None:
    agent = make_agent(latency=0.02)
    with recording() as tracer:
        view = LiveView(tracer.trace).show()
        model_id = view.widget.model_id
        agent.invoke(INPUT)
    view.finish()
    assert len(kernel["display"]) == 1
    bundle, raw, display_id, thread = kernel["display"][0]
    assert raw and display_id and thread == "MainThread"
    assert set(bundle) == {"application/vnd.jupyter.widget-view+json", "text/html", "text/plain"}
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == model_id
    assert bundle["text/plain"].startswith(LIVE_TEXT_PREFIX)
    assert bundle["text/html"].startswith(LIVE_HTML_START + '<div class="nba-root')
    assert bundle["text/html"].endswith(LIVE_HTML_END)
    assert "No spans recorded yet." in bundle["text/html"]
    # one refresh, same display, with the final tree
    assert len(kernel["update"]) == 1
    final, _, final_id, thread = kernel["update"][0]
    assert final_id == display_id and thread == "MainThread"
    assert "Research A" in final["text/html"] and "nba-s-ok" in final["text/html"]
    assert "Done: combined." in final["text/html"]
    assert final["text/plain"] == LIVE_TEXT_PREFIX + tracer.trace.summary()
    # the run is over: the output is the saved HTML, with no widget a reopened notebook lacks
    assert set(final) == {"text/html", "text/plain"}
    assert final["text/html"].startswith(LIVE_HTML_START + '<div class="nba-saved"')
    assert saved_view(final["text/html"])["status"] == "ok"
    assert view.widget.comm is None  # closed: the page lets go of its model
    view.finish()
    assert len(kernel["update"]) == 1


def test_the_view_finishes_itself_when_the_cell_ends(kernel: dict[str, Any]) -> None:
    agent = make_agent(latency=0.01)
    with recording() as tracer:
        LiveView(tracer.trace).show()
        agent.invoke(INPUT)
    assert not kernel["update"]
    kernel["shell"].events.trigger("post_run_cell")
    assert len(kernel["update"]) == 1 and "Research A" in kernel["update"][0][0]["text/html"]
    assert kernel["shell"].events.callbacks["post_run_cell"] == []


def test_show_is_not_displayed_from_a_worker_thread(kernel: dict[str, Any]) -> None:
    view = LiveView(build_trace())
    worker = threading.Thread(target=view.show)
    worker.start()
    worker.join()
    assert not kernel["display"] and view.display_id is None


def test_live_view_helper_shows_in_a_kernel(kernel: dict[str, Any]) -> None:
    view = live.live_view(build_trace())
    assert view is not None and len(kernel["display"]) == 1
    view.finish()


def test_the_widget_ships_its_front_end() -> None:
    widget = LiveView(build_trace()).widget
    assert "export default" in widget._esm and "textContent" in widget._esm
    assert "innerHTML" not in widget._esm.replace("No innerHTML", "")
    assert ".nba-root" in widget._css
    assert repr(widget) == "TraceWidget()"


def test_the_front_end_is_one_module_of_parts_under_450_lines_each() -> None:
    # The widget and the saved view take one ES module: the parts in static/live/ joined in the
    # order of their names (issue 58: no module over 450 lines).
    parts = sorted((Path(live.__file__).parent / "static" / "live").glob("*.js"))
    texts = [p.read_text(encoding="utf-8") for p in parts]
    assert len(texts) > 1 and max(len(t.splitlines()) for t in texts) <= 450
    joined = "\n".join(texts)
    assert LiveView(build_trace()).widget._esm == joined
    assert json.loads(unpacked(_code().split(":", 1)[1]))["js"] == joined


def test_a_view_shown_before_the_run_finishes_after_the_cell_that_ran_it(
    kernel: dict[str, Any],
) -> None:
    with recording() as tracer:
        LiveView(tracer.trace).show()
        kernel["shell"].events.trigger("post_run_cell")  # the cell that only showed the view
        assert not kernel["update"]
        make_agent(latency=0.01).invoke(INPUT)  # the next cell runs the agent
    kernel["shell"].events.trigger("post_run_cell")
    assert len(kernel["update"]) == 1 and "Done: combined." in kernel["update"][0][0]["text/html"]
    kernel["shell"].events.trigger("post_run_cell")
    assert len(kernel["update"]) == 1
    assert kernel["shell"].events.callbacks["post_run_cell"] == []


async def test_updates_arrive_during_an_async_run() -> None:
    # Model calls long enough for three updates on a loaded machine, where each update takes
    # longer and the flusher waits MAX_DUTY times that.
    agent = make_agent(latency=0.3)
    with recording() as tracer:
        view = LiveView(tracer.trace).start()
        recorder = Recorder(view)
        t0 = time.perf_counter()
        result = await agent.ainvoke(INPUT)
        t1 = time.perf_counter()
    view.finish()
    assert result["messages"][-1].content == "Done: combined."
    during = [s for t, _, s in recorder.events if t0 < t < t1]
    assert len(during) >= 3 and any(s["status"] == "running" for s in during)
    assert final_view(view)["status"] == "ok"


def test_node_ids_stay_put_while_parallel_calls_start_out_of_order() -> None:
    # The live view keys selection and collapsed state by node id: a call that starts late must
    # not shift the ids of its siblings.

    def span(id: str, parent: str | None, kind: Any, start: float, **attrs: Any) -> Span:
        return Span(
            id=id,
            parent_id=parent,
            kind=kind,
            name=id,
            agent="main",
            depth=0,
            start=start,
            attributes=attrs,
        )

    trace = Trace([span("main", None, "agent", 0.0), span("m", "main", "model", 0.1)])
    trace.add(span("t2", "main", "task", 0.3, batch="m", call_index=2))

    names = {0.0: "main", 0.1: "m", 0.3: "t2", 0.4: "t0", 0.5: "t1", 0.9: "m2"}

    builder = ViewBuilder(trace)

    def ids() -> dict[str, str]:
        builder.update()
        return {names[n["start"]]: n["id"] for n in builder.view()["nodes"]}

    early = ids()
    trace.add(span("t0", "main", "task", 0.4, batch="m", call_index=0))
    trace.add(span("t1", "main", "task", 0.5, batch="m", call_index=1))
    late = ids()
    assert early.items() <= late.items()
    main = next(n for n in build_view(trace)["nodes"] if n["name"] == "main")
    by_id = {v: k for k, v in late.items()}
    assert [by_id[k] for k in main["children"]] == ["m", "t0", "t1", "t2"]


def test_a_whole_view_after_many_updates_is_what_a_fresh_build_shows() -> None:
    # The builder keeps each record's text from update to update: a whole view or a snapshot
    # made after patches (tokens rolling up into running agents, children arriving out of
    # order, results landing) must not show any record as it was before.
    agent = make_agent(latency=0.05, fail_writer=True)
    updates = 0
    with recording() as tracer:
        builder = ViewBuilder(tracer.trace)

        one_at_a_time = threading.Lock()  # listeners run on the agent's threads

        def follow_run(trace: Trace) -> None:
            nonlocal updates
            with one_at_a_time:
                builder.update()
                updates += 1
                if updates % 5 == 0:
                    builder.view_json()  # whole views mid-run fill the caches
                elif updates % 3 == 0:
                    render_view(builder.snapshot_view())

        tracer.trace.subscribe(follow_run)
        agent.invoke(INPUT)
    builder.update()
    assert updates > 20
    assert _without_rev(dict(builder.view())) == _without_rev(dict(build_view(tracer.trace)))
    assert render_view(builder.snapshot_view()) == trace_html(tracer.trace)


def test_a_closed_view_does_not_keep_its_trace_alive() -> None:
    import gc
    import weakref

    trace = build_trace()
    view = LiveView(trace).start()
    assert LiveView.of(trace) is view
    view.finish()
    view.widget.close()  # what closing the output does; a shown widget lives until then
    gone = weakref.ref(trace)
    del trace, view
    gc.collect()
    assert gone() is None


def test_a_late_change_to_an_ended_sub_agent_is_found_by_the_next_look() -> None:
    step = {"agent": "main", "depth": 0, "start": 0.0}
    trace = Trace([Span(id="main", parent_id=None, kind="agent", name="main", **step)])
    sub = Span(
        id="sub", parent_id="main", kind="subagent", name="worker", **step, end=0.5, status="ok"
    )
    trace.add(sub)
    looks = SpanFingerprints()

    def changed() -> list[str]:
        with trace.lock:
            return [span.id for span, _final in looks.changed(trace)]

    assert changed() == ["main", "sub"]
    assert changed() == []
    sub.attributes["result"] = "found it"  # a late result, after the sub-agent ended
    assert changed() == ["sub"]
    assert changed() == []
