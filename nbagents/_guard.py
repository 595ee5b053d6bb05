"""The one rule for code that runs inside the user's run: it never breaks that run.

Tracing callbacks, trace listeners and notebook views all run on the agent's threads or around
the user's cell. When they fail, the run goes on: the failure is swallowed, and the first one of
each :class:`Guard` is logged with its traceback (later ones would only repeat it, once per
span).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar, cast

__all__ = ["Guard", "guarded"]

P = ParamSpec("P")
T = TypeVar("T")


class Guard:
    """Runs functions whose failure must not reach the user's run; logs the first failure.

    ``message`` may name the failing function as ``{name}``.
    """

    def __init__(self, message: str, logger: str = "nbagents") -> None:
        self.message = message
        self.failures = 0
        self._logger = logging.getLogger(logger)
        self._lock = threading.Lock()

    def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T | None:
        """``fn(*args, **kwargs)``, or None when it raised."""
        try:
            return fn(*args, **kwargs)
        except Exception:
            self.failed(fn)
            return None

    def failed(self, fn: Callable[..., Any]) -> None:
        """Count a failure of ``fn``, the exception being handled; log it if it is the first."""
        with self._lock:
            self.failures += 1
            first = self.failures == 1
        if first:
            name = getattr(fn, "__name__", repr(fn))
            self._logger.exception(self.message.format(name=name))


F = TypeVar("F", bound=Callable[..., None])


def guarded(method: F) -> F:
    """Run a method through its instance's ``guard`` (a :class:`Guard` attribute)."""

    @functools.wraps(method)
    def wrapper(self: Any, /, *args: Any, **kwargs: Any) -> None:
        # Guard.run's rule, inlined: a tracer calls this on every callback of every run.
        try:
            method(self, *args, **kwargs)
        except Exception:
            self.guard.failed(method)

    return cast(F, wrapper)
