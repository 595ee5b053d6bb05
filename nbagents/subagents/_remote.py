"""Sub-agents that run on a LangGraph server: the runnable a ``RemoteSubAgent`` spec becomes.

``RemoteGraphRunnable`` stands where a local sub-agent's graph would, so the ``task`` tool's
``Spawn`` isolates its input, packages its result and turns its failures into error
ToolMessages exactly as for a local one. It streams a run on a new thread of the server
(``stream_mode=["tasks", "values"]``, or ``["events", "values"]`` for a spec with
``"trace": "events"``; one request: the thread id is made here and the server creates the
thread with the run, ``if_not_exists="create"``), re-emits the run's steps as callbacks through
a relay (:mod:`nbagents.subagents._steps`, :mod:`nbagents.subagents._relay`), and returns the
final state with its messages as message objects. ``langgraph_sdk`` (the ``remote`` extra) is
imported on the first call only.

Under a parent run with a checkpointer the thread id is derived from the ``task`` call instead
(one more request first: is that thread there, and waiting?), so that a remote run that stops
for a person pauses the parent, and the parent's resumption resumes that thread: see
:mod:`nbagents.subagents._remote_pause`. Without one, a remote pause is an error that says so.

The runs in flight at once share one HTTP client (one per event loop under ``ainvoke``): a
fan-out of fifty no longer builds fifty clients, and their connections are reused. The client
is closed when the last of them ends.

Every run is bounded by the spec's ``timeout``, connecting included; when it runs out, or the
caller is cancelled or interrupted, the remote run is cancelled too (best effort:
``runs.cancel``; the stream is also opened with ``on_disconnect="cancel"``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import queue
import ssl
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.runnables.config import (
    get_async_callback_manager_for_config,
    get_callback_manager_for_config,
)
from langgraph.errors import GraphInterrupt

from nbagents.subagents._remote_pause import (
    ANSWERED_KEY,
    RemoteInterrupt,
    ThreadKey,
    answered_before,
    ask_parent,
    asked_for,
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
from nbagents.subagents._stop import check_not_stopped

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
STOP_POLL = 0.25
"""Seconds between checks whether the user stopped the run (Ctrl-C) while waiting."""
CANCEL_TIMEOUT = 3.0
"""Seconds a best-effort ``runs.cancel`` may take before it is given up."""
STREAM_MODES: dict[TraceDetail, list[StreamMode]] = {
    # A step's start and end (and its graph runs' steps) are all a trace of model and tool
    # calls needs; "events" also sends every runnable's start, token and end, which costs the
    # server far more CPU per run, on a server that may share the client's cores.
    "steps": ["tasks", "values"],
    "events": ["events", "values"],
}


def _limits() -> Any:
    import httpx

    # Each run in flight holds a connection for its stream: httpx's default pool (100) would
    # make the 101st of a wide fan-out wait, and time out, for a connection. Few idle ones are
    # kept: httpcore counts the idle connections for each idle connection at every request and
    # every close, so many runs ending together with many kept cost it checks that grow with the
    # square of the pool, under the GIL; runs in flight at once seldom start one after another,
    # the reuse idle ones are for.
    return httpx.Limits(max_connections=None, max_keepalive_connections=4)


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
        self._clients: _SharedClients[Any] = _SharedClients()

    def __repr__(self) -> str:
        return f"RemoteGraphRunnable(url={self.url!r}, graph_id={self.graph_id!r})"

    # -- sync ------------------------------------------------------------------------------------

    def invoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        config = ensure_config(config)
        run = RemoteRun(self.spec["name"], self.url, self.graph_id, input, config, self.detail)
        manager = get_callback_manager_for_config(config)
        client = self._clients.acquire(None, self._sync_client)
        try:
            key = ThreadKey.of(config, self.url, self.graph_id)
            resume = self._sync_start(client, run, key)
            while True:
                parts = self._sync_parts(client, run, input, resume)
                for event, data in _bounded(parts, self.timeout):
                    for op in run.accept(event, data):
                        perform(op, manager, run)
                if run.paused:
                    run.interrupts = waiting_for(client.threads.get_state(run.thread_id))
                if not run.interrupts:
                    break
                if run.answered:
                    client.threads.update(run.thread_id, metadata={ANSWERED_KEY: run.answered})
                resume = self._ask(run, key)
            result = run.result()
        except GraphInterrupt as pause:
            for op in run.pause(pause):
                perform(op, manager, run)
            raise
        except BaseException as error:
            failure = self._explain(error, run)
            if run.active:
                self._cancel_in_background(client, run.thread_id, run.run_id)
            for op in run.fail(failure):
                perform(op, manager, run)
            if failure is error:
                raise
            raise failure from error
        finally:
            self._release_sync()
        for op in run.succeed(result):
            perform(op, manager, run)
        return result

    def _sync_start(
        self, client: SyncLangGraphClient, run: RemoteRun, key: ThreadKey | None
    ) -> dict[str, Any] | None:
        """Choose the run's thread; the answers to resume it with when it is a paused one."""
        if key is None:
            run.thread_id = str(uuid.uuid4())
            return None
        attempt = 0
        while True:
            thread_id = key.thread_id(attempt)
            try:
                state = client.threads.get_state(thread_id)
            except Exception as error:
                if _http_status(error) != 404:
                    raise
                run.thread_id = thread_id
                return None
            waiting = waiting_for(state)
            if waiting:
                answered = answered_before(client.threads.get(thread_id))
                return self._resume(run, thread_id, waiting, answered, key)
            attempt += 1

    def _sync_parts(
        self,
        client: SyncLangGraphClient,
        run: RemoteRun,
        input: dict[str, Any],
        resume: dict[str, Any] | None,
    ) -> Iterator[tuple[str, Any]]:
        options = _stream_options(run, input, resume)
        for part in client.runs.stream(run.thread_id, self.graph_id, **options):
            yield part.event, part.data

    def _release_sync(self) -> None:
        unused = self._clients.release(None)
        if unused is not None:
            unused.close()

    def _cancel_in_background(
        self, client: SyncLangGraphClient, thread_id: str, run_id: str
    ) -> None:
        """Ask the server to cancel a run, waiting at most ``CANCEL_TIMEOUT`` for its answer."""
        self._clients.acquire(None, self._sync_client)  # held until the cancel is answered

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
        import httpx
        from langgraph_sdk.client import SyncLangGraphClient

        return SyncLangGraphClient(
            httpx.Client(
                **self._resolved(),
                transport=httpx.HTTPTransport(
                    retries=self.connect_retries, verify=_tls(), limits=_limits()
                ),
                event_hooks={"response": [_no_reconnect]},
            )
        )

    # -- async -----------------------------------------------------------------------------------

    async def ainvoke(
        self, input: dict[str, Any], config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        config = ensure_config(config)
        run = RemoteRun(self.spec["name"], self.url, self.graph_id, input, config, self.detail)
        manager = get_async_callback_manager_for_config(config)
        loop = asyncio.get_running_loop()
        client = self._clients.acquire(loop, self._async_client)
        try:
            key = ThreadKey.of(config, self.url, self.graph_id)
            resume = await self._async_start(client, run, key)
            while True:
                async with asyncio.timeout(self.timeout):
                    async for event, data in self._async_parts(client, run, input, resume):
                        for op in run.accept(event, data):
                            await aperform(op, manager, run)
                if run.paused:
                    run.interrupts = waiting_for(await client.threads.get_state(run.thread_id))
                if not run.interrupts:
                    break
                if run.answered:
                    await client.threads.update(
                        run.thread_id, metadata={ANSWERED_KEY: run.answered}
                    )
                resume = self._ask(run, key)
            result = run.result()
        except GraphInterrupt as pause:
            for op in run.pause(pause):
                await aperform(op, manager, run)
            raise
        except BaseException as error:
            failure = self._explain(error, run)
            if run.active:
                await _acancel(client, run.thread_id, run.run_id)
            for op in run.fail(failure):
                await aperform(op, manager, run)
            if failure is error:
                raise
            raise failure from error
        finally:
            unused = self._clients.release(loop)
            if unused is not None:
                await unused.aclose()
        for op in run.succeed(result):
            await aperform(op, manager, run)
        return result

    async def _async_start(
        self, client: LangGraphClient, run: RemoteRun, key: ThreadKey | None
    ) -> dict[str, Any] | None:
        """``_sync_start`` on the async client."""
        if key is None:
            run.thread_id = str(uuid.uuid4())
            return None
        attempt = 0
        while True:
            thread_id = key.thread_id(attempt)
            try:
                state = await client.threads.get_state(thread_id)
            except Exception as error:
                if _http_status(error) != 404:
                    raise
                run.thread_id = thread_id
                return None
            waiting = waiting_for(state)
            if waiting:
                answered = answered_before(await client.threads.get(thread_id))
                return self._resume(run, thread_id, waiting, answered, key)
            attempt += 1

    async def _async_parts(
        self,
        client: LangGraphClient,
        run: RemoteRun,
        input: dict[str, Any],
        resume: dict[str, Any] | None,
    ) -> AsyncIterator[tuple[str, Any]]:
        options = _stream_options(run, input, resume)
        async for part in client.runs.stream(run.thread_id, self.graph_id, **options):
            yield part.event, part.data

    def _async_client(self) -> LangGraphClient:
        import httpx
        from langgraph_sdk.client import LangGraphClient

        return LangGraphClient(
            httpx.AsyncClient(
                **self._resolved(),
                transport=httpx.AsyncHTTPTransport(
                    retries=self.connect_retries, verify=_tls(), limits=_limits()
                ),
                event_hooks={"response": [_ano_reconnect]},
            )
        )

    # -- shared ----------------------------------------------------------------------------------

    def _resume(
        self,
        run: RemoteRun,
        thread_id: str,
        waiting: tuple[RemoteInterrupt, ...],
        answered: int,
        key: ThreadKey,
    ) -> dict[str, Any]:
        """Resume the paused thread ``thread_id``: the answers to what it waits for (asking the
        parent for them: ``GraphInterrupt`` until it has them all)."""
        run.thread_id = thread_id
        run.answered = answered
        run.interrupts = waiting
        return self._ask(run, key, replay=answered)

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
        """What the SDK's own client would use (URL, headers with the API key, timeouts), for
        ours: ours only changes how often a connection is retried and never reconnects a broken
        stream."""
        try:
            import httpx  # noqa: F401
        except ImportError as error:  # pragma: no cover - httpx comes with langgraph-sdk
            raise _missing_sdk() from error
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
        sdk_env = tuple(os.environ.get(name) for name in _SDK_KEY_VARIABLES)
        base_url, sent, timeout = _sdk_resolved(
            self.url, headers, key, self.timeout, self.connect_timeout, sdk_env
        )
        return {"base_url": base_url, "headers": dict(sent), "timeout": timeout}

    def _explain(self, error: BaseException, run: RemoteRun) -> BaseException:
        """The error to report: one naming the server and the cause, or ``error`` itself when
        it is not the server's doing (cancellation, Ctrl-C, a bug)."""
        if isinstance(error, RemoteSubAgentError | asyncio.CancelledError | KeyboardInterrupt):
            return error
        where = f"LangGraph server {self.url}"
        what = f"graph {self.graph_id!r}"
        if isinstance(error, TimeoutError | _Timeout):
            return RemoteSubAgentError(
                f"{where}: no result for {what} within timeout={self.timeout:g} s"
                + ("; the remote run was cancelled." if run.run_id else ".")
            )
        status = _http_status(error)
        if status in (401, 403):
            return RemoteSubAgentError(
                f"{where} refused the credentials (HTTP {status}): set the API key in "
                f"LANGGRAPH_API_KEY, or name its variable in the spec's 'api_key_env', or pass "
                f"the server's auth header in 'headers'."
            )
        if status == 404:
            return RemoteSubAgentError(
                f"{where}: HTTP 404 for {what}; is it a graph in the server's langgraph.json or "
                f"an assistant id? ({_short(error)})"
            )
        if status is not None:
            return RemoteSubAgentError(f"{where} answered HTTP {status}: {_short(error)}")
        if _is_transport(error):
            if run.run_id:
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


def _stream_options(
    run: RemoteRun, input: dict[str, Any], resume: dict[str, Any] | None
) -> dict[str, Any]:
    # A paused thread continues from where it stopped: the answers instead of the input.
    given = {"input": input} if resume is None else {"command": {"resume": resume}}
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
        "metadata": run.thread_metadata(),
    }


C = TypeVar("C")


class _SharedClients(Generic[C]):
    """One client per key (``None``, or an event loop) while runs use it; closed by the last.

    An async client belongs to the event loop it was first used on, so ``ainvoke`` runs share
    one per loop; a sync client is thread-safe and shared by every ``invoke``.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[Any, list[Any]] = {}

    def acquire(self, key: Any, make: Callable[[], C]) -> C:
        with self._lock:
            entry = self._held.get(key)
            if entry is None:
                entry = self._held[key] = [make(), 0]
            entry[1] += 1
            client: C = entry[0]
            return client

    def release(self, key: Any) -> C | None:
        """The client to close when this was its last user, else ``None``."""
        with self._lock:
            entry = self._held[key]
            entry[1] -= 1
            if entry[1] > 0:
                return None
            del self._held[key]
            client: C = entry[0]
            return client


class _Timeout(Exception):
    pass


_DONE = object()


def _bounded(parts: Iterator[tuple[str, Any]], seconds: float) -> Iterator[tuple[str, Any]]:
    """``parts``, read on a helper thread so that waiting for the next one stops at the deadline.

    A blocking read cannot be interrupted, and a server that sends keep-alives but no result
    would never time it out: the helper thread reads, the caller waits with a deadline.
    """
    deadline = time.monotonic() + seconds
    found: queue.SimpleQueue[Any] = queue.SimpleQueue()

    def pump() -> None:
        try:
            for part in parts:
                found.put(part)
            found.put(_DONE)
        except BaseException as error:
            found.put(error)

    threading.Thread(target=pump, name="nbagents-remote", daemon=True).start()
    while True:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise queue.Empty
            # In slices: Ctrl-C on the notebook's run must also stop (and cancel) this one.
            item = found.get(timeout=min(remaining, STOP_POLL))
        except queue.Empty:
            check_not_stopped()
            if time.monotonic() < deadline:
                continue
            raise _Timeout from None
        if item is _DONE:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


_SDK_KEY_VARIABLES = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
"""Where ``langgraph_sdk`` looks for an API key when none is given."""


@functools.lru_cache(maxsize=32)
def _sdk_resolved(
    url: str,
    headers: tuple[tuple[str, str], ...],
    api_key: str | None,
    timeout: float,
    connect_timeout: float,
    sdk_env: tuple[str | None, ...],
) -> tuple[Any, tuple[tuple[str, str], ...], Any]:
    """The base URL, headers and timeouts ``langgraph_sdk`` resolves for these options.

    Building the SDK's client to learn them loads the CA bundle for a transport ours replaces,
    which the first run of each ``invoke`` would wait for: once per set of options.
    ``sdk_env`` (the SDK's API key variables) only keys the cache.
    """
    import httpx
    from langgraph_sdk import get_sync_client

    options: dict[str, Any] = {
        "headers": dict(headers),
        "timeout": httpx.Timeout(timeout, connect=connect_timeout),
    }
    if api_key is not None:
        options["api_key"] = api_key
    made = get_sync_client(url=url, **options).http.client
    made.close()
    return made.base_url, tuple(made.headers.items()), made.timeout


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle is slow, so once per process."""
    import httpx

    return httpx.create_ssl_context()


async def _acancel(client: LangGraphClient, thread_id: str, run_id: str) -> None:
    with contextlib.suppress(Exception):  # best effort: the server may be why we cancel
        await asyncio.wait_for(client.runs.cancel(thread_id, run_id), CANCEL_TIMEOUT)


def _no_reconnect(response: Any) -> None:
    """Keep the SDK from reconnecting a broken run stream to its ``Location``.

    The stream is opened with ``on_disconnect="cancel"``: once it breaks, the server cancels the
    run, so reconnecting (five attempts with back-off) would only delay the error.
    """
    if response.request.url.path.endswith("/runs/stream"):
        response.headers.pop("location", None)


async def _ano_reconnect(response: Any) -> None:
    _no_reconnect(response)


def _http_status(error: BaseException) -> int | None:
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _is_transport(error: BaseException) -> bool:
    try:
        import httpx
    except ImportError:  # pragma: no cover
        return False
    return isinstance(error, httpx.TransportError | ConnectionError)


def _short(what: object, limit: int = 300) -> str:
    text = str(what)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _missing_sdk() -> RemoteSubAgentError:
    return RemoteSubAgentError(
        "Remote sub-agents need langgraph-sdk: pip install 'jupyter-nbagents[remote]'."
    )
