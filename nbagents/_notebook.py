"""Where nbagents meets the notebook: ``nbagents.trace()``, the ``%%trace`` cell magic of
``%load_ext nbagents``, and the rich display of a :class:`~nbagents.tracing.model.Trace`
(:func:`trace_bundle`). Nothing heavy is imported until needed, and a view that fails never
stops the run.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Container, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from nbagents import history
from nbagents._guard import Guard
from nbagents._kernel import kernel_shell
from nbagents._trace_facts import with_facts
from nbagents.display import trace_saved_html
from nbagents.tracing import recording
from nbagents.tracing.pending import waiting_thread

if TYPE_CHECKING:
    from nbagents.display.live import LiveView
    from nbagents.tracing.model import Trace

__all__ = [
    "DEFAULT_NAME",
    "load_ipython_extension",
    "trace",
    "trace_bundle",
    "trace_cell",
    "unload_ipython_extension",
    "wait_for_decisions",
]

DEFAULT_NAME = "_trace"
"""Where ``%%trace`` stores the trace when the cell names no variable."""


# -- the display of a trace ------------------------------------------------------------------------


def trace_bundle(
    trace: Trace,
    include: Container[str] | None = None,
    exclude: Container[str] | None = None,
) -> dict[str, str]:
    """A trace's rich display: ``text/plain`` and ``text/html``, only the requested ones built.

    The HTML is the live view's once its run is over (:mod:`nbagents.display._saved`): the
    static snapshot, and the interactive view where the output is trusted. It carries the run's
    facts (:mod:`nbagents._trace_facts`), which nbval compares.
    """
    renderers: dict[str, Callable[[], str]] = {
        "text/plain": trace.summary,
        "text/html": lambda: with_facts(trace, trace_saved_html(trace)),
    }
    return {
        mime: render()
        for mime, render in renderers.items()
        if (include is None or mime in include) and (exclude is None or mime not in exclude)
    }


# -- nbagents.trace() ------------------------------------------------------------------------------


@contextmanager
def trace(
    *,
    display: bool | None = None,
    title: str = "",
    name: str | None = None,
    tags: Sequence[str] = (),
    store: history.StoreLike = None,
) -> Iterator[Trace]:
    """Trace every LangChain run started inside the block; yields the :class:`Trace`.

    In a Jupyter kernel the live call-tree view appears in the cell output at once; when the
    block ends, the output's static HTML snapshot is refreshed to the final tree, which is what
    the saved notebook shows on GitHub or nbviewer. Outside IPython, or with ``display=False``,
    it only records. A view that fails is logged once and never stops the run.

    When the block ends (also by an error or Ctrl-C) the run is saved to the run history,
    ``nbagents.runs()``, under ``name`` (default: ``title``) with ``tags``. ``store`` picks
    another history (a path or a ``RunStore``) or none (``False``); see
    :func:`nbagents.keep_runs`. A history that cannot save warns once and never stops the run.
    """
    with _recording(
        title=title,
        show=display is not False,
        auto_finish=True,
        user_ns=getattr(kernel_shell(), "user_ns", None),
        store=store,
        name=title if name is None else name,
        tags=tags,
    ) as t:
        yield t


@contextmanager
def _recording(
    *, title: str, show: bool, auto_finish: bool, user_ns: Any, **keep: Any
) -> Iterator[Trace]:
    """Record the block, kept in the history (``keep``: ``keep_trace``'s store, name and tags)
    and shown live if ``show``; the view is finished and the run saved however it ends."""
    view: LiveView | None = None
    kept: Trace | None = None
    try:
        with recording() as tracer:
            tracer.trace.title = title
            history.keep_trace(tracer.trace, user_ns=user_ns, **keep)
            kept = tracer.trace
            view = _show_live(tracer.trace, auto_finish=auto_finish) if show else None
            yield tracer.trace
    finally:
        # After recording() has finished the trace, so the snapshot shows its final state.
        if view is not None:
            view.finish()
        if kept is not None:
            history.save(kept)


async def wait_for_decisions(trace: Trace, *, timeout: float | None = None) -> Any:
    """Wait, inside the running cell, until the paused run of ``trace`` is answered in its view.

    For one cell that runs, pauses, lets the user decide in the live view and carries on::

        with nbagents.trace() as t:
            paused = agent.invoke(inputs, config)
            result = await nbagents.wait_for_decisions(t)

    A busy kernel takes messages from the view only while the cell awaits (ipykernel 7.4 and
    later dispatch widget messages during an async cell), hence ``await``. The run resumed from
    the view goes on in the same output, and if it pauses again this waits again. Returns what
    the resumed run returned (``None`` when the run was not waiting). Raises ``TimeoutError``
    after ``timeout`` seconds without an answer, and ``RuntimeError`` outside a notebook, with
    an older ipykernel, or when no live view shows the trace: answer in code then, with
    :func:`nbagents.resume`.
    """
    if waiting_thread(trace) is None:
        return None
    shell = kernel_shell()
    try:
        from nbagents.display.live import LiveView
    except ImportError as error:
        raise RuntimeError(
            f"The live view is unavailable ({error}); answer with nbagents.resume."
        ) from error
    view = LiveView.of(trace)
    if view is None or view.display_id is None or shell is None:
        raise RuntimeError(
            "wait_for_decisions needs the live view of this trace in a notebook (inside "
            "nbagents.trace() or %%trace, in JupyterLab). Without one, answer in code: "
            "requests = nbagents.pending_approvals(result); ...; nbagents.resume(t, requests)."
        )
    if not _dispatches_comms_while_busy(shell):
        raise RuntimeError(
            "This kernel does not take widget messages while a cell runs (ipykernel >= 7.4 "
            "does): answer in the view after the cell ends, or in code with nbagents.resume."
        )
    view.sync(whole=True)  # the view must say it can be answered before anyone clicks
    deadline = None if timeout is None else time.monotonic() + timeout
    while waiting_thread(trace) is not None:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"No decision within {timeout:g} s.")
        await asyncio.sleep(0.05)
    return view.last_result


def _dispatches_comms_while_busy(shell: Any) -> bool:
    import inspect

    dispatch = getattr(getattr(shell, "kernel", None), "dispatch_shell", None)
    try:
        return dispatch is not None and "concurrent" in inspect.signature(dispatch).parameters
    except (TypeError, ValueError):
        return False


# -- %load_ext nbagents ----------------------------------------------------------------------------


def load_ipython_extension(ip: Any) -> None:
    """Register the ``%%trace`` cell magic."""

    def trace(line: str, cell: str) -> Any:
        """Trace the cell: ``%%trace [name]`` (the trace is stored as ``name``, default
        ``_trace``). Shows the live call tree while the cell runs; the cell's last expression
        is its value, and its exceptions propagate as usual."""
        return trace_cell(ip, cell, line.strip() or DEFAULT_NAME)

    ip.register_magic_function(trace, magic_kind="cell", magic_name="trace")


def unload_ipython_extension(ip: Any) -> None:
    """Nothing to undo: IPython cannot unregister a magic, and a trace displays itself."""


def trace_cell(ip: Any, cell: str, name: str = DEFAULT_NAME) -> Any:
    """Run ``cell`` in ``ip`` while recording and showing it live; store the trace as ``name``.

    Returns the value of the cell's last expression. An exception in the cell propagates (so
    "Run All" stops and nbval sees it) after the trace and its view have been finished.
    """
    from IPython.core.error import UsageError

    if not name.isidentifier():
        raise UsageError(f"%%trace takes a variable name to store the trace in, got {name!r}.")
    run_name = "" if name == DEFAULT_NAME else name
    with _recording(
        title="", show=True, auto_finish=False, user_ns=ip.user_ns, name=run_name
    ) as recorded:
        ip.user_ns[name] = recorded
        return _run(ip, cell)


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


# -- the live view ---------------------------------------------------------------------------------


def _show_live(trace: Trace, *, auto_finish: bool) -> LiveView | None:
    """Show the live view of ``trace`` in a kernel; elsewhere, or if it fails, None."""
    if not _in_kernel():
        return None

    def show() -> LiveView | None:
        # Imported here: a broken widget install must only cost the view, not the recording.
        from nbagents.display.live import live_view

        return live_view(trace, auto_finish=auto_finish)

    return Guard("The nbagents live view is unavailable; the run goes on without it.").run(show)


def _in_kernel() -> bool:
    return kernel_shell() is not None
