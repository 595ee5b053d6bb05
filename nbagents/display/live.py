"""The live view: an anywidget that grows while the agent runs, plus a static HTML fallback.

``LiveView(trace).show()`` puts one output in the current cell: the widget, a ``text/html``
snapshot (what GitHub, nbviewer and a reopened notebook show) and ``text/plain``. The trace's
listener only marks the view dirty; a flusher thread sends the widget at most ``max_rate``
updates a second: the whole view once, then patches of what changed. A page loaded anew asks for
the widget's whole state, built again for it then (never on a timer: a wide run's whole view is
megabytes). ``finish()`` makes the last update, replaces the output with the saved HTML of
:mod:`nbagents.display._saved` and closes the widget (a notebook saved without widget state
would show an error where it was); a run paused for decisions keeps its widget, which takes them.

Nothing here can break the agent run: every failure of the view goes through one
:class:`~nbagents._guard.Guard`, logged once and swallowed.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from nbagents import approvals
from nbagents._gc import view_work
from nbagents._guard import Guard
from nbagents._kernel import kernel_shell as _kernel_shell
from nbagents.approvals import AnswerError
from nbagents.display._costview import load_prices
from nbagents.display._html import render_view
from nbagents.display._saved import saved_html
from nbagents.display._spanview import whole_input
from nbagents.display._viewmodel import ViewBuilder, _Changes
from nbagents.display._widget import TraceWidget

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["LIVE_TEXT_PREFIX", "LiveView", "TraceWidget", "live_view"]

logger = logging.getLogger("nbagents")

LIVE_TEXT_PREFIX = "nbagents live view: "
"""Starts the live output's ``text/plain``; nbagents' sanitize rules mask that line."""
BYTES_PER_SECOND = 2_000_000
"""Budget of widget state sent per second; below it updates come at ``max_rate``."""
MAX_DUTY = 20
"""The flusher waits at least this many times the processor time its last update took: building
the view holds the GIL the agent's threads need. Processor time, not wall time: on a machine busy
with other work a small update's wall time can be a hundred times its cost, and the view stalled
for the rest of the run."""
LIVE_HTML_START = "<!-- nba-live -->"
LIVE_HTML_END = "<!-- /nba-live -->"
"""Around the live output's ``text/html``, which nbagents' sanitize rules blank: nbval ignores
``update_display_data``, so it would compare the first snapshot with the saved final one."""


class LiveView:
    """A live view of ``trace``: widget, HTML snapshot and text, kept up to date.

    ``show()`` displays it (in an IPython kernel) and follows the trace; ``start()`` only
    follows; ``finish()`` stops, makes the final update and refreshes the displayed snapshot.
    ``sync()`` updates the widget now; ``updates`` counts widget updates.
    """

    def __init__(self, trace: Trace, *, max_rate: float = 10.0) -> None:
        if max_rate <= 0:
            raise ValueError("max_rate must be positive.")
        self.trace = trace
        self.last_result: Any = None
        """What the last run resumed from the view returned."""
        self.min_interval = 1.0 / max_rate
        load_prices()
        self.updates = 0
        self.wholes = 0
        """How many of the updates sent the whole view."""
        self.sent_bytes = 0
        self.builder = ViewBuilder(trace)
        self._changes = _Changes()
        """What the updates since the last patch or whole view changed: what the widget was not
        sent yet."""
        self._saved_html: str | None = None
        self.display_id: str | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._sync_lock = threading.Lock()
        self._new_widget()
        self._send_at = 0.0
        """When the widget is next due an update from the flusher."""
        self._finished = False
        self._saved = False
        """The run is over and not waiting for the view: the output is the saved HTML."""
        self._guard = Guard("The nbagents live view failed; the run goes on without it.").run
        self._hooked: Any = None
        """The shell whose cells' ends the view is following (``auto_finish``)."""
        self._paused_agent: Any = None
        approvals.follow(trace, self)

    def _new_widget(self) -> None:
        self.widget = TraceWidget()
        self.widget.on_msg(self._on_msg)
        self.widget.on_state_request = self._on_state_request
        self._based = False
        """Whether the widget was sent a whole view from the current builder."""

    # -- following the trace -------------------------------------------------------------------

    def start(self) -> LiveView:
        """Follow the trace: widget updates at most ``max_rate`` times a second. Idempotent."""
        if self._thread is not None or self._finished:
            return self
        self._guard(self.sync)
        self._unsubscribe = self.trace.subscribe(self._on_change)
        self._thread = threading.Thread(target=self._flush_loop, name="nbagents-live", daemon=True)
        self._thread.start()
        return self

    def _on_change(self, trace: Trace) -> None:
        # Called on the agent's threads after every span start/end: keep it cheap (setting an
        # Event takes its lock; reading it does not).
        if not self._wake.is_set():
            self._wake.set()

    def _flush_loop(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            self._wake.wait()
            if self._stop.is_set():
                return
            # Changes are taken in only when the widget is due an update: building the view
            # holds the GIL the agent's threads need.
            delay = max(last + self.min_interval, self._send_at) - time.monotonic()
            if delay > 0 and self._stop.wait(delay):
                return  # finish() makes the final update
            self._wake.clear()
            self._guard(self._tick)
            last = time.monotonic()
            if self._changes:
                self._wake.set()  # taken in, not sent yet: come back when it is due

    def _tick(self) -> None:
        with self._sync_lock:
            started, cpu = time.monotonic(), time.thread_time()
            self._update()
            # Once finish() began, it makes the last update (none for an output it replaces):
            # a tick caught in it would send a wide run's whole view while the cell waits.
            if not self._stop.is_set() and (started >= self._send_at or not self._based):
                self._send(whole=False, cpu=cpu)

    def sync(self, *, whole: bool = False) -> bool:
        """Send what changed in the trace to the widget now (``whole``: the whole view, not a
        patch); False when nothing did."""
        with self._sync_lock:
            cpu = time.thread_time()
            self._update()
            return self._send(whole=whole, cpu=cpu)

    def _send(self, *, whole: bool, cpu: float) -> bool:
        """Send the widget what changed since its last update. Under ``_sync_lock``."""
        whole |= not self._based
        if not (self._changes or whole):
            return False
        changes, self._changes = self._changes, _Changes()
        with view_work():
            text = self.builder.view_json() if whole else self.builder.patch_json(changes)
        if whole:
            self.widget.view_json = text
            self._based = True
            self.wholes += 1
        else:
            self.widget.patch_json = text
        self.sent_bytes += len(text)
        self.updates += 1
        self._check_answerable()
        # Large views are sent less often: at most ~BYTES_PER_SECOND of widget state (what the
        # page has to draw), and an update may take at most 1/MAX_DUTY of the kernel's time.
        spent = time.thread_time() - cpu
        self._send_at = time.monotonic() + max(
            self.min_interval, len(text) / BYTES_PER_SECOND, spent * MAX_DUTY
        )
        return True

    def _update(self) -> None:
        """The builder takes in the trace's changes (under the lock)."""
        with view_work():
            self._changes.merge(self.builder.update())

    def _check_answerable(self) -> None:
        agent = approvals.resumable_agent(self.trace) if self.builder.waiting else None
        if agent is not None:
            # The view keeps the paused agent alive: its output can resume it later even when
            # the notebook dropped its own reference.
            self._paused_agent = agent
        self.widget.answerable = agent is not None

    def _last_update(self) -> None:
        """Take in the run's last changes. A displayed widget that the saved output is about to
        replace is not sent them: a wide run's last patch would be built and sent while the
        cell waits, for a widget closed right after."""
        if self.display_id is None:
            self.sync()
        else:
            with self._sync_lock, view_work():
                self.builder.update()  # not kept to send: the widget is closed or sent whole
                self._check_answerable()
        if self.widget.answerable:
            # The run waits for decisions made in the view: the widget stays to take them.
            self.sync(whole=True)

    # -- answering a paused run ----------------------------------------------------------------

    @classmethod
    def of(cls, trace: Trace) -> LiveView | None:
        """The live view shown for ``trace``, if any."""
        follower = approvals.follower_of(trace)
        return follower if isinstance(follower, LiveView) else None

    def answer(self, decisions: Sequence[Mapping[str, Any]]) -> Any:
        """Apply decisions sent from the view, resume the paused run and follow it here; what it
        returned. Raises :class:`AnswerError` when the decisions cannot be applied."""
        approvals.follow(self.trace, self)  # the view answered is the one that shows the run
        return approvals.answer(self.trace, decisions)

    def follow(self, resumption: Callable[[], Any]) -> Any:
        """Run ``resumption()``, a run resumed in the trace, and show it in this view."""
        self.widget.notice = ""
        following = not self._finished
        if not following:
            self._reopen()
        try:
            result = resumption()
        finally:
            if following:
                self._guard(self.sync)
            else:
                self.finish()
        self.last_result = result
        return result

    def _on_state_request(self) -> None:
        # A page loaded anew needs the whole view as it is now (pages already open take it in
        # as a patch of what differs). Not for a saved output: its widget is closed.
        if self._based and not self._saved:
            self._guard(lambda: self.sync(whole=True))

    def _on_msg(self, widget: Any, content: Any, buffers: Any) -> None:
        kind = content.get("type") if isinstance(content, dict) else None
        if kind == "input":
            self._guard(lambda: self._send_input(content.get("id")))
        elif kind == "turns":
            self._guard(lambda: self._send_turns(content.get("id"), content.get("page")))
        elif kind == "decide" and isinstance(content.get("decisions"), list):
            self._decide(content["decisions"])

    def _decide(self, decisions: list[Any]) -> None:
        self.widget.notice = ""  # the same error twice must still reach the front end
        try:
            self.answer([d for d in decisions if isinstance(d, dict)])
        except AnswerError as error:
            self.widget.notice = str(error)
        except Exception as error:  # the resumed run failed: say so where the user clicked
            self.widget.notice = f"The resumed run failed: {type(error).__name__}: {error}"
            logger.warning("The run resumed from the live view failed.", exc_info=True)

    def _send_input(self, key: Any) -> None:
        """Send the view a model call's whole input: it asked from the call's details."""
        if not isinstance(key, str):
            return
        with self._sync_lock:
            span = self.builder.span_of(key)
        if span is None or span.kind != "model":
            return
        label, messages = whole_input(span)
        self.widget.send({"type": "input", "id": key, "label": label, "messages": messages})

    def _send_turns(self, key: Any, page: Any) -> None:
        """Send the view a page of an agent's conversation: the view holds only its first."""
        if not isinstance(key, str) or not isinstance(page, int) or page < 0:
            return
        with self._sync_lock, view_work():
            got = self.builder.conversation_page(key, page)
        if got is not None:
            self.widget.send({"type": "turns", "id": key, **got})

    def _reopen(self) -> None:
        """Follow the trace again after ``finish()``: a resumed run continues in this view."""
        if self._saved:
            # The output became the saved HTML and its widget was closed: a new widget, sent
            # the whole view first, takes the output back while the run goes on.
            self._saved = False
            self._saved_html = None
            rev = self.builder.rev + 1
            self.builder = ViewBuilder(self.trace)
            self.builder.rev = rev
            self._changes = _Changes()
            self._new_widget()
            if self.display_id is not None:
                self._guard(self._refresh)
        self._finished = False
        self._stop.clear()
        self._wake.clear()
        self._thread = None
        self.start()

    # -- the output ----------------------------------------------------------------------------

    def show(self, *, auto_finish: bool = True) -> LiveView:
        """Display the view in the current cell and follow the trace. Outside IPython: nothing.

        With ``auto_finish`` the view finishes by itself when the cell ends (if the run is over
        by then), so the saved notebook holds the final snapshot even without ``finish()``.
        """
        shell = _kernel_shell()
        if shell is None or self.display_id is not None:
            return self
        if threading.current_thread() is not threading.main_thread():
            logger.debug("LiveView.show() called off the main thread; not displaying.")
            return self

        def display() -> None:
            from IPython.display import display as ipy_display

            self.start()
            self.display_id = uuid.uuid4().hex
            ipy_display(self._bundle(), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]
            if auto_finish:
                shell.events.register("post_run_cell", self._cell_ended)
                self._hooked = shell

        self._guard(display)
        return self

    def finish(self) -> None:
        """Final update of the widget and of the displayed snapshot. Call on the main thread."""
        if self._finished:
            return
        self._finished = True
        self._stop.set()
        self._wake.set()
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        if self._hooked is not None:
            with contextlib.suppress(ValueError):
                self._hooked.events.unregister("post_run_cell", self._cell_ended)
        self._guard(self._last_update)
        if not self.widget.answerable:
            self._saved = True
        if self.display_id is not None:
            self._guard(self._refresh)
        if self._saved:
            # Its output no longer shows it: the page can let go of the final view it holds.
            self._guard(self.widget.close)

    def _refresh(self) -> None:
        from IPython.display import update_display

        update_display(self._bundle(), raw=True, display_id=self.display_id)  # type: ignore[no-untyped-call]

    def _cell_ended(self, *_: Any) -> None:
        # A cell is over; once the run is too, the snapshot gets its final state (finish()
        # unregisters this hook). A run still going on is checked again after the next cell.
        if self.trace.status != "running" or self.trace.finished:
            self.finish()

    def snapshot_html(self) -> str:
        """The static snapshot as it goes into the output, between the live markers."""
        # Through sync(), so the widget gets every change the snapshot shows.
        self._guard(self.sync)
        with self._sync_lock, view_work():
            html = render_view(self.builder.snapshot_view())
        return LIVE_HTML_START + html + LIVE_HTML_END

    def _bundle(self) -> dict[str, Any]:
        bundle: dict[str, Any] = {}
        if self._saved:
            if self._saved_html is None:  # made once: a resumed run starts a new one
                with self._sync_lock, view_work():
                    self._saved_html = saved_html(self.builder, self.widget.uid)
            html = LIVE_HTML_START + self._saved_html + LIVE_HTML_END
        else:
            rendered: Any = self.widget._repr_mimebundle_()
            bundle.update(rendered[0] if isinstance(rendered, tuple) else rendered)
            html = self.snapshot_html()
        bundle["text/plain"] = LIVE_TEXT_PREFIX + self.trace.summary()
        bundle["text/html"] = html
        return bundle

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # Rendered outside IPython's display (a bundle asked for): no display id to refresh.
        self.start()
        return self._bundle()

    def _ipython_display_(self) -> None:
        # Shown as a cell's value or with display(view): an output under the view's display id,
        # which finish() replaces with the saved HTML as it does the first one (an output with
        # no id would keep a widget that a reopened notebook cannot draw).
        from IPython.display import display as ipy_display

        if self.display_id is None:
            self.show()
            if self.display_id is None:  # not in a kernel's main thread: the bundle as it is
                ipy_display(self._repr_mimebundle_(), raw=True)  # type: ignore[no-untyped-call]
            return
        bundle = self._bundle()
        self._guard(lambda: ipy_display(bundle, raw=True, display_id=self.display_id))  # type: ignore[no-untyped-call]

    def __enter__(self) -> LiveView:
        return self.show()

    def __exit__(self, *exc: object) -> None:
        self.finish()


def live_view(trace: Trace, *, auto_finish: bool = True) -> LiveView | None:
    """Show a live view of ``trace`` in the current cell when running in a kernel, else None.

    Never raises: for callers such as ``nbagents.trace()`` that must not break the run.
    """
    if _kernel_shell() is None:
        return None
    guard = Guard("The nbagents live view could not be shown; the run goes on without it.")
    return guard.run(lambda: LiveView(trace).show(auto_finish=auto_finish))
