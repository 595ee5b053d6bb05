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
    def trace(line: str, cell: str) -> Any:
        """Trace the cell: ``%%trace [name]`` (the trace is stored as ``name``, default
        ``_trace``). Shows the live call tree while the cell runs; the cell's last expression
        is its value, and its exceptions propagate as usual."""
        return trace_cell(ip, cell, line.strip() or DEFAULT_NAME)

    return trace


def trace_cell(ip: Any, cell: str, name: str = DEFAULT_NAME) -> Any:
    """Run ``cell`` in ``ip`` while recording and showing it live; store the trace as ``name``.

    Returns the value of the cell's last expression. An exception in the cell propagates (so
    "Run All" stops and nbval sees it) after the trace and its view have been finished.
    """
    from IPython.core.error import UsageError

    from nbagents.tracing.context import recording

    if not name.isidentifier():
        raise UsageError(f"%%trace takes a variable name to store the trace in, got {name!r}.")
    view = None
    try:
        with recording() as tracer:
            ip.user_ns[name] = tracer.trace
            view = _show(tracer.trace)
            return _run(ip, cell)
    finally:
        if view is not None:
            view.finish()


def _run(ip: Any, cell: str) -> Any:
    """Execute ``cell`` in the user namespace like a cell, returning its last expression."""
    import ast

    source = ip.transform_cell(cell)
    tree = ip.transform_ast(ip.compile.ast_parse(source))
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    filename = "<%%trace cell>"
    exec(ip.compile(tree, filename, "exec"), ip.user_global_ns, ip.user_ns)
    if last is None:
        return None
    value = eval(ip.compile(last, filename, "eval"), ip.user_global_ns, ip.user_ns)
    return None if source.rstrip().endswith(";") else value


def _show(trace: Trace) -> Any:
    try:
        from nbagents.display.live import LiveView, _kernel_shell

        if _kernel_shell() is None:
            return None
        return LiveView(trace).show(auto_finish=False)
    except Exception:
        logger.exception("The nbagents live view could not be shown; the cell runs without it.")
        return None
