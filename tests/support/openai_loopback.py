"""An OpenAI-compatible chat completions server on loopback, answering scripted replies.

It answers ``POST /v1/chat/completions`` as OpenAI's API does, in the shapes the ``openai`` SDK
parses: a ``chat.completion`` object, or with ``"stream": true`` server-sent
``chat.completion.chunk`` events ending in ``data: [DONE]``, with a last chunk that carries only
``usage`` when the request asked for it (``stream_options: {"include_usage": true}``). Usage
holds the details a reasoning model with prompt caching reports:
``prompt_tokens_details.cached_tokens`` / ``cache_write_tokens`` and
``completion_tokens_details.reasoning_tokens``.

Replies are given in the order the requests will come; every request body is kept in
``requests`` for the test to read.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Reply", "loopback_openai"]

CREATED = 1_767_225_600
"""The ``created`` time of every answer (any fixed Unix time)."""


@dataclass(frozen=True)
class Reply:
    """One answer: text or tool calls (name, JSON arguments), and the tokens it reports."""

    prompt_tokens: int
    completion_tokens: int
    text: str = ""
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    model: str = "o3-2025-04-16"

    def usage(self) -> dict[str, Any]:
        prompt_details: dict[str, int] = {"cached_tokens": self.cached_tokens, "audio_tokens": 0}
        if self.cache_write_tokens:
            prompt_details["cache_write_tokens"] = self.cache_write_tokens
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": prompt_details,
            "completion_tokens_details": {
                "reasoning_tokens": self.reasoning_tokens,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }

    def calls(self, number: int) -> list[dict[str, Any]]:
        return [
            {
                "id": f"call_{number}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(self.tool_calls)
        ]

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


@dataclass
class LoopbackOpenAI:
    replies: list[Reply]
    url: str = ""
    """The ``base_url`` to give the client: ``http://127.0.0.1:<port>/v1``."""
    requests: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next(self, body: dict[str, Any]) -> tuple[int, Reply]:
        with self.lock:
            self.requests.append(body)
            number = len(self.requests)
            if number > len(self.replies):
                raise AssertionError(f"request {number} has no scripted reply: {body!r:.300}")
            return number, self.replies[number - 1]


def _completion(number: int, reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text or None,
        "refusal": None,
        "annotations": [],
    }
    if reply.tool_calls:
        message["tool_calls"] = reply.calls(number)
    return {
        "id": f"chatcmpl-loopback{number}",
        "object": "chat.completion",
        "created": CREATED,
        "model": reply.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": reply.usage(),
        "service_tier": "default",
        "system_fingerprint": None,
    }


def _chunks(number: int, reply: Reply, include_usage: bool) -> Iterator[dict[str, Any]]:
    def chunk(choices: list[dict[str, Any]], usage: Any = None) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": f"chatcmpl-loopback{number}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": reply.model,
            "service_tier": "default",
            "system_fingerprint": None,
            "choices": choices,
        }
        if include_usage:
            data["usage"] = usage
        return data

    def delta(content: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
        return [{"index": 0, "delta": content, "logprobs": None, "finish_reason": finish}]

    yield chunk(delta({"role": "assistant", "content": "", "refusal": None}))
    words = reply.text.split(" ")
    for i, word in enumerate(words if reply.text else []):
        yield chunk(delta({"content": word if i == 0 else f" {word}"}))
    for index, call in enumerate(reply.calls(number)):
        head = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
        yield chunk(delta({"tool_calls": [{"index": index, **head}]}))
        arguments = call["function"]["arguments"]
        for start in range(0, len(arguments), 16):
            piece = {"index": index, "function": {"arguments": arguments[start : start + 16]}}
            yield chunk(delta({"tool_calls": [piece]}))
    yield chunk(delta({}, reply.finish_reason))
    if include_usage:
        yield chunk([], reply.usage())


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid"}})
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        number, reply = self.server.state.next(body)
        if not body.get("stream"):
            self._send(200, _completion(number, reply))
            return
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()  # HTTP/1.0: the stream ends when the connection closes
        for data in _chunks(number, reply, include_usage):
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, state: LoopbackOpenAI) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


@contextmanager
def loopback_openai(replies: Sequence[Reply]) -> Iterator[LoopbackOpenAI]:
    """A server on a free loopback port, answering ``replies`` in order, for the block."""
    state = LoopbackOpenAI(list(replies))
    server = _Server(state)
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, name="loopback-openai", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
