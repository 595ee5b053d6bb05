"""Shared fixtures: run an agent under ``invoke`` or ``ainvoke``, record its model calls, and a
throwaway PostgreSQL server (``postgres_url``, see ``support/postgres.py``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from support.postgres import postgres_server, require_bin_dir

Run = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ModelCall:
    """One chat model call as the callbacks saw it."""

    agent: str | None
    messages: list[BaseMessage]
    tools: list[str]
    """Names of the tools bound to the model for this call."""


class ModelCalls(BaseCallbackHandler):
    """Callback handler recording every chat model call of a run, sub-agents included."""

    def __init__(self) -> None:
        self.calls: list[ModelCall] = []
        self._lock = threading.Lock()

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        tools = [t["function"]["name"] for t in (invocation_params or {}).get("tools", [])]
        call = ModelCall((metadata or {}).get("lc_agent_name"), list(messages[0]), tools)
        with self._lock:
            self.calls.append(call)

    def of(self, agent: str) -> list[ModelCall]:
        return [c for c in self.calls if c.agent == agent]

    def agents(self) -> list[str | None]:
        return sorted({c.agent for c in self.calls}, key=str)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks what is not a whole module's (those carry ``pytestmark``): a test that uses the
    PostgreSQL server needs a ``server``, a tutorial under nbval (``--nbval``) a ``kernel``, a
    test listed in ``slow_tests.txt`` is ``slow``.

    ``make quick`` deselects them; ``make test`` runs them.
    """
    slow = _slow_tests()
    for item in items:
        if item.nodeid in slow:
            item.add_marker(pytest.mark.slow)
        if "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.server)
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.kernel)


def _slow_tests() -> frozenset[str]:
    listed = (Path(__file__).parent / "slow_tests.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in listed if line.strip() and line[0] != "#")


@pytest.fixture
def model_calls() -> ModelCalls:
    return ModelCalls()


@pytest.fixture(params=["invoke", "ainvoke"])
def run_agent(request: pytest.FixtureRequest, model_calls: ModelCalls) -> Run:
    """``await run_agent(agent, input, config=None)``: the result, via invoke or ainvoke.

    Every run records its model calls in the ``model_calls`` fixture.
    """

    async def _run(agent: Any, payload: Any, config: dict[str, Any] | None = None) -> Any:
        config = {**(config or {}), "callbacks": [model_calls]}
        if request.param == "ainvoke":
            return await agent.ainvoke(payload, config)
        return agent.invoke(payload, config)

    return _run


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """``postgresql://postgres@127.0.0.1:PORT/postgres``: a fresh server, one per test session.

    Started on first use (about a second) and stopped at the end of the session; tests share it,
    so each keeps to its own namespaces or tables. Without Debian's ``postgresql`` package the
    tests using it skip, except in CI, where they fail.
    """
    with postgres_server(require_bin_dir()) as url:
        yield url


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test, whatever handler is in force.

    The Ctrl-C tests check what a user's Ctrl-C does under Python's (or Jupyter's) handler,
    which raises ``KeyboardInterrupt``. A pytest started as a background job of a shell without
    job control starts with SIGINT ignored, and then nothing would raise; another handler left
    by an earlier test would make them test that one instead.
    """
    import signal
    import warnings

    found = signal.getsignal(signal.SIGINT)
    # pytest-xdist's workers ignore SIGINT (the controller handles Ctrl-C): expected there.
    expected = found is signal.SIG_IGN and os.environ.get("PYTEST_XDIST_WORKER")
    if found is not signal.default_int_handler and not expected:
        warnings.warn(f"SIGINT was handled by {found!r}; Python's handler is used", stacklevel=1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)
