"""Limits on what an agent may spend: model calls, tokens, cost and wall seconds.

A :class:`LimitGuard` is a callback handler on one agent's run: LangChain hands it every model
call of that run and the runs under it, so a limit covers the agent with its descendants. The
agents nbagents builds admit each model call on every guard of their run (:func:`admitted`), or
stop with :class:`LimitReached`; a call is counted when admitted, so parallel calls never pass a
model-call limit. A ``CompiledSubAgent`` is stopped at its next step (:class:`StepGuard`).
Tokens and cost are known when a call ends: the last call may pass such a limit, never a
further one. Cost is priced with ``nbagents.cost.default_prices``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from decimal import Decimal
from typing import Any, TypedDict, cast
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.runnables import RunnableConfig

from nbagents._contract import LimitReached
from nbagents._tokens import TokenUsage
from nbagents.cost import default_prices

__all__ = [
    "LimitGuard",
    "LimitReached",
    "Limits",
    "StepGuard",
    "admitted",
    "check_limits",
    "guarded_config",
    "is_guarded",
]


class Limits(TypedDict, total=False):
    """What an agent (a sub-agent with its own sub-agents, or a whole run) may spend.

    Each is checked before every model call; reaching one stops the agent there.
    """

    model_calls: int
    """Model calls started."""
    tokens: int
    """Tokens used (input and output, as the providers report them)."""
    cost: float
    """Money spent, in the price table's currency (USD for the built-in table). A call of a
    model the table cannot price stops the agent: the limit could not be kept."""
    seconds: float
    """Wall seconds since the agent started."""


_KINDS: dict[str, type | tuple[type, ...]] = {
    "model_calls": int,
    "tokens": int,
    "cost": (int, float, Decimal),
    "seconds": (int, float),
}


def check_limits(limits: Any, label: str) -> Limits:
    """``limits`` if it is a valid :class:`Limits`; else ``ValueError`` naming what is wrong."""
    if not isinstance(limits, Mapping):
        raise ValueError(
            f"{label}: 'limits' must be a dict such as {{'model_calls': 20, 'cost': 0.5}}, "
            f"not {type(limits).__name__}."
        )
    for key, value in limits.items():
        if key not in _KINDS:
            raise ValueError(
                f"{label}: unknown limit {key!r}; the limits are "
                f"{', '.join(repr(k) for k in _KINDS)}."
            )
        number = isinstance(value, _KINDS[key]) and not isinstance(value, bool)
        if not number or not float(cast(float, value)) > 0:
            kind = "a whole number" if _KINDS[key] is int else "a number"
            raise ValueError(f"{label}: the limit {key!r} must be {kind} above 0, not {value!r}.")
    return Limits(**limits)  # type: ignore[typeddict-item]


_LOCK = threading.Lock()
"""One lock for every guard: admitting a model call checks and counts it on all the guards of
the agent at once, so parallel siblings cannot both take the last call a limit allows."""

_admission: ContextVar[dict[int, bool] | None] = ContextVar("nbagents_admission", default=None)
"""The guards that counted the model call being made in this context → whether its start
event has been seen (it must not count a second time)."""


class LimitGuard(BaseCallbackHandler):
    """Counts what one agent and the runs under it spend; :meth:`check` stops them at a limit.

    One guard per run of the agent, made when it starts (its clock starts then). It only
    counts, so a fault in counting never breaks the run: admitting is :func:`admitted`'s.
    """

    run_inline = True

    def __init__(self, limits: Limits, owner: str) -> None:
        super().__init__()
        self.limits = limits
        self.owner = owner
        self.started = time.monotonic()
        self.calls = 0
        self.usage = TokenUsage()
        self.cost = Decimal(0)
        self.unpriced: set[str] = set()
        self._models: dict[UUID, str | None] = {}

    def check(self) -> None:
        """Raise :class:`LimitReached` if a limit is reached: the next step must not run."""
        with _LOCK:
            reached = self._reached()
        if reached is not None:
            raise reached

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: Any,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        # The name the tracer gives a model span when the reply does not name the model.
        params: Mapping[str, Any] = kwargs.get("invocation_params") or {}
        model = (metadata or {}).get("ls_model_name") or params.get("model")
        model = model or params.get("model_name")
        with _LOCK:
            counted = _admission.get()
            if counted is not None and counted.get(id(self)) is False:
                counted[id(self)] = True  # counted when it was admitted
            else:
                self.calls += 1  # a call no admission counted (a compiled sub-agent's, a retry)
            self._models[run_id] = str(model) if model else None

    on_llm_start = on_chat_model_start  # type: ignore[assignment]  # prompts, not messages

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        replies = [
            g.message for gs in response.generations for g in gs if isinstance(g, ChatGeneration)
        ]
        usage = TokenUsage.from_messages(replies)
        metas = (m.response_metadata or {} for m in replies)
        model = next(
            (n for meta in metas if (n := meta.get("model_name") or meta.get("model"))), None
        )
        with _LOCK:
            requested = self._models.pop(run_id, None)
            self.usage = self.usage + usage
            if "cost" not in self.limits or not usage:
                return
            name = str(model) if model else requested
            try:
                price = default_prices().price_of(name, usage)
            except Exception:
                # An unpriced call stops the agent at its next call, with the model named: a
                # price table that fails must not break the run here (callbacks never do, see
                # _guard).
                price = None
            if price is None:
                self.unpriced.add(name or "a model without a name")
            else:
                self.cost += price

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        with _LOCK:
            self._models.pop(run_id, None)

    def _reached(self) -> LimitReached | None:
        limits = self.limits
        if "model_calls" in limits and self.calls >= limits["model_calls"]:
            return self._stop("model_calls", f"{self.calls} model calls made")
        if "tokens" in limits and self.usage.total >= limits["tokens"]:
            return self._stop("tokens", f"{self.usage.total} tokens used")
        if "cost" in limits and self.unpriced:
            models = ", ".join(sorted(self.unpriced))
            return self._stop("cost", f"no price for {models} in the price table")
        if "cost" in limits and self.cost >= Decimal(str(limits["cost"])):
            return self._stop("cost", f"{float(self.cost):.6g} spent")
        elapsed = time.monotonic() - self.started
        if "seconds" in limits and elapsed >= limits["seconds"]:
            return self._stop("seconds", f"{elapsed:.1f} s elapsed")
        return None

    def _stop(self, limit: str, spent: str) -> LimitReached:
        value: float = self.limits[limit]  # type: ignore[literal-required]
        return LimitReached(self.owner, limit, float(value), spent)


class StepGuard(LimitGuard):
    """A guard for a ``CompiledSubAgent``, whose model calls nbagents cannot wrap: it stops the
    runnable when its next step starts (raising from a callback, passed on for ``raise_error``).
    Not at a model call's start: under ``ainvoke`` other handlers' start events would be left
    never awaited."""

    raise_error = True

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.check()


@contextmanager
def admitted(config: RunnableConfig) -> Iterator[None]:
    """Admit one model call of the running agent: raise :class:`LimitReached` if a limit of any
    of its guards is reached, else count the call on all of them, in one step."""
    guards = [h for h in _handlers(config) if isinstance(h, LimitGuard)]
    if not guards:
        yield
        return
    with _LOCK:
        for guard in guards:
            reached = guard._reached()
            if reached is not None:
                raise reached
        for guard in guards:
            guard.calls += 1
    token = _admission.set({id(guard): False for guard in guards})
    try:
        yield
    finally:
        _admission.reset(token)


def _handlers(config: RunnableConfig) -> list[Any]:
    callbacks = config.get("callbacks")
    handlers = callbacks.handlers if isinstance(callbacks, BaseCallbackManager) else callbacks
    return list(handlers or ())


def guarded_config(config: RunnableConfig, *first: BaseCallbackHandler) -> RunnableConfig:
    """``config`` with the handlers ``first`` before its callbacks: LangChain stops at a
    :class:`StepGuard`'s error, so the tracer never opens a span for a step that does not run."""
    callbacks = config.get("callbacks")
    if callbacks is None:
        return {**config, "callbacks": list(first)}
    if isinstance(callbacks, BaseCallbackManager):
        manager = callbacks.copy()
        manager.handlers = [*first, *manager.handlers]
        manager.inheritable_handlers = [*first, *manager.inheritable_handlers]
        return {**config, "callbacks": manager}
    return {**config, "callbacks": [*first, *callbacks]}


def is_guarded(config: RunnableConfig) -> bool:
    """Whether a run with ``config`` has limits to keep: a guard of its own or a caller's."""
    return any(isinstance(h, LimitGuard) for h in _handlers(config))


# LangChain logs every error a callback raises as a warning before passing it on. A limit is
# the guard's answer, not a fault, and the parent already gets it as a ToolMessage.
def _not_a_limit(record: logging.LogRecord) -> bool:
    args = record.args
    return not (
        isinstance(args, tuple)
        and len(args) == 3
        and args[0] == LimitGuard.__name__
        and str(args[2]).startswith(LimitReached.__name__)
    )


logging.getLogger("langchain_core.callbacks.manager").addFilter(_not_a_limit)
