"""Remote sub-agents against a real ``langgraph dev`` server on loopback.

The served graph (``tests/remote_graph/worker_graph.py``) runs on ``ScriptedChatModel``, so no
key and no network beyond loopback are needed. One server serves the whole module; the test
that kills a server mid-run starts its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import itertools
import json
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from remote_graph.serve import LANGGRAPH, Server, free_port

from nbagents import RemoteSubAgent, ScriptedChatModel, Tracer, create_deep_agent
from nbagents.models import delegate, parallel
from nbagents.subagents._remote import RemoteGraphRunnable
from nbagents.tracing import Span, Trace

pytestmark = pytest.mark.server  # starts a `langgraph dev` server

pytest.importorskip("langgraph_sdk")
if not Path(LANGGRAPH).exists():
    pytest.skip("langgraph-cli[inmem] is not installed (the test extra)", allow_module_level=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("langgraph-server"))
    yield running
    running.stop()


def remote(url: str, **extra: Any) -> RemoteSubAgent:
    spec: RemoteSubAgent = {
        "name": "worker",
        "description": "Works on a LangGraph server.",
        "url": url,
        "graph_id": "worker",
    }
    spec.update(extra)  # type: ignore[typeddict-item]
    return spec


def delegating(*jobs: str) -> ScriptedChatModel:
    """The main model: hands every job to the remote worker at once, then ends."""
    return ScriptedChatModel(
        script={"main": [parallel(*(delegate(j, "worker") for j in jobs)), "all done"]}
    )


async def run(agent: Any, mode: str, tracer: Tracer) -> dict[str, Any]:
    config = {"callbacks": [tracer]}
    payload = {"messages": [("user", "go")]}
    if mode == "ainvoke":
        return dict(await agent.ainvoke(payload, config))
    return dict(agent.invoke(payload, config))


def task_results(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def children(trace: Trace, span: Span) -> list[Span]:
    return [s for s in trace.spans if s.parent_id == span.id]


def visible_descendants(trace: Trace, span: Span) -> list[Span]:
    return [s for s in trace.descendants(span) if not s.hidden]


# The name of a remote model call's span: "steps" knows the step ("model"), "events" the class.
MODEL_SPAN = {"steps": "model", "events": "ScriptedChatModel"}


@pytest.mark.parametrize("detail", ["steps", "events"])
@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_twenty_parallel_remote_tasks_return_results_steps_and_tokens(
    server: Server, mode: str, detail: str
) -> None:
    jobs = [f"job {i} sleep=0.2" for i in range(20)]
    spec = remote(server.url) if detail == "steps" else remote(server.url, trace=detail)
    agent = create_deep_agent(delegating(*jobs), subagents=[spec])
    tracer = Tracer()

    result = await run(agent, mode, tracer)

    messages = task_results(result)
    assert sorted(m.text for m in messages) == sorted(f"worker says: worked on: {j}" for j in jobs)
    trace = tracer.trace
    tasks = [s for s in trace.spans if s.kind == "task"]
    assert len(tasks) == 20
    runs: set[str] = set()
    for message in messages:
        artifact = message.artifact
        assert artifact["status"] == "ok" and artifact["subagent"] == "worker"
        assert "messages" in artifact["state"]["withheld"]
        task = next(t for t in tasks if t.attributes["tool_call_id"] == message.tool_call_id)
        [sub] = children(trace, task)
        assert sub.kind == "subagent" and sub.name == "worker" and sub.status == "ok"
        info = sub.attributes["remote"]
        assert info["url"] == server.url and info["graph_id"] == "worker"
        assert info["steps"] == "streamed" and info["thread_id"] and info["run_id"]
        assert info["trace"] == detail
        runs.add(info["run_id"])
        steps = sorted(visible_descendants(trace, sub), key=lambda s: s.start)
        assert [(s.kind, s.name) for s in steps] == [
            ("model", MODEL_SPAN[detail]),
            ("tool", "work"),
            ("model", MODEL_SPAN[detail]),
        ]
        assert all(s.status == "ok" for s in steps)
        if detail == "steps":  # no LangChain plumbing between the agent's run and its calls
            assert all(s.parent_id == sub.id for s in steps)
        # One after the other, inside the sub-agent's run.
        assert sub.start <= steps[0].start
        assert all(a.end is not None and a.end <= b.start for a, b in itertools.pairwise(steps))
        assert steps[-1].end is not None and sub.end is not None and steps[-1].end <= sub.end
        assert steps[1].inputs == {"job": artifact["description"]}
        assert steps[1].outputs["content"] == f"worked on: {artifact['description']}"
        models = [s for s in steps if s.kind == "model"]
        # Only the task crosses the boundary: the main agent's conversation stays here.
        assert [(m["type"], m["content"]) for m in models[0].inputs] == [
            ("human", artifact["description"])
        ]
        assert all(s.model == "scripted-remote" for s in models)
        traced_total = sum(s.usage.total for s in models)
        assert traced_total > 0
        assert traced_total == artifact["tokens"]["total"]
        assert sum(s.usage.input for s in models) == artifact["tokens"]["input"]
    assert len(runs) == 20  # one server run per task


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_parallel_remote_tasks_share_one_client_and_make_one_request_each(
    server: Server, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A client per task cost a connection and a client set-up each, a thread per task one more
    # request: together half again the wall time of the same runs made with the SDK directly.
    made: list[str] = []
    requests: list[str] = []
    method = "_sync_client" if mode == "invoke" else "_async_client"
    build = getattr(RemoteGraphRunnable, method)

    def counted(self: RemoteGraphRunnable) -> Any:
        made.append(self.url)
        client = build(self)
        hooks = client.http.client.event_hooks
        note = (lambda r: requests.append(r.url.path)) if mode == "invoke" else None

        async def anote(request: Any) -> None:
            requests.append(request.url.path)

        hooks["request"] = [note if note is not None else anote]
        return client

    monkeypatch.setattr(RemoteGraphRunnable, method, counted)
    jobs = [f"job {i} sleep=0.3" for i in range(10)]
    agent = create_deep_agent(delegating(*jobs), subagents=[remote(server.url)])
    tracer = Tracer()
    result = await run(agent, mode, tracer)
    assert len(task_results(result)) == 10
    assert made == [server.url]
    assert len(requests) == 10 and all(p.endswith("/runs/stream") for p in requests)
    thread_id = next(s for s in tracer.trace.spans if s.kind == "subagent").attributes["remote"][
        "thread_id"
    ]
    with urllib.request.urlopen(f"{server.url}/threads/{thread_id}", timeout=10) as answer:
        thread = json.load(answer)
    assert thread["metadata"]["nbagents_subagent"] == "worker"


def test_unreachable_server_is_an_error_naming_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}"
    agent = create_deep_agent(delegating("job"), subagents=[remote(url, connect_timeout=2)])
    tracer = Tracer()

    [message] = task_results(asyncio.run(run(agent, "invoke", tracer)))

    assert message.status == "error"
    assert url in message.text and "cannot be reached" in message.text
    assert message.artifact["status"] == "error"
    [task] = [s for s in tracer.trace.spans if s.kind == "task"]
    assert task.status == "error" and url in (task.error or "")


class _Refusing(http.server.BaseHTTPRequestHandler):
    status = 401

    def do_POST(self) -> None:
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"detail": "Invalid API key"}')

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


@pytest.mark.parametrize("status", [401, 403])
async def test_rejected_credentials_say_so(status: int) -> None:
    handler = type("Refusing", (_Refusing,), {"status": status})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        agent = create_deep_agent(delegating("job"), subagents=[remote(url)])
        [message] = task_results(await run(agent, "ainvoke", Tracer()))
    finally:
        httpd.shutdown()
    assert message.status == "error"
    assert f"{url} refused the credentials (HTTP {status})" in message.text


def test_missing_api_key_variable_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NBAGENTS_TEST_REMOTE_KEY", raising=False)
    spec = remote("http://127.0.0.1:9", api_key_env="NBAGENTS_TEST_REMOTE_KEY")
    agent = create_deep_agent(delegating("job"), subagents=[spec])
    [message] = task_results(agent.invoke({"messages": [("user", "go")]}))
    assert message.status == "error"
    assert "'NBAGENTS_TEST_REMOTE_KEY'" in message.text and "is not set" in message.text


@pytest.mark.parametrize("variable", ["LANGGRAPH_API_KEY", "NBAGENTS_TEST_REMOTE_KEY"])
def test_a_changed_api_key_is_sent_by_the_next_client(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the SDK resolves is remembered per set of options; a new key is a new set.
    extra = {} if variable == "LANGGRAPH_API_KEY" else {"api_key_env": variable}
    runnable = RemoteGraphRunnable(remote("http://127.0.0.1:9", **extra))
    sent = []
    for key in ("first-key", "second-key", "first-key"):
        monkeypatch.setenv(variable, key)
        client = runnable._sync_client()
        sent.append(client.http.client.headers.get("x-api-key"))
        client.close()
    assert sent == ["first-key", "second-key", "first-key"]


def test_unknown_graph_is_an_error(server: Server) -> None:
    spec = remote(server.url, graph_id="no-such-graph")
    agent = create_deep_agent(delegating("job"), subagents=[spec])
    [message] = task_results(agent.invoke({"messages": [("user", "go")]}))
    assert message.status == "error"
    assert server.url in message.text and "'no-such-graph'" in message.text


def test_a_run_that_fails_on_the_server_is_an_error(server: Server) -> None:
    agent = create_deep_agent(delegating("explode now"), subagents=[remote(server.url)])
    tracer = Tracer()
    [message] = task_results(asyncio.run(run(agent, "invoke", tracer)))
    assert message.status == "error"
    assert server.url in message.text and "failed there" in message.text
    assert "cannot do 'explode now'" in message.text
    [sub] = [s for s in tracer.trace.spans if s.kind == "subagent"]
    assert sub.status == "error"
    assert all(s.status != "running" for s in tracer.trace.descendants(sub))


def run_status(url: str, thread_id: str, run_id: str) -> str:
    with urllib.request.urlopen(f"{url}/threads/{thread_id}/runs/{run_id}", timeout=5) as r:
        return str(json.loads(r.read())["status"])


def wait_for_status(url: str, thread_id: str, run_id: str, wanted: set[str]) -> str:
    status = ""
    for _ in range(100):
        status = run_status(url, thread_id, run_id)
        if status in wanted:
            break
        time.sleep(0.1)
    return status


def remote_ids(trace: Trace) -> tuple[str, str]:
    [sub] = [s for s in trace.spans if s.kind == "subagent"]
    return sub.attributes["remote"]["thread_id"], sub.attributes["remote"]["run_id"]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_slow_run_times_out_and_is_cancelled_on_the_server(server: Server, mode: str) -> None:
    agent = create_deep_agent(
        delegating("slow job sleep=60"), subagents=[remote(server.url, timeout=3)]
    )
    tracer = Tracer()

    [message] = task_results(await run(agent, mode, tracer))

    assert message.status == "error"
    assert server.url in message.text and "within timeout=3 s" in message.text
    assert "cancelled" in message.text
    thread_id, run_id = remote_ids(tracer.trace)
    assert wait_for_status(server.url, thread_id, run_id, {"interrupted"}) == "interrupted"
    # The steps that had started end with the run instead of staying open.
    [sub] = [s for s in tracer.trace.spans if s.kind == "subagent"]
    assert sub.status == "error"
    assert all(s.status != "running" for s in tracer.trace.descendants(sub))


async def test_cancelling_the_caller_cancels_the_remote_run(server: Server) -> None:
    agent = create_deep_agent(delegating("long job sleep=60"), subagents=[remote(server.url)])
    tracer = Tracer()
    running = asyncio.ensure_future(run(agent, "ainvoke", tracer))
    for _ in range(200):  # until the remote tool call is under way
        if any(s.name == "work" for s in tracer.trace.spans):
            break
        await asyncio.sleep(0.05)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running

    thread_id, run_id = remote_ids(tracer.trace)
    assert wait_for_status(server.url, thread_id, run_id, {"interrupted"}) == "interrupted"


def test_ctrl_c_in_a_sync_invoke_cancels_the_remote_run(
    server: Server, python_sigint: None
) -> None:
    import os
    import signal
    import threading

    agent = create_deep_agent(delegating("long job sleep=60"), subagents=[remote(server.url)])
    tracer = Tracer()

    def press_ctrl_c_once_the_remote_tool_runs() -> None:
        for _ in range(400):
            if any(s.name == "work" for s in tracer.trace.spans):
                break
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    threading.Thread(target=press_ctrl_c_once_the_remote_tool_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        agent.invoke({"messages": [("user", "go")]}, {"callbacks": [tracer]})
    thread_id, run_id = remote_ids(tracer.trace)
    # Not left to run for its 60 s (or the spec's timeout): cancelled on the server.
    assert wait_for_status(server.url, thread_id, run_id, {"interrupted"}) == "interrupted"


def test_server_killed_mid_run_is_an_error_not_a_hang(tmp_path: Path) -> None:
    doomed = Server(tmp_path)
    spec = remote(doomed.url, timeout=60)
    agent = create_deep_agent(delegating("job sleep=60"), subagents=[spec])
    tracer = Tracer()

    def kill_when_working() -> None:
        for _ in range(400):
            if any(s.name == "work" for s in tracer.trace.spans):
                break
            time.sleep(0.05)
        doomed.stop()

    killer = threading.Thread(target=kill_when_working)
    killer.start()
    try:
        [message] = task_results(asyncio.run(run(agent, "invoke", tracer)))
    finally:
        killer.join()
        doomed.stop()

    assert message.status == "error"
    # The broken connection ended the call, not the 60 s timeout.
    assert doomed.url in message.text and "connection broke" in message.text
    [sub] = [s for s in tracer.trace.spans if s.kind == "subagent"]
    assert sub.status == "error"
    assert all(s.status != "running" for s in tracer.trace.descendants(sub))


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"url": "localhost:2024"}, "must start with http"),
        ({"graph_id": ""}, "needs 'graph_id'"),
        ({"system_prompt": "x"}, "belong to a local SubAgent"),
        ({"timeout": 0}, "'timeout' must be a positive number"),
        ({"connect_retries": -1}, "'connect_retries' must be a whole number"),
        ({"connect_retries": 1.5}, "'connect_retries' must be a whole number"),
        ({"headers": {"x-api-key": 3}}, "'headers' must map"),
        ({"trace": "everything"}, "'trace' must be 'steps' or 'events'"),
    ],
)
def test_invalid_remote_specs_are_refused(change: dict[str, Any], problem: str) -> None:
    spec = {**remote("http://127.0.0.1:2024"), **change}
    with pytest.raises(ValueError, match=problem):
        create_deep_agent(ScriptedChatModel(), subagents=[spec])  # type: ignore[list-item]


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_a_server_that_is_not_running_is_reported_after_the_set_retries(mode: str) -> None:
    # Each retry waits longer (httpx's backoff): with none, a refused connection is reported
    # at once; with two (the default) it is tried again twice, where the SDK's own client
    # tries five more times over 7.5 s.
    url = f"http://127.0.0.1:{free_port()}"
    tried: dict[int, int] = {}
    for retries in (0, 2):
        agent = create_deep_agent(
            delegating("job"), subagents=[remote(url, connect_retries=retries)]
        )
        with _connects_to(url) as attempts:
            [message] = task_results(asyncio.run(run(agent, mode, Tracer())))
        assert "cannot be reached" in message.text
        tried[retries] = len(attempts)
    assert tried == {0: 1, 2: 3}


@contextlib.contextmanager
def _connects_to(url: str) -> Iterator[list[object]]:
    """Every attempt to open a connection to ``url`` while the block runs."""
    port = int(url.rsplit(":", 1)[1])
    attempts: list[object] = []
    real = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[1] == port:
            attempts.append(address)
        real(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]
    try:
        yield attempts
    finally:
        socket.socket.connect = real  # type: ignore[method-assign]
