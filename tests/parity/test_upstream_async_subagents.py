# Ported from deepagents (MIT), libs/deepagents/tests/unit_tests/test_async_subagents.py: public behaviour
# only, imports changed to nbagents names. Changes beyond imports are marked 'nbagents:'.
# Upstream's AsyncSubAgent, AsyncSubAgentMiddleware and AsyncSubAgentState are nbagents' RemoteSubAgent,
# BackgroundSubAgentMiddleware and BackgroundState (imported under upstream's names), and upstream's
# private _build_async_subagent_tools(specs) is read as AsyncSubAgentMiddleware(async_subagents=specs).tools.
# Left out:
#   TestResolveHeaders: calls the private _resolve_headers (nbagents sends a spec's headers as given, api_key_env as x-api-key)
#   TestTasksReducer: calls the private _tasks_reducer (nbagents merges background_tasks by task id, tested in tests/test_subagents_remote_background.py)
#   TestLaunchTool.test_launch_returns_command_with_task: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestCheckTool: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestUpdateTool: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestListTasksTool.test_returns_live_statuses: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestListTasksTool.test_skips_sdk_call_for_terminal_statuses: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestListTasksTool.test_status_filter_running: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestAsyncTools: patches upstream's module-level get_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestCancelTool.test_cancel_returns_command_with_cancelled_status: patches upstream's module-level get_sync_client and reads upstream's async_tasks records (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestCancelTool.test_cancel_sdk_error_returns_error_string: patches upstream's module-level get_sync_client (nbagents: server failures are tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestLaunchErrorHandling: patches upstream's module-level get_sync_client (nbagents: server failures are tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   TestCheckEdgeCases: patches upstream's module-level get_sync_client (nbagents: tested against a real langgraph dev in tests/test_subagents_remote_background.py)
#   _make_runtime_with_task: a helper of the tests above, building upstream's async_tasks records
#   _async_return: a helper of the tests above
"""Tests for async subagent middleware functionality."""

from typing import Any, TypeVar

import pytest
from langchain.tools import ToolRuntime

from nbagents import BackgroundSubAgentMiddleware as AsyncSubAgentMiddleware
from nbagents import RemoteSubAgent as AsyncSubAgent
from nbagents.subagents._background import BackgroundState as AsyncSubAgentState


def _make_spec(name: str = "test-agent", **overrides: Any) -> AsyncSubAgent:
    base: dict[str, Any] = {
        "name": name,
        "description": f"A test agent named {name}",
        "url": "http://localhost:8123",
        "graph_id": "my_graph",
    }
    base.update(overrides)
    return AsyncSubAgent(**base)  # type: ignore[typeddict-item]


def _make_runtime(tool_call_id: str = "tc_test") -> ToolRuntime:
    return ToolRuntime(
        state={},
        context=None,
        tool_call_id=tool_call_id,
        store=None,
        stream_writer=lambda _: None,
        config={},
    )


def _get_tool(tools: list, name: str) -> Any:
    """Look up a tool by name from the built tools list."""
    for t in tools:
        if t.name == name:
            return t
    msg = f"Tool {name!r} not found"
    raise KeyError(msg)


class TestAsyncSubAgentMiddleware:
    def test_init_requires_at_least_one_agent(self) -> None:
        with pytest.raises(ValueError, match="At least one async subagent"):
            AsyncSubAgentMiddleware(async_subagents=[])

    def test_init_creates_five_tools(self) -> None:
        mw = AsyncSubAgentMiddleware(async_subagents=[_make_spec()])
        tool_names = {t.name for t in mw.tools}
        assert tool_names == {
            "start_async_task",
            "check_async_task",
            "update_async_task",
            "cancel_async_task",
            "list_async_tasks",
        }

    def test_system_prompt_includes_agent_descriptions(self) -> None:
        # The default is lean (no system prompt); when a prompt is supplied, the
        # available agent descriptions are appended to it.
        mw = AsyncSubAgentMiddleware(
            async_subagents=[
                _make_spec("alpha", description="Alpha agent"),
                _make_spec("beta", description="Beta agent"),
            ],
            system_prompt="Async subagent guidance.",
        )
        assert "alpha" in mw.system_prompt
        assert "beta" in mw.system_prompt
        assert "Alpha agent" in mw.system_prompt
        assert "Beta agent" in mw.system_prompt

    def test_system_prompt_can_be_disabled(self) -> None:
        mw = AsyncSubAgentMiddleware(async_subagents=[_make_spec()], system_prompt=None)
        assert mw.system_prompt is None

    def test_init_rejects_duplicate_names(self) -> None:
        with pytest.raises(ValueError, match="Duplicate async subagent names"):
            AsyncSubAgentMiddleware(async_subagents=[_make_spec("alpha"), _make_spec("alpha")])

    def test_state_schema_is_set(self) -> None:
        assert AsyncSubAgentMiddleware.state_schema is AsyncSubAgentState


class TestBuildAsyncSubagentTools:
    def test_returns_five_tools(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        assert len(tools) == 5
        names = [t.name for t in tools]
        assert names == [
            "start_async_task",
            "check_async_task",
            "update_async_task",
            "cancel_async_task",
            "list_async_tasks",
        ]

    def test_launch_description_includes_agent_info(self) -> None:
        tools = AsyncSubAgentMiddleware(
            async_subagents=[_make_spec("researcher", description="Research agent")]
        ).tools
        launch_tool = tools[0]
        assert "researcher" in launch_tool.description
        assert "Research agent" in launch_tool.description


class TestLaunchTool:
    @pytest.mark.xfail(
        strict=True,
        reason="nbagents: a refused call (unknown sub-agent type or task id) is an error ToolMessage in nbagents' words, not a plain string",
    )
    def test_launch_invalid_type_returns_error_string(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec("alpha")]).tools
        launch = tools[0]
        result = launch.func(
            description="do something",
            subagent_type="nonexistent",
            runtime=_make_runtime(),
        )
        assert isinstance(result, str)
        assert "Unknown async subagent type" in result
        assert "`alpha`" in result


class TestListTasksTool:
    @pytest.mark.xfail(
        strict=True,
        reason='nbagents: list_async_tasks answers with a Command carrying its ToolMessage ("No background tasks yet."), not a plain string',
    )
    def test_empty_state_returns_no_tasks(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        list_tool = tools[4]
        rt = _make_runtime()
        result = list_tool.func(runtime=rt)
        assert "No async subagent tasks tracked" in result

    @pytest.mark.xfail(
        strict=True,
        reason="nbagents: the background tools are synchronous (no coroutine): under ainvoke LangChain runs them on a thread",
    )
    async def test_async_list_returns_no_tasks(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        list_tool = tools[4]
        rt = _make_runtime()
        result = await list_tool.coroutine(runtime=rt)
        assert "No async subagent tasks tracked" in result


_T = TypeVar("_T")


class TestCancelTool:
    @pytest.mark.xfail(
        strict=True,
        reason="nbagents: a refused call (unknown sub-agent type or task id) is an error ToolMessage in nbagents' words, not a plain string",
    )
    def test_cancel_unknown_task_returns_error(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        cancel = _get_tool(tools, "cancel_async_task")
        rt = _make_runtime("tc_cancel")
        result = cancel.func(task_id="nonexistent", runtime=rt)
        assert isinstance(result, str)
        assert "No tracked task found" in result


class TestUnknownTaskId:
    """Tests that check/update/cancel return error strings for unknown task IDs."""

    @pytest.mark.xfail(
        strict=True,
        reason="nbagents: a refused call (unknown sub-agent type or task id) is an error ToolMessage in nbagents' words, not a plain string",
    )
    def test_check_unknown_task_returns_error(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        check = _get_tool(tools, "check_async_task")
        rt = _make_runtime()
        result = check.func(task_id="nonexistent", runtime=rt)
        assert isinstance(result, str)
        assert "No tracked task found" in result

    @pytest.mark.xfail(
        strict=True,
        reason="nbagents: a refused call (unknown sub-agent type or task id) is an error ToolMessage in nbagents' words, not a plain string",
    )
    def test_update_unknown_task_returns_error(self) -> None:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        update = _get_tool(tools, "update_async_task")
        rt = _make_runtime()
        result = update.func(task_id="nonexistent", message="hello", runtime=rt)
        assert isinstance(result, str)
        assert "No tracked task found" in result


class TestStaleStatusGuidanceInToolDescriptions:
    """The stale-status rule lives in the async status tool descriptions.

    It used to be in the (now-trimmed) async system prompt, so it is migrated
    into the always-visible `check_async_task` / `list_async_tasks` descriptions.
    """

    def _descriptions(self) -> dict[str, str]:
        tools = AsyncSubAgentMiddleware(async_subagents=[_make_spec()]).tools
        return {t.name: (t.description or "") for t in tools}

    def test_check_async_task_warns_statuses_are_stale(self) -> None:
        assert "stale" in self._descriptions()["check_async_task"].lower()

    def test_list_async_tasks_warns_statuses_are_stale(self) -> None:
        assert "stale" in self._descriptions()["list_async_tasks"].lower()
