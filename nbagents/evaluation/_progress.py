"""The progress of an experiment while it runs: a view in the notebook's cell output that
updates in place, or a line on stderr elsewhere. Drawn at most a few times a second, from the
thread that started the experiment."""

from __future__ import annotations

import sys
import threading
import time
from html import escape
from typing import TYPE_CHECKING, Any

from nbagents._kernel import kernel_shell

if TYPE_CHECKING:
    from nbagents.evaluation._experiment import Experiment
    from nbagents.evaluation._results import Result

__all__ = ["Progress"]

EVERY = 0.25
"""Seconds between two drawings: often enough to look live, rarely enough to cost nothing."""
TEXT_PREFIX = "nbagents experiment: "
"""Starts the view's text/plain; the sanitize rules nbagents ships mask what follows."""


class Progress:
    """Counts runs as they start and end, and shows the counts."""

    def __init__(self, experiment: Experiment, total: int, show: bool | None) -> None:
        self.experiment = experiment
        self.total = total
        self.running = 0
        self.done = 0
        self.failed = 0
        self.tokens = 0
        self.cost: float | None = 0.0
        self._started = time.monotonic()
        self._drawn = 0.0
        self._lock = threading.Lock()
        self._handle: Any = None
        in_kernel = kernel_shell() is not None
        self._mode = "kernel" if in_kernel and show is not False else ("text" if show else None)
        self._tty = self._mode == "text" and sys.stderr.isatty()
        self._tenth = -1
        self._printed = ""

    def start(self) -> None:
        self._started = time.monotonic()
        if self._mode == "kernel":
            from IPython.display import display

            self._handle = display(self.bundle(), raw=True, display_id=True)  # type: ignore[no-untyped-call]
        self.draw(force=True)

    def begin(self) -> None:
        with self._lock:
            self.running += 1

    def end(self) -> None:
        with self._lock:
            self.running -= 1

    def count(self, result: Result) -> None:
        with self._lock:
            self.done += 1
            self.failed += result.status != "ok"
            self.tokens += result.tokens
            if self.cost is not None:
                self.cost = None if result.cost is None else self.cost + result.cost

    def finish(self) -> None:
        self.draw(force=True)
        if self._tty:
            sys.stderr.write("\n")
            sys.stderr.flush()

    # -- what is shown -------------------------------------------------------------------------

    def draw(self, *, force: bool = False) -> None:
        if self._mode is None:
            return
        now = time.monotonic()
        if not force and now - self._drawn < EVERY:
            return
        self._drawn = now
        try:
            if self._mode == "kernel":
                if self._handle is not None:
                    self._handle.update(self.bundle(), raw=True)
            elif self._tty:
                sys.stderr.write("\r" + self.line()[:160].ljust(100))
                sys.stderr.flush()
            else:  # a log: one line at every tenth and at the end
                tenth = self.done * 10 // max(self.total, 1)
                line = self.line()
                if tenth != self._tenth or (force and line != self._printed):
                    self._tenth, self._printed = tenth, line
                    print(line, file=sys.stderr, flush=True)
        except Exception:  # progress must never cost the experiment
            self._mode = None

    def scores(self) -> list[tuple[str, str]]:
        """Each scorer's figure so far: a pass rate or a mean."""
        shown = []
        for name in self.experiment.scorers:
            values = list(self.experiment.values(name).values())
            if not values:
                shown.append((name, "—"))
            elif self.experiment.is_yes_no(name):
                shown.append((name, f"{sum(v >= 1.0 for v in values) / len(values):.0%}"))
            else:
                shown.append((name, f"{sum(values) / len(values):.3g}"))
        return shown

    def left(self) -> str:
        elapsed = time.monotonic() - self._started
        if self.done >= self.total:
            return f"took {elapsed:.1f} s"
        if not self.done:
            return "time left unknown"
        return f"about {elapsed / self.done * (self.total - self.done):.0f} s left"

    def _status(self) -> str:
        if self.done >= self.total and self.experiment.status != "interrupted":
            return "done"
        return self.experiment.status

    def line(self) -> str:
        scores = ", ".join(f"{name} {value}" for name, value in self.scores())
        cost = "" if self.cost is None else f", ${self.cost:.4f}"
        return (
            f"{TEXT_PREFIX}{self.experiment.name} {self._status()}: {self.done}/{self.total} "
            f"runs, {self.failed} failed, {self.running} running"
            + (f"; {scores}" if scores else "")
            + f"; {self.tokens:,} tokens{cost}; {self.left()}"
        )

    def bundle(self) -> dict[str, str]:
        return {"text/plain": self.line(), "text/html": self.html()}

    def html(self) -> str:
        scores = "".join(
            f"<li>{escape(name)}: <b>{escape(value)}</b></li>" for name, value in self.scores()
        )
        cost = "" if self.cost is None else f" · ${self.cost:.4f}"
        total = max(self.total, 1)
        # Between the live markers: nbval masks the whole view (it sees only the first drawing).
        return (
            '<!-- nba-live --><div class="nba-exp-progress">'
            f"<b>{escape(self.experiment.name)}</b> {escape(self._status())}: "
            f'<progress max="{total}" value="{self.done}"></progress> '
            f"{self.done}/{self.total} runs · {self.failed} failed · {self.running} running · "
            f"{self.tokens:,} tokens{cost} · {escape(self.left())}"
            f"<ul>{scores}</ul></div><!-- /nba-live -->"
        )
