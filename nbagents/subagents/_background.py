"""Background remote sub-agents: launch a task on a LangGraph server and keep working.

A ``RemoteSubAgent`` spec with ``"background": True`` is not run through ``task`` (which waits
for the result). Instead :class:`BackgroundSubAgentMiddleware` gives the agent five tools, named
as upstream deepagents' async sub-agent tools are:

- ``start_async_task(description, subagent_type)`` creates a thread on the server, starts a run
  with the description as its only message and returns at once with the task id;
- ``check_async_task(task_id)`` says whether it is still running, and its result when done;
- ``update_async_task(task_id, message)`` sends a follow-up on the same thread (a running run is
  interrupted and replaced, so the sub-agent sees the follow-up at once);
- ``cancel_async_task(task_id)`` cancels its run;
- ``list_async_tasks()`` lists every task this agent launched, with fresh statuses.

Tasks live in the agent state (``background_tasks``, merged by task id), so they survive across
turns and checkpoints; sub-agents never receive that key. Every failure of the server (down,
refusing credentials, unknown graph) is an error ToolMessage naming the server and the cause.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Annotated, Any, NotRequired, TypedDict, cast

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langgraph.types import Command

from nbagents._runtime_tools import runtime_tool
from nbagents.subagents._remote import RemoteGraphRunnable
from nbagents.subagents._specs import RemoteSubAgent, validate_specs

__all__ = [
    "BACKGROUND_TASKS_KEY",
    "BackgroundState",
    "BackgroundSubAgentMiddleware",
    "BackgroundTask",
]

BACKGROUND_TASKS_KEY = "background_tasks"
DONE = frozenset({"success", "error", "timeout", "interrupted", "cancelled"})
RESULT_CHARS = 20_000


class BackgroundTask(TypedDict):
    """One task launched in the background, as the agent state keeps it."""

    task_id: str
    """The server's thread id: each task has a thread of its own."""
    subagent: str
    description: str
    run_id: str
    """The latest run on the thread (a follow-up starts a new one)."""
    status: str
    """``pending``/``running`` until the run ends, then ``success``, ``error``, ``timeout``,
    ``interrupted`` or ``cancelled``."""


def _merge(
    left: Mapping[str, BackgroundTask] | None, right: Mapping[str, BackgroundTask] | None
) -> dict[str, BackgroundTask]:
    return {**(left or {}), **(right or {})}


class BackgroundState(AgentState[Any]):
    background_tasks: NotRequired[Annotated[dict[str, BackgroundTask], _merge]]


class BackgroundSubAgentMiddleware(AgentMiddleware[BackgroundState, Any]):
    """The five background-task tools for ``RemoteSubAgent`` specs marked ``background``."""

    state_schema = BackgroundState

    def __init__(self, subagents: Sequence[RemoteSubAgent]) -> None:
        super().__init__()
        specs = list(subagents)
        validate_specs(specs)
        if not specs:
            raise ValueError("BackgroundSubAgentMiddleware needs at least one RemoteSubAgent.")
        for spec in specs:
            if "graph_id" not in spec:
                raise ValueError(
                    f"Sub-agent {spec['name']!r}: only a RemoteSubAgent (url and graph_id) can "
                    f"run in the background."
                )
        self._servers = {s["name"]: _Server(RemoteGraphRunnable(s)) for s in specs}
        listing = "\n".join(f"- {s['name']}: {s['description']}" for s in specs)
        self.tools = _tools(self._servers, listing)


@dataclass
class _Server:
    runner: RemoteGraphRunnable

    def explain(self, error: BaseException) -> str:
        class _NoRun:
            run_id = ""

        return str(self.runner._explain(error, cast(Any, _NoRun())))


class _Refused(Exception):
    """A call the tool answers with an error message (unknown id or sub-agent, server error)."""


def _tools(servers: Mapping[str, _Server], listing: str) -> list[BaseTool]:
    def tasks_of(runtime: ToolRuntime) -> dict[str, BackgroundTask]:
        return dict((runtime.state or {}).get(BACKGROUND_TASKS_KEY) or {})

    def known(runtime: ToolRuntime, task_id: str) -> tuple[BackgroundTask, _Server]:
        tasks = tasks_of(runtime)
        task = tasks.get(task_id)
        if task is None:
            ids = ", ".join(sorted(tasks)) or "none yet"
            raise _Refused(f"Unknown task id {task_id!r}. Tasks launched so far: {ids}.")
        return task, servers[task["subagent"]]

    def answer(
        runtime: ToolRuntime, text: str, changed: Sequence[BackgroundTask] = ()
    ) -> Command[Any]:
        message = ToolMessage(content=text, tool_call_id=runtime.tool_call_id or "")
        update: dict[str, Any] = {"messages": [message]}
        if changed:
            update[BACKGROUND_TASKS_KEY] = {t["task_id"]: t for t in changed}
        return Command(update=update)

    def refused(runtime: ToolRuntime, text: str) -> ToolMessage:
        return ToolMessage(content=text, tool_call_id=runtime.tool_call_id or "", status="error")

    def guarded(body: Callable[..., Command[Any]]) -> Callable[..., Command[Any] | ToolMessage]:
        def run(runtime: ToolRuntime, *args: Any) -> Command[Any] | ToolMessage:
            try:
                return body(runtime, *args)
            except _Refused as error:
                return refused(runtime, str(error))

        return run

    def start(runtime: ToolRuntime, description: str, subagent_type: str) -> Command[Any]:
        server = servers.get(subagent_type)
        if server is None:
            raise _Refused(
                f"Unknown subagent_type {subagent_type!r} for a background task. "
                f"Allowed: {', '.join(repr(n) for n in servers)}."
            )
        with _client(server) as client:
            thread = client.threads.create(metadata={"nbagents_subagent": subagent_type})
            task_id = str(thread["thread_id"])
            run = client.runs.create(
                task_id,
                server.runner.graph_id,
                input={"messages": [{"role": "user", "content": description}]},
            )
        task = BackgroundTask(
            task_id=task_id,
            subagent=subagent_type,
            description=description,
            run_id=str(run["run_id"]),
            status=str(run.get("status") or "pending"),
        )
        return answer(
            runtime,
            f"Started background task {task_id} ({subagent_type}). It runs on its own; "
            f"check it later with check_async_task.",
            [task],
        )

    def check(runtime: ToolRuntime, task_id: str) -> Command[Any]:
        task, server = known(runtime, task_id)
        with _client(server) as client:
            task = _refreshed(client, task)
            result = _result(client, task) if task["status"] == "success" else None
        if result is not None:
            text = f"Task {task_id} ({task['subagent']}) succeeded. Result:\n{result}"
        elif task["status"] in DONE:
            text = f"Task {task_id} ({task['subagent']}) ended: {task['status']}."
        else:
            text = f"Task {task_id} ({task['subagent']}) is still {task['status']}."
        return answer(runtime, text, [task])

    def update(runtime: ToolRuntime, task_id: str, message: str) -> Command[Any]:
        task, server = known(runtime, task_id)
        with _client(server) as client:
            run = client.runs.create(
                task_id,
                server.runner.graph_id,
                input={"messages": [{"role": "user", "content": message}]},
                multitask_strategy="interrupt",
            )
        task = BackgroundTask(
            **{**task, "run_id": str(run["run_id"]), "status": str(run.get("status") or "pending")}
        )
        return answer(
            runtime,
            f"Sent the follow-up to task {task_id}; it runs again in the background.",
            [task],
        )

    def cancel(runtime: ToolRuntime, task_id: str) -> Command[Any]:
        task, server = known(runtime, task_id)
        with _client(server) as client:
            task = _refreshed(client, task)
            if task["status"] not in DONE:
                client.runs.cancel(task_id, task["run_id"], wait=True)
                task = BackgroundTask(**{**task, "status": "cancelled"})
        return answer(runtime, f"Task {task_id} ({task['subagent']}): {task['status']}.", [task])

    def listed(runtime: ToolRuntime) -> Command[Any]:
        tasks = tasks_of(runtime)
        if not tasks:
            return answer(runtime, "No background tasks yet.")
        fresh = []
        for task in tasks.values():
            with _client(servers[task["subagent"]]) as client:
                fresh.append(_refreshed(client, task))
        lines = [
            f"- {t['task_id']} · {t['subagent']} · {t['status']} · {t['description'][:80]}"
            for t in fresh
        ]
        return answer(runtime, "Background tasks:\n" + "\n".join(lines), fresh)

    def start_async_task(
        description: Annotated[str, "A complete brief: the sub-agent sees only this."],
        subagent_type: Annotated[str, "Which background sub-agent runs it."],
        runtime: ToolRuntime,
    ) -> Command[Any] | ToolMessage:
        return guarded(start)(runtime, description, subagent_type)

    def check_async_task(
        task_id: Annotated[str, "The id start_async_task returned."], runtime: ToolRuntime
    ) -> Command[Any] | ToolMessage:
        return guarded(check)(runtime, task_id)

    def update_async_task(
        task_id: Annotated[str, "The id start_async_task returned."],
        message: Annotated[str, "The follow-up instruction."],
        runtime: ToolRuntime,
    ) -> Command[Any] | ToolMessage:
        return guarded(update)(runtime, task_id, message)

    def cancel_async_task(
        task_id: Annotated[str, "The id start_async_task returned."], runtime: ToolRuntime
    ) -> Command[Any] | ToolMessage:
        return guarded(cancel)(runtime, task_id)

    def list_async_tasks(runtime: ToolRuntime) -> Command[Any] | ToolMessage:
        return guarded(listed)(runtime)

    return [
        runtime_tool(
            start_async_task,
            description=(
                "Start a job on a background sub-agent and return at once with its task id; "
                "keep working and check it later. Background sub-agents:\n" + listing
            ),
        ),
        runtime_tool(
            check_async_task,
            description="Whether a background task is done, and its result when it is.",
        ),
        runtime_tool(
            update_async_task,
            description="Send a background task a follow-up instruction on its own thread.",
        ),
        runtime_tool(cancel_async_task, description="Cancel a background task that is running."),
        runtime_tool(
            list_async_tasks,
            description="List the background tasks started so far, with their statuses.",
        ),
    ]


@contextmanager
def _client(server: _Server) -> Iterator[Any]:
    """A client of the task's server; any failure of it becomes an error naming the server."""
    try:
        client = server.runner._sync_client()
    except Exception as error:
        raise _Refused(server.explain(error)) from error
    try:
        yield client
    except _Refused:
        raise
    except Exception as error:
        raise _Refused(server.explain(error)) from error
    finally:
        with suppress(Exception):
            client.close()


def _refreshed(client: Any, task: BackgroundTask) -> BackgroundTask:
    if task["status"] in DONE:
        return task
    run = client.runs.get(task["task_id"], task["run_id"])
    return BackgroundTask(**{**task, "status": str(run.get("status") or task["status"])})


def _result(client: Any, task: BackgroundTask) -> str:
    """The last message of the task's thread: what the sub-agent answered."""
    values = client.threads.get_state(task["task_id"]).get("values") or {}
    messages = values.get("messages") if isinstance(values, Mapping) else None
    if not messages:
        return "(no messages)"
    last = messages[-1]
    content = last.get("content") if isinstance(last, Mapping) else last
    if isinstance(content, list):
        content = "".join(
            str(b.get("text", "")) if isinstance(b, Mapping) else str(b) for b in content
        )
    text = str(content)
    return text if len(text) <= RESULT_CHARS else text[:RESULT_CHARS] + "…"
