"""``nbagents.trace()``: record every LangChain run in a block and, in a notebook, show it live."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from nbagents.tracing import Trace
from nbagents.tracing.context import recording

if TYPE_CHECKING:
    from nbagents.display.live import LiveView

__all__ = ["trace"]


@contextmanager
def trace(*, display: bool | None = None, title: str = "") -> Iterator[Trace]:
    """Trace every LangChain run started inside the block; yields the :class:`Trace`.

    In a Jupyter kernel the live call-tree view appears in the cell output at once; when the
    block ends, the output's static HTML snapshot is refreshed to the final tree, which is what
    the saved notebook shows on GitHub or nbviewer. Outside IPython, or with ``display=False``,
    it only records. A view that fails is logged once and
    never stops the run.
    """
    view: LiveView | None = None
    try:
        with recording() as tracer:
            tracer.trace.title = title
            view = _start_view(tracer.trace) if display is not False else None
            yield tracer.trace
    finally:
        # After recording() has finished the trace, so the snapshot shows its final state.
        if view is not None:
            view.finish()


def _start_view(trace: Trace) -> LiveView | None:
    if not _in_kernel():
        return None
    try:
        from nbagents.display.live import live_view
    except Exception:  # e.g. a broken widget install: record anyway
        logging.getLogger("nbagents").exception("The nbagents live view is unavailable.")
        return None
    return live_view(trace)


def _in_kernel() -> bool:
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return getattr(shell, "kernel", None) is not None
