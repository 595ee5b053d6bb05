"""IPython integration: ``%load_ext nbagents``.

- ``%%trace [name]`` runs the cell while recording every LangChain run in it, shows the live
  view above the cell's own output, and stores the :class:`~nbagents.tracing.model.Trace` in the
  user namespace as ``name`` (default ``_trace``).
- Display formatters: a ``Trace`` renders as its static HTML snapshot (``text/html``) with its
  one-line summary (``text/plain``).

Nothing heavy is imported until the extension is loaded.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbagents.tracing.model import Trace

__all__ = ["load_ipython_extension", "trace_cell", "unload_ipython_extension"]

logger = logging.getLogger("nbagents")

DEFAULT_NAME = "_trace"


def load_ipython_extension(ip: Any) -> None:
    """Register the ``%%trace`` cell magic and the display formatters for traces."""
    from nbagents.tracing.model import Trace

    ip.register_magic_function(_magic(ip), magic_kind="cell", magic_name="trace")
    formatters = ip.display_formatter.formatters
    formatters["text/html"].for_type(Trace, _trace_html)
    formatters["text/plain"].for_type(Trace, _trace_text)


def unload_ipython_extension(ip: Any) -> None:
    """Remove the display formatters (IPython cannot unregister a magic; it stays)."""
    from nbagents.tracing.model import Trace

    formatters = ip.display_formatter.formatters
    for mime in ("text/html", "text/plain"):
        formatters[mime].pop(Trace, None)


def _trace_html(trace: Trace) -> str:
    return trace.to_html()


def _trace_text(trace: Trace, printer: Any, cycle: bool) -> None:
    printer.text(trace.summary())


def _magic(ip: Any) -> Any:
    def trace(line: str, cell: str) -> None:
        """Trace the cell: ``%%trace [name]`` (the trace is stored as ``name``, default
        ``_trace``). Shows the live call tree while the cell runs."""
        trace_cell(ip, cell, line.strip() or DEFAULT_NAME)

    return trace


def trace_cell(ip: Any, cell: str, name: str = DEFAULT_NAME) -> Trace:
    """Run ``cell`` in ``ip`` while recording and showing it live; store the trace as ``name``."""
    from IPython.core.error import UsageError

    from nbagents.tracing.context import recording

    if not name.isidentifier():
        raise UsageError(f"%%trace takes a variable name to store the trace in, got {name!r}.")
    view = None
    try:
        with recording() as tracer:
            ip.user_ns[name] = tracer.trace
            view = _show(tracer.trace)
            ip.run_cell(cell, store_history=False)
    finally:
        if view is not None:
            view.finish()
    return tracer.trace


def _show(trace: Trace) -> Any:
    try:
        from nbagents.display.live import LiveView, _kernel_shell

        if _kernel_shell() is None:
            return None
        return LiveView(trace).show(auto_finish=False)
    except Exception:
        logger.exception("The nbagents live view could not be shown; the cell runs without it.")
        return None
