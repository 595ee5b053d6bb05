"""Sub-agents that run on a LangGraph server: the runnable a ``RemoteSubAgent`` spec becomes.

``RemoteGraphRunnable`` stands where a local sub-agent's graph would. It streams a run on a
thread of the server, re-emits its steps as callbacks (:mod:`._remote_run`) and returns the
final state. Under a parent with a checkpointer the thread id is derived from the ``task`` call,
so a remote pause pauses the parent and its resumption resumes that thread (:mod:`._remote_pause`).
A run that exceeds ``timeout``, or whose caller is cancelled, is cancelled on the server too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import uuid
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.runnables.config import (
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)
from langgraph.errors import GraphInterrupt

from nbagents.subagents._remote_http import (
    SDK_KEY_VARIABLES,
    SharedClients,
    ano_reconnect,
    bounded,
    http_status,
    is_transport,
    limits,
    no_reconnect,
    sdk_resolved,
    tls,
)
from nbagents.subagents._remote_pause import (
    ANSWERED_KEY,
    ThreadKey,
    answered_before,
    ask_parent,
    asked_for,
    shorten,
    waiting_for,
)
from nbagents.subagents._remote_run import (
    RemoteRun,
    RemoteSubAgentError,
    TraceDetail,
    aperform,
    perform,
)
from nbagents.subagents._specs import RemoteSubAgent

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient
    from langgraph_sdk.schema import StreamMode

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT",
    "DEFAULT_TIMEOUT",
    "RemoteGraphRunnable",
    "RemoteSubAgentError",
]

DEFAULT_TIMEOUT = 300.0
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_CONNECT_RETRIES = 2
"""New connection attempts after a refused or timed-out one (the SDK's own client makes 5,
which reports a server that is not running only after about 7.5 s)."""
CANCEL_TIMEOUT = 3.0
"""Seconds a best-effort ``runs.cancel`` may take before it is given up."""
STREAM_MODES: dict[TraceDetail, list[StreamMode]] = {
    "steps": ["tasks", "values"],
    "events": ["events", "values"],
}


class RemoteGraphRunnable(Runnable[dict[str, Any], dict[str, Any]]):
    """Runs one graph on a LangGraph server as a sub-agent (see :class:`RemoteSubAgent`)."""

    def __init__(self, spec: RemoteSubAgent) -> None:
        self.spec = spec
        self.url = spec["url"].rstrip("/")
        self.graph_id = spec["graph_id"]
        self.timeout = float(spec.get("timeout", DEFAULT_TIMEOUT))
        self.connect_timeout = float(spec.get("connect_timeout", DEFAULT_CONNECT_TIMEOUT))
        self.connect_retries = int(spec.get("connect_retries", DEFAULT_CONNECT_RETRIES))
        self.detail: TraceDetail = spec.get("trace", "steps")
        self.update_strategy = spec.get("update_strategy", "interrupt")
        """What a background task's follow-up does to its run still going (the server's
        ``multitask_strategy``): ``interrupt`` it, or ``enqueue`` behind it."""
        self._clients: SharedClients[Any] = SharedClients()

    def __repr__(self) -> str:
        return f"RemoteGraphRunnable(url={self.url!r}, graph_id={self.graph_id!r})"

    def _session(
        self, run: RemoteRun, config: RunnableConfig
    ) -> Generator[Any, Any, dict[str, Any]]:
        """The run's actions in order, for ``invoke`` and ``ainvoke`` to make: a request on their
        client (its answer is sent back), a run to stream (its options, a dict), ``_CANCEL``, or
        callbacks to make. An error in any of them is thrown in."""
        try:
            key = ThreadKey.of(config, self.url, self.graph_id)
            resume = yield from self._start(run, key)
            while True:
                yield _stream_options(run, resume)
                if run.paused:
                    run.interrupts = waiting_for((yield _threads("get_state", run.thread_id)))
                if not run.interrupts:
                    result = run.result()
                    break
                if run.answered:
                    yield _threads("update", run.thread_id, metadata={ANSWERED_KEY: run.answered})
                resume = self._ask(run, key)
        except GraphInterrupt as pause:
            yield from run.pause(pause)
            raise
        except GeneratorExit:  # closed by its driver: nothing more to make
            raise
        except BaseException as error:
            failure = self._explain(error, run.run_id)
            if run.active:
                yield _CANCEL
            yield from run.fail(failure)
            if failure is error:
                raise
            raise failure from error
        yield from run.succeed(result)
        return result

    def _start(
        self, run: RemoteRun, key: ThreadKey | None
    ) -> Generator[_Request, Any, dict[str, Any] | None]:
        """Choose the run's thread; the answers to resume it with when it is a paused one."""
        if key is None:
            run.thread_id = str(uuid.uuid4())
            return None
        attempt = 0
        while True:
            thread_id = key.thread_id(attempt)
            try:
                state = yield _threads("get_state", thread_id)
            except Exception as error:
                if http_status(error) != 404:
                    raise
                run.thread_id = thread_id
                return None
            waiting = waiting_for(state)
            if waiting:  # resume it: the answers to what it waits for, asked of the parent
                run.thread_id, run.interrupts = thread_id, waiting
                run.answered = answered_before((yield _threads("get", thread_id)))
                return self._ask(run, key, replay=run.answered)
            attempt += 1

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        config = ensure_config(config)
        run, session = self._begin(input, config)
        manager = get_callback_manager_for_config(config)
        client = self._clients.acquire(None, self._sync_client)
        try:
            action = next(session)
            while True:
                answer = None
                try:
                    if isinstance(action, dict):
                        parts = client.runs.stream(run.thread_id, self.graph_id, **action)
                        for part in bounded(parts, self.timeout):
                            for op in run.accept(part.event, part.data):
                                perform(op, manager, run)
                    elif action is _CANCEL:
                        self._cancel_in_background(client, run.thread_id, run.run_id)
                    elif callable(action):
                        answer = action(client)
                    else:
                        perform(action, manager, run)
                except BaseException as error:
                    action = session.throw(error)
                else:
                    action = session.send(answer)
        except StopIteration as done:
            result: dict[str, Any] = done.value
            return result
        finally:
            self._release_sync()

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        config = ensure_config(config)
        run, session = self._begin(input, config)
        manager = get_async_callback_manager_for_config(config)
        loop = asyncio.get_running_loop()
        client = self._clients.acquire(loop, self._async_client)
        try:
            action = next(session)
            while True:
                answer = None
                try:
                    if isinstance(action, dict):
                        parts = client.runs.stream(run.thread_id, self.graph_id, **action)
                        async with asyncio.timeout(self.timeout):
                            async for part in parts:
                                for op in run.accept(part.event, part.data):
                                    await aperform(op, manager, run)
                    elif action is _CANCEL:
                        await _acancel(client, run.thread_id, run.run_id)
                    elif callable(action):
                        answer = await action(client)
                    else:
                        await aperform(action, manager, run)
                except BaseException as error:
                    action = session.throw(error)
                else:
                    action = session.send(answer)
        except StopIteration as done:
            result: dict[str, Any] = done.value
            return result
        finally:
            unused = self._clients.release(loop)
            if unused is not None:
                await unused.aclose()

    def _begin(
        self, input: dict[str, Any], config: RunnableConfig
    ) -> tuple[RemoteRun, Generator[Any, Any, dict[str, Any]]]:
        name = str(config.get("run_name") or self.spec["name"])
        run = RemoteRun(self.spec["name"], self.url, self.graph_id, input, name, self.detail)
        return run, self._session(run, config)

    def _release_sync(self) -> None:
        unused = self._clients.release(None)
        if unused is not None:
            unused.close()

    def _cancel_in_background(
        self, client: SyncLangGraphClient, thread_id: str, run_id: str
    ) -> None:
        """Ask the server to cancel a run, waiting at most ``CANCEL_TIMEOUT`` for its answer."""
        self._clients.acquire(None, self._sync_client)  # until answered

        def cancel() -> None:
            try:
                client.runs.cancel(thread_id, run_id)
            except Exception:
                pass  # best effort: the server may be the reason we are cancelling
            finally:
                self._release_sync()

        worker = threading.Thread(target=cancel, name="nbagents-remote-cancel", daemon=True)
        worker.start()
        worker.join(CANCEL_TIMEOUT)

    def _sync_client(self) -> SyncLangGraphClient:
        client: SyncLangGraphClient = self._client(True)
        return client

    def _async_client(self) -> LangGraphClient:
        client: LangGraphClient = self._client(False)
        return client

    def _client(self, sync: bool) -> Any:
        """The SDK's client on an httpx one of ours, which only changes how often a connection
        is retried and never reconnects a broken stream."""
        import httpx
        from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

        transport: Any = httpx.HTTPTransport if sync else httpx.AsyncHTTPTransport
        http: Any = httpx.Client if sync else httpx.AsyncClient
        made = http(
            **self._resolved(),
            transport=transport(retries=self.connect_retries, verify=tls(), limits=limits()),
            event_hooks={"response": [no_reconnect if sync else ano_reconnect]},
        )
        return SyncLangGraphClient(made) if sync else LangGraphClient(made)

    def _ask(self, run: RemoteRun, key: ThreadKey | None, replay: int = 0) -> dict[str, Any]:
        """The parent's answers to what ``run`` waits for, by remote interrupt id."""
        if key is None:
            raise RemoteSubAgentError(
                f"LangGraph server {self.url}: the run of graph {self.graph_id!r} paused for "
                f"a decision ({asked_for(run.interrupts)}) on thread {run.thread_id}. Only a run "
                f"with a checkpointer can pause for it and resume the remote run: give the "
                f"main agent one (create_deep_agent(..., checkpointer=InMemorySaver())) and a "
                f"thread_id in the config."
            )
        answers, asked = ask_parent(run.interrupts, replay)
        run.answered += asked
        run.interrupts = ()
        return answers

    def _resolved(self) -> dict[str, Any]:
        """What the SDK's own client would use (URL, headers with the API key, timeouts)."""
        key: str | None = None
        env = self.spec.get("api_key_env")
        if env:
            key = os.environ.get(env)
            if not key:
                raise RemoteSubAgentError(
                    f"LangGraph server {self.url}: the API key variable {env!r} "
                    f"(api_key_env of sub-agent {self.spec['name']!r}) is not set."
                )
        headers = tuple(sorted((self.spec.get("headers") or {}).items()))
        # The SDK's variables are part of the key: a key changed between runs is sent.
        sdk_env = tuple(os.environ.get(name) for name in SDK_KEY_VARIABLES)
        base_url, sent, timeout = sdk_resolved(
            self.url, headers, key, self.timeout, self.connect_timeout, sdk_env
        )
        return {"base_url": base_url, "headers": dict(sent), "timeout": timeout}

    def _explain(self, error: BaseException, run_id: str = "") -> BaseException:
        """The error to report: one naming the server and the cause, or ``error`` itself when
        it is not the server's doing (cancellation, Ctrl-C, a bug)."""
        if isinstance(error, RemoteSubAgentError | asyncio.CancelledError | KeyboardInterrupt):
            return error
        where = f"LangGraph server {self.url}"
        what = f"graph {self.graph_id!r}"
        if isinstance(error, TimeoutError):
            return RemoteSubAgentError(
                f"{where}: no result for {what} within timeout={self.timeout:g} s"
                + ("; the remote run was cancelled." if run_id else ".")
            )
        status = http_status(error)
        if status in (401, 403):
            return RemoteSubAgentError(
                f"{where} refused the credentials (HTTP {status}): set the API key in "
                f"LANGGRAPH_API_KEY, or name its variable in the spec's 'api_key_env', or pass "
                f"the server's auth header in 'headers'."
            )
        if status == 404:
            return RemoteSubAgentError(
                f"{where}: HTTP 404 for {what}; is it a graph in the server's langgraph.json or "
                f"an assistant id? ({shorten(error, 300)})"
            )
        if status is not None:
            return RemoteSubAgentError(f"{where} answered HTTP {status}: {shorten(error, 300)}")
        if is_transport(error):
            if run_id:
                return RemoteSubAgentError(
                    f"{where}: the connection broke during the run of {what} "
                    f"({type(error).__name__}: {error}); was the server stopped?"
                )
            return RemoteSubAgentError(
                f"{where} cannot be reached ({type(error).__name__}: {error}); is it running?"
            )
        if isinstance(error, ImportError) and "langgraph_sdk" in str(error):
            return _missing_sdk()
        return error


def _stream_options(run: RemoteRun, resume: dict[str, Any] | None) -> dict[str, Any]:
    # A paused thread continues from where it stopped: the answers instead of the input.
    given = {"input": run.input} if resume is None else {"command": {"resume": resume}}
    return {
        **given,
        "stream_mode": STREAM_MODES[run.detail],
        # The steps of graphs run inside a step (a deep agent's sub-agents on the server) too;
        # only "steps" asks: "events" already has them.
        "stream_subgraphs": run.detail == "steps",
        # A run the client stops reading is cancelled on the server, not left running.
        "on_disconnect": "cancel",
        "on_run_created": run.created,
        # The thread is made with the run (its id is ours), one request instead of two; the
        # server gives it the run's metadata.
        "if_not_exists": "create",
        "metadata": {"nbagents_subagent": run.subagent},
    }


_Request = Callable[[Any], Any]
"""A call on the client: its answer, or (async) an awaitable of it."""


def _threads(method: str, *args: Any, **kwargs: Any) -> _Request:
    return lambda client: getattr(client.threads, method)(*args, **kwargs)


_CANCEL = object()
"""An action: cancel the run on the server (best effort)."""


async def _acancel(client: LangGraphClient, thread_id: str, run_id: str) -> None:
    with contextlib.suppress(Exception):  # best effort: the server may be why we cancel
        await asyncio.wait_for(client.runs.cancel(thread_id, run_id), CANCEL_TIMEOUT)


def _missing_sdk() -> RemoteSubAgentError:
    return RemoteSubAgentError(
        "Remote sub-agents need langgraph-sdk: pip install 'jupyter-nbagents[remote]'."
    )
