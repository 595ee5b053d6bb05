"""Background remote sub-agents: launch a task on a LangGraph server and keep working.

A ``RemoteSubAgent`` with ``"background": True`` does not run through ``task``: the agent gets
upstream deepagents' five async sub-agent tools instead (``start_async_task``,
``check_async_task``, ``update_async_task``, ``cancel_async_task``, ``list_async_tasks``). Before
each model call the middleware asks the servers about the tasks still running and announces
those that finished in a user message (a ``background_tasks_finished`` step in the trace), so
the agent need not poll. Tasks live in the agent state (``background_tasks``, merged by task
id); every failure of a server is an error ToolMessage naming the server and the cause.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import Annotated, Any, NotRequired

from langchain.agents import AgentState
from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from nbagents._runtime_tools import runtime_tool
from nbagents.backends.prompts import PromptSection
from nbagents.subagents._background_tasks import (
    DONE,
    WAITING,
    BackgroundTask,
    Refused,
    cancel_runs,
    client_of,
    settled,
    waiting_text,
)
from nbagents.subagents._remote import RemoteGraphRunnable
from nbagents.subagents._specs import RemoteSubAgent, validate_specs

__all__ = [
    "BACKGROUND_TASKS_KEY",
    "BackgroundState",
    "BackgroundSubAgentMiddleware",
    "BackgroundTask",
]

BACKGROUND_TASKS_KEY = "background_tasks"
NOTICE_RESULT_CHARS = 2_000
"""How much of a finished task's result its notice quotes; ``check_async_task`` gives it all."""
NOTICE_TOOL = "background_tasks_finished"


def _merge(
    left: Mapping[str, BackgroundTask] | None, right: Mapping[str, BackgroundTask] | None
) -> dict[str, BackgroundTask]:
    return {**(left or {}), **(right or {})}


class BackgroundState(AgentState[Any]):
    background_tasks: NotRequired[Annotated[dict[str, BackgroundTask], _merge]]


class BackgroundSubAgentMiddleware(PromptSection, AgentMiddleware[BackgroundState, Any]):
    """The five background-task tools for ``RemoteSubAgent`` specs marked ``background``."""

    state_schema = BackgroundState

    def __init__(
        self,
        subagents: Sequence[RemoteSubAgent] = (),
        *,
        async_subagents: Sequence[RemoteSubAgent] | None = None,
        system_prompt: str | None = None,
    ) -> None:
        """``subagents`` (or ``async_subagents=``, upstream ``AsyncSubAgentMiddleware``'s name)
        are ``RemoteSubAgent`` specs, run in the background whether or not they say
        ``"background": True``. ``system_prompt``, as upstream's, is appended to the agent's
        system prompt followed by the list of these sub-agents; by default nothing is (the
        ``start_async_task`` description lists them)."""
        super().__init__()
        if async_subagents is not None:
            if subagents:
                raise TypeError(
                    "BackgroundSubAgentMiddleware: pass the specs once, as subagents or as "
                    "async_subagents (upstream deepagents' name), not both."
                )
            subagents = async_subagents
        specs = list(subagents)
        if not specs:
            raise ValueError(
                "At least one async subagent must be specified: BackgroundSubAgentMiddleware "
                "needs a RemoteSubAgent."
            )
        names = [spec.get("name") for spec in specs if isinstance(spec, Mapping)]
        duplicates = sorted({str(n) for n in names if n and names.count(n) > 1})
        if duplicates:
            raise ValueError(
                f"Duplicate async subagent names: {duplicates}; every sub-agent needs its own."
            )
        validate_specs(specs, background=True)
        for spec in specs:
            if "graph_id" not in spec:
                raise ValueError(
                    f"Sub-agent {spec['name']!r}: only a RemoteSubAgent (url and graph_id) can "
                    f"run in the background."
                )
        self._servers = {s["name"]: RemoteGraphRunnable(s) for s in specs}
        listing = "\n".join(f"- {s['name']}: {s['description']}" for s in specs)
        self.tools = _tools(self._servers, listing)
        self.system_prompt: str | None = (
            f"{system_prompt}\n\nAvailable async subagent types:\n\n{listing}"
            if system_prompt
            else system_prompt
        )
        """The section appended to the agent's system prompt, if any."""

    def before_model(self, state: BackgroundState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Tell the agent which of its tasks finished since its last model call."""
        update = _announced(self._checked(state))
        if update is not None:
            _notice.invoke({"notice": update["messages"][0].content}, get_config())
        return update

    async def abefore_model(
        self, state: BackgroundState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """``before_model``, asking the servers on a worker thread."""
        update = _announced(await asyncio.to_thread(self._checked, state))
        if update is not None:
            await _notice.ainvoke({"notice": update["messages"][0].content}, get_config())
        return update

    def _checked(self, state: Mapping[str, Any]) -> list[tuple[BackgroundTask, str | None]]:
        """The fresh statuses (and results) of the tasks still running."""
        checked = []
        for task in (state.get(BACKGROUND_TASKS_KEY) or {}).values():
            if task["status"] in DONE or task["subagent"] not in self._servers:
                continue
            # An unreachable server is not the agent's business here: check_async_task will
            # name it when the agent asks.
            with suppress(Refused), client_of(self._servers[task["subagent"]]) as client:
                checked.append(settled(client, task))
        return checked


_Answer = tuple[str, Sequence[BackgroundTask]]
"""What a background-task tool answers, and the tasks whose records it changed."""


def _tools(servers: Mapping[str, RemoteGraphRunnable], listing: str) -> list[BaseTool]:
    def tasks_of(runtime: ToolRuntime) -> dict[str, BackgroundTask]:
        return dict((runtime.state or {}).get(BACKGROUND_TASKS_KEY) or {})

    def known(runtime: ToolRuntime, task_id: str) -> tuple[BackgroundTask, RemoteGraphRunnable]:
        tasks = tasks_of(runtime)
        task = tasks.get(task_id)
        if task is None:
            ids = ", ".join(sorted(tasks)) or "none yet"
            raise Refused(f"Unknown task id {task_id!r}. Tasks launched so far: {ids}.")
        return task, servers[task["subagent"]]

    def guarded(body: Callable[..., _Answer]) -> Callable[..., Command[Any] | ToolMessage]:
        """The tool of ``body``, which says what to answer and the tasks it changed: a
        :class:`Refused` it raises is answered as an error."""

        @functools.wraps(body)  # the tool's schema is read from the body's signature
        def run(**kwargs: Any) -> Command[Any] | ToolMessage:
            call_id = kwargs["runtime"].tool_call_id or ""
            try:
                text, changed = body(**kwargs)
            except Refused as error:
                return ToolMessage(content=str(error), tool_call_id=call_id, status="error")
            update: dict[str, Any] = {"messages": [ToolMessage(content=text, tool_call_id=call_id)]}
            if changed:
                update[BACKGROUND_TASKS_KEY] = {t["task_id"]: t for t in changed}
            return Command(update=update)

        return run

    @guarded
    def start_async_task(
        description: Annotated[str, "A complete brief: the sub-agent sees only this."],
        subagent_type: Annotated[str, "Which background sub-agent runs it."],
        runtime: ToolRuntime,
    ) -> _Answer:
        server = servers.get(subagent_type)
        if server is None:
            raise Refused(
                f"Unknown subagent_type {subagent_type!r} for a background task. "
                f"Allowed: {', '.join(repr(n) for n in servers)}."
            )
        with client_of(server) as client:
            thread = client.threads.create(metadata={"nbagents_subagent": subagent_type})
            task_id = str(thread["thread_id"])
            run = client.runs.create(
                task_id,
                server.graph_id,
                input={"messages": [{"role": "user", "content": description}]},
            )
        task = BackgroundTask(
            task_id=task_id,
            subagent=subagent_type,
            description=description,
            run_id=str(run["run_id"]),
            status=str(run.get("status") or "pending"),
        )
        return (
            f"Started background task {task_id} ({subagent_type}). It runs on its own; "
            f"check it later with check_async_task.",
            [task],
        )

    @guarded
    def check_async_task(
        task_id: Annotated[str, "The id start_async_task returned."], runtime: ToolRuntime
    ) -> _Answer:
        task, server = known(runtime, task_id)
        with client_of(server) as client:
            task, result = settled(client, task)
        if task["status"] == WAITING:
            text = waiting_text(task, result)
        elif result is not None:
            text = f"Task {task_id} ({task['subagent']}) succeeded. Result:\n{result}"
        elif task["status"] in DONE:
            text = f"Task {task_id} ({task['subagent']}) ended: {task['status']}."
        else:
            text = f"Task {task_id} ({task['subagent']}) is still {task['status']}."
        return text, [task]

    @guarded
    def update_async_task(
        task_id: Annotated[str, "The id start_async_task returned."],
        message: Annotated[str, "The follow-up instruction."],
        runtime: ToolRuntime,
    ) -> _Answer:
        task, server = known(runtime, task_id)
        queued = server.update_strategy == "enqueue" and task["status"] not in DONE
        with client_of(server) as client:
            run = client.runs.create(
                task_id,
                server.graph_id,
                input={"messages": [{"role": "user", "content": message}]},
                multitask_strategy=server.update_strategy,
            )
        # The task follows its newest run: with enqueue it is pending until the run ahead ends.
        task = BackgroundTask(
            **{**task, "run_id": str(run["run_id"]), "status": str(run.get("status") or "pending")}
        )
        text = (
            f"Queued the follow-up to task {task_id} behind its current run, which goes on; "
            f"the follow-up starts when that run ends."
            if queued
            else f"Sent the follow-up to task {task_id}; it runs again in the background."
        )
        return text, [task]

    @guarded
    def cancel_async_task(
        task_id: Annotated[str, "The id start_async_task returned."], runtime: ToolRuntime
    ) -> _Answer:
        task, server = known(runtime, task_id)
        with client_of(server) as client:
            task, _ = settled(client, task)
            if task["status"] not in DONE:
                if cancel_runs(client, task_id):
                    task = BackgroundTask(**{**task, "status": "cancelled"})
                else:  # it ended on its own meanwhile
                    task, _ = settled(client, task)
        return f"Task {task_id} ({task['subagent']}): {task['status']}.", [task]

    @guarded
    def list_async_tasks(runtime: ToolRuntime) -> _Answer:
        tasks = tasks_of(runtime)
        if not tasks:
            return "No background tasks yet.", []
        fresh = []
        for task in tasks.values():
            with client_of(servers[task["subagent"]]) as client:
                fresh.append(settled(client, task, result=False)[0])
        lines = [
            f"- {t['task_id']} · {t['subagent']} · {t['status']} · {t['description'][:80]}"
            for t in fresh
        ]
        return "Background tasks:\n" + "\n".join(lines), fresh

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
            description=(
                "Whether a background task is done, and its result when it is. A status seen "
                "earlier in the conversation may be stale: call this for the current one."
            ),
        ),
        runtime_tool(update_async_task, description=_update_description(servers)),
        runtime_tool(cancel_async_task, description="Cancel a background task that is running."),
        runtime_tool(
            list_async_tasks,
            description=(
                "List the background tasks started so far, with their current statuses (a "
                "status seen earlier in the conversation may be stale)."
            ),
        ),
    ]


def _update_description(servers: Mapping[str, RemoteGraphRunnable]) -> str:
    """What a follow-up does, per sub-agent: the model decides whether to send one now."""
    queued = [name for name, server in servers.items() if server.update_strategy == "enqueue"]
    head = "Send a background task a follow-up instruction on its own thread."
    interrupts = "A task still running is interrupted and starts on the follow-up at once"
    if not queued:
        return f"{head} {interrupts}."
    if len(queued) == len(servers):
        return f"{head} A task still running finishes its current job first; the follow-up waits."
    names = ", ".join(queued)
    return f"{head} {interrupts}, except on {names}: there it waits for the current job to end."


def _announced(checked: Sequence[tuple[BackgroundTask, str | None]]) -> dict[str, Any] | None:
    """The state update that tells the agent about the tasks among ``checked`` that ended."""
    finished = [(task, result) for task, result in checked if task["status"] in DONE]
    lines = []
    for task, result in finished:
        if task["status"] == WAITING:
            lines.append(f"Background task: {waiting_text(task, result)}")
            continue
        head = f"Background task {task['task_id']} ({task['subagent']}) finished: {task['status']}."
        if result is not None and len(result) > NOTICE_RESULT_CHARS:
            result = result[:NOTICE_RESULT_CHARS] + "… (cut; check_async_task gives it whole)"
        lines.append(head if result is None else f"{head} Result:\n{result}")
    if not lines:
        return None
    return {
        "messages": [HumanMessage(content="\n\n".join(lines), name=NOTICE_TOOL)],
        BACKGROUND_TASKS_KEY: {task["task_id"]: task for task, _ in finished},
    }


@tool(NOTICE_TOOL, description="Background tasks that finished since the agent's last model call.")
def _notice(notice: str) -> str:
    """The notice given to the agent (a step of its own in the trace, so the tree shows when
    the agent was told)."""
    return notice
