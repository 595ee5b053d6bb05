# Ported from deepagents (MIT), libs/deepagents/tests/unit_tests/test_middleware.py and
# test_graph.py: their sub-agent tests that use public names only
# (TestAddMiddleware.test_subagent_middleware and test_multiple_middleware;
# TestStateSchema.test_declarative_subagent_compiles_with_custom_state_schema), imports changed to
# nbagents names. Changes beyond imports are marked 'nbagents:'.
# Not ported, from that file: its filesystem, eviction, truncation and patch-tool-call tests (not
# sub-agent tests; upstream's async filesystem middleware tests are in
# test_upstream_middleware_async.py).
# Not ported, from test_graph.py: its sub-agent tests (TestGeneralPurposeSubagentProfileWiring,
# TestSubagentMiddlewareIsolation, TestSubagentLevelProfileResolution,
# TestSubagentLevelToolExclusionAndOverrides, TestSubagentSystemPromptWiring,
# TestPrebuiltSubagentModelResolvesProfile, the sub-agent cases of TestPromptCachingWiring,
# TestToolExclusionWiring, TestMiddlewareExclusionWiring, TestUserMiddlewareOverride and the
# rest of TestStateSchema) register upstream's harness profiles (HarnessProfile,
# GeneralPurposeSubagentProfile), which nbagents does not have, or patch deepagents.graph's
# create_agent/resolve_model to read the middleware stack it builds inside. nbagents'
# equivalents: general_purpose_agent=False (tests/test_subagents_specs.py), the state schema
# reaching built sub-agents (tests/test_subagents_run.py).
from fake_model import GenericFakeChatModel
from langchain.agents import AgentState as DeepAgentState  # nbagents: it has no DeepAgentState
from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from nbagents import GENERAL_PURPOSE_SUBAGENT, SubAgentMiddleware, create_sub_agent
from nbagents.backends import FilesystemMiddleware, StateBackend


class TestAddMiddleware:
    def test_subagent_middleware(self):
        middleware = [
            SubAgentMiddleware(
                backend=StateBackend(),
                subagents=[{**GENERAL_PURPOSE_SUBAGENT, "model": "claude-sonnet-4-6", "tools": []}],
            )
        ]
        agent = create_agent(model="claude-sonnet-4-6", middleware=middleware)
        assert "task" in agent.nodes["tools"].bound._tools_by_name

    def test_multiple_middleware(self):
        middleware = [
            FilesystemMiddleware(),
            SubAgentMiddleware(
                backend=StateBackend(),
                subagents=[{**GENERAL_PURPOSE_SUBAGENT, "model": "claude-sonnet-4-6", "tools": []}],
            ),
        ]
        agent = create_agent(model="claude-sonnet-4-6", middleware=middleware)
        assert "files" in agent.stream_channels
        agent_tools = agent.nodes["tools"].bound._tools_by_name.keys()
        assert "ls" in agent_tools
        assert "read_file" in agent_tools
        assert "write_file" in agent_tools
        assert "edit_file" in agent_tools
        assert "glob" in agent_tools
        assert "grep" in agent_tools
        assert "task" in agent_tools


# From test_graph.py:
class TestStateSchema:
    def test_declarative_subagent_compiles_with_custom_state_schema(self) -> None:
        """A declarative subagent's compiled runnable exposes the custom field as a channel."""

        class MyState(DeepAgentState):
            page_url: str

        runnable = create_sub_agent(
            {
                "name": "researcher",
                "description": "Research agent",
                "system_prompt": "You are a researcher.",
                "model": GenericFakeChatModel(messages=iter([AIMessage(content="ok")])),
                "tools": [],
            },
            state_schema=MyState,
        )

        properties = runnable.get_input_jsonschema()["properties"]
        assert "page_url" in properties
