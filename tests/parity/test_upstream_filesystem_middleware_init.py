# Ported from deepagents (MIT), libs/deepagents/tests/unit_tests/middleware/test_filesystem_middleware_init.py: public behaviour
# only, imports changed to nbagents names. Changes beyond imports are marked 'nbagents:'.
"""Unit tests for FilesystemMiddleware initialization and configuration."""

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import AgentState
from langgraph.store.memory import InMemoryStore

from nbagents.backends import (
    GREP_TOOL_DESCRIPTION,
    READ_FILE_TOOL_DESCRIPTION,
    WRITE_FILE_TOOL_DESCRIPTION,
    CompositeBackend,
    FilesystemMiddleware,
    FilesystemState,
    StateBackend,
    StoreBackend,
)


def build_composite_state_backend(*, routes: dict[str, Any]) -> CompositeBackend:
    return CompositeBackend(default=StateBackend(), routes=routes)


class TestLargeToolResultGuidanceInToolDescriptions:
    """Large-tool-result offload guidance lives in the tool descriptions.

    It used to be in the (now-trimmed) filesystem system prompt, so it is
    migrated into the always-visible `read_file` / `grep` descriptions.
    """

    def test_read_file_describes_offloaded_results(self) -> None:
        # read_file points at the exact path from the tool message (no hardcoded
        # directory, which would be wrong for a non-root artifacts root).
        assert "offloaded" in READ_FILE_TOOL_DESCRIPTION.lower()

    def test_grep_describes_searching_offloaded_results(self) -> None:
        assert "large_tool_results/" in GREP_TOOL_DESCRIPTION
        # Must not imply the root-only path; it is under the artifacts root.
        assert "artifacts root" in GREP_TOOL_DESCRIPTION


class TestFilesystemMiddlewareInit:
    """Tests for FilesystemMiddleware initialization that don't require LLM invocation."""

    def test_state_backend_adds_files_state(self) -> None:
        middleware = FilesystemMiddleware(backend=StateBackend())
        agent = create_agent(model=_claude(), middleware=[middleware])

        assert middleware.state_schema is FilesystemState
        assert "files" in agent.channels

    def test_default_backend_adds_files_state(self) -> None:
        middleware = FilesystemMiddleware()

        assert middleware.state_schema is FilesystemState

    def test_non_state_backend_uses_base_state(self) -> None:
        middleware = FilesystemMiddleware(
            backend=StoreBackend(namespace=lambda _rt: ("filesystem",))
        )
        agent = create_agent(model=_claude(), middleware=[middleware])

        assert middleware.state_schema is AgentState
        assert "files" not in agent.channels

    def test_composite_state_backend_adds_files_state(self) -> None:
        store_backend = StoreBackend(namespace=lambda _rt: ("filesystem",))
        nested_backend = CompositeBackend(
            default=store_backend, routes={"/ephemeral/": StateBackend()}
        )
        backend = CompositeBackend(default=store_backend, routes={"/nested/": nested_backend})
        middleware = FilesystemMiddleware(backend=backend)

        assert middleware.state_schema is FilesystemState

    def test_composite_without_state_backend_uses_base_state(self) -> None:
        store_backend = StoreBackend(namespace=lambda _rt: ("filesystem",))
        backend = CompositeBackend(default=store_backend, routes={"/persistent/": store_backend})
        middleware = FilesystemMiddleware(backend=backend)

        assert middleware.state_schema is AgentState

    @pytest.mark.xfail(
        strict=True, reason="nbagents: a backend class or a factory of the tool runtime is accepted"
    )
    def test_backend_class_is_rejected(self) -> None:
        """Backend factories were removed in 0.7; callers must pass instances."""
        with pytest.raises(TypeError, match=r"Backend factories were removed in deepagents 0\.7"):
            FilesystemMiddleware(backend=StateBackend)  # type: ignore[arg-type]

    @pytest.mark.xfail(
        strict=True, reason="nbagents: a backend class or a factory of the tool runtime is accepted"
    )
    def test_backend_factory_is_rejected(self) -> None:
        """Backend factories were removed in 0.7; callers must pass instances."""
        with pytest.raises(TypeError, match=r"Backend factories were removed in deepagents 0\.7"):
            FilesystemMiddleware(backend=lambda _rt: StateBackend())  # type: ignore[arg-type]

    def test_callable_backend_instance_is_accepted(self) -> None:
        """A callable initialized backend remains a backend instance."""

        class CallableStateBackend(StateBackend):
            def __call__(self) -> None:
                return None

        backend = CallableStateBackend()
        middleware = FilesystemMiddleware(backend=backend)

        assert middleware.backend is backend

    def test_filesystem_tool_prompt_override(self) -> None:
        """Test that custom tool descriptions can be set via FilesystemMiddleware."""
        agent = create_agent(
            model=_claude(),
            middleware=[
                FilesystemMiddleware(
                    backend=StateBackend(),
                    custom_tool_descriptions={
                        "ls": "Charmander",
                        "read_file": "Bulbasaur",
                        "edit_file": "Squirtle",
                    },
                )
            ],
        )
        tools = agent.nodes["tools"].bound._tools_by_name
        assert "ls" in tools
        assert tools["ls"].description == "Charmander"
        assert "read_file" in tools
        assert tools["read_file"].description == "Bulbasaur"
        assert "write_file" in tools
        assert tools["write_file"].description == WRITE_FILE_TOOL_DESCRIPTION.rstrip()
        assert "edit_file" in tools
        assert tools["edit_file"].description == "Squirtle"

    def test_filesystem_tool_prompt_override_with_longterm_memory(self) -> None:
        """Test that custom tool descriptions work with composite backends and longterm memory."""
        agent = create_agent(
            model=_claude(),
            middleware=[
                FilesystemMiddleware(
                    backend=build_composite_state_backend(
                        routes={"/memories/": StoreBackend(namespace=lambda _rt: ("filesystem",))}
                    ),
                    custom_tool_descriptions={
                        "ls": "Charmander",
                        "read_file": "Bulbasaur",
                        "edit_file": "Squirtle",
                    },
                )
            ],
            store=InMemoryStore(),
        )
        tools = agent.nodes["tools"].bound._tools_by_name
        assert "ls" in tools
        assert tools["ls"].description == "Charmander"
        assert "read_file" in tools
        assert tools["read_file"].description == "Bulbasaur"
        assert "write_file" in tools
        assert tools["write_file"].description == WRITE_FILE_TOOL_DESCRIPTION.rstrip()
        assert "edit_file" in tools
        assert tools["edit_file"].description == "Squirtle"


def _claude() -> Any:
    # nbagents: imported where a test builds one, not at the top: the import alone costs every
    # test process of `make quick` a second or more.
    from langchain_anthropic import ChatAnthropic

    return ChatAnthropic(model="claude-sonnet-4-6")
