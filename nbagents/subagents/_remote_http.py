"""Connections to a LangGraph server for remote sub-agents: the SDK's clients on httpx clients
of ours, shared by the runs in flight (the last closes it), and a stream read with a deadline.
``langgraph_sdk`` and ``httpx`` (the ``remote`` extra) are imported on first use.
"""

from __future__ import annotations

import functools
import queue
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from nbagents.subagents._stop import check_not_stopped

__all__ = [
    "SDK_KEY_VARIABLES",
    "SharedClients",
    "ano_reconnect",
    "bounded",
    "http_status",
    "is_transport",
    "limits",
    "no_reconnect",
    "sdk_resolved",
    "tls",
]

C = TypeVar("C")
STOP_POLL = 0.25
"""Seconds between checks whether the user stopped the run (Ctrl-C) while waiting."""


def limits() -> Any:
    import httpx

    # Each run in flight holds a connection for its stream: a bounded pool would make the run
    # past its size wait, and time out. Few idle ones are kept: httpcore's checks at every
    # request and close grow with the square of the idle pool when many runs end together.
    return httpx.Limits(max_connections=None, max_keepalive_connections=4)


class SharedClients(Generic[C]):
    """One client per key while runs use it: ``None`` for the thread-safe sync client, else
    the event loop an async client belongs to."""

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


_DONE = object()


def bounded(parts: Iterator[Any], seconds: float) -> Iterator[Any]:
    """``parts``, read on a helper thread so that waiting for the next one stops at the deadline
    (a blocking read cannot be interrupted, and keep-alives would never time it out)."""
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
            raise TimeoutError from None
        if item is _DONE:
            return
        if isinstance(item, BaseException):
            raise item
        yield item


SDK_KEY_VARIABLES = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
"""Where ``langgraph_sdk`` looks for an API key when none is given."""


@functools.lru_cache(maxsize=32)
def sdk_resolved(
    url: str,
    headers: tuple[tuple[str, str], ...],
    api_key: str | None,
    timeout: float,
    connect_timeout: float,
    sdk_env: tuple[str | None, ...],
) -> tuple[Any, tuple[tuple[str, str], ...], Any]:
    """The base URL, headers and timeouts ``langgraph_sdk`` resolves for these options, once per
    set of them (its client loads the CA bundle). ``sdk_env`` only keys the cache."""
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
def tls() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle is slow, so once per process."""
    import httpx

    return httpx.create_ssl_context()


def no_reconnect(response: Any) -> None:
    """Keep the SDK from reconnecting a broken run stream: the server cancels the run once it
    breaks (``on_disconnect="cancel"``), so reconnecting would only delay the error."""
    if response.request.url.path.endswith("/runs/stream"):
        response.headers.pop("location", None)


async def ano_reconnect(response: Any) -> None:
    no_reconnect(response)


def http_status(error: BaseException) -> int | None:
    response = getattr(error, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def is_transport(error: BaseException) -> bool:
    try:
        import httpx
    except ImportError:  # pragma: no cover
        return False
    return isinstance(error, httpx.TransportError | ConnectionError)
