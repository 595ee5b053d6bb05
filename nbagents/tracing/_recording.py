"""``recording()``: attach a :class:`Tracer` to every LangChain run started inside a block."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from langchain_core.tracers.context import register_configure_hook

from nbagents.tracing._tracer import Tracer

__all__ = ["active_tracers", "recording"]

# One context variable per nesting level, so that nested blocks each get their own tracer and
# an inner block's runs are recorded by the outer tracers too. LangChain's configure hook adds
# the variable's tracer to every callback manager it configures (sync or async, any thread that
# inherits the context) unless that very handler is already there.
_LEVEL: ContextVar[int] = ContextVar("nbagents_recording_level", default=0)
_VARS: list[ContextVar[Tracer | None]] = []
_REGISTER = threading.Lock()


def _var(level: int) -> ContextVar[Tracer | None]:
    with _REGISTER:
        while len(_VARS) <= level:
            var: ContextVar[Tracer | None] = ContextVar(
                f"nbagents_tracer_{len(_VARS)}", default=None
            )
            register_configure_hook(var, inheritable=True)
            _VARS.append(var)
        return _VARS[level]


def active_tracers() -> list[Tracer]:
    """The tracers of the ``recording()`` blocks the current context is inside, outermost first."""
    found = [var.get() for var in _VARS[: _LEVEL.get()]]
    return [t for t in found if t is not None]


@contextmanager
def recording(tracer: Tracer | None = None) -> Iterator[Tracer]:
    """Record every LangChain run started inside the block; yields the :class:`Tracer`.

    Works for ``invoke``, ``ainvoke``, ``stream`` and ``astream`` alike, with no callbacks passed
    by hand. Several runs in one block become several roots of ``tracer.trace``, which is marked
    finished when the block ends.
    """
    tracer = tracer if tracer is not None else Tracer()
    level = _LEVEL.get()
    var = _var(level)
    var_token = var.set(tracer)
    level_token = _LEVEL.set(level + 1)
    try:
        yield tracer
    finally:
        try:
            _LEVEL.reset(level_token)
            var.reset(var_token)
        except ValueError:  # the block ended in another context (e.g. an async generator)
            _LEVEL.set(level)
            var.set(None)
        tracer.finish()
