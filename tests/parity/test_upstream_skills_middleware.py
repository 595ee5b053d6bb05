# Ported from deepagents (MIT), libs/deepagents/tests/unit_tests/middleware/test_skills_middleware.py: public behaviour
# only, imports changed to nbagents names. Changes beyond imports are marked 'nbagents:'.
# Left out:
#   test_validate_skill_name_valid: calls the private _validate_skill_name (nbagents: name_problem)
#   test_validate_skill_name_invalid: calls the private _validate_skill_name (nbagents: name_problem)
#   test_parse_skill_metadata_valid: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_minimal: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_no_frontmatter: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_invalid_yaml: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_missing_required_fields: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_description_truncation: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_too_large: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_empty_optional_fields: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_compatibility_max_length: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_whitespace_only_description: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_multiple_spaces: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_validate_skill_name_unicode_lowercase: calls the private _validate_skill_name (nbagents: name_problem)
#   test_validate_skill_name_rejects_unicode_uppercase: calls the private _validate_skill_name (nbagents: name_problem)
#   test_validate_skill_name_rejects_cjk_characters: calls the private _validate_skill_name (nbagents: name_problem)
#   test_validate_skill_name_rejects_emoji: calls the private _validate_skill_name (nbagents: name_problem)
#   test_format_skill_annotations_both_fields: calls a private upstream helper
#   test_format_skill_annotations_license_only: calls a private upstream helper
#   test_format_skill_annotations_compatibility_only: calls a private upstream helper
#   test_format_skill_annotations_neither_field: calls a private upstream helper
#   test_validate_metadata_non_dict_returns_empty: calls a private upstream helper
#   test_validate_metadata_list_returns_empty: calls a private upstream helper
#   test_validate_metadata_coerces_values_to_str: calls a private upstream helper
#   test_validate_metadata_valid_dict_passthrough: calls a private upstream helper
#   test_parse_skill_metadata_allowed_tools_yaml_list: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_yaml_list_non_strings_skipped: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_yaml_list_trims_items: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_empty_list: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_comma_separated_string: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_allowed_tools_scalar_ignored: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_license_boolean_coerced: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_parse_skill_metadata_non_dict_metadata_ignored: calls the private _parse_skill_metadata (nbagents: parse_skill, tested in tests/test_skills_format.py)
#   test_list_skills_from_backend_single_skill: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_multiple_skills: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_empty_directory: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_nonexistent_path: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_logs_ls_error: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_loads_partial_results_with_ls_error: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_missing_skill_md: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_invalid_frontmatter: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_from_backend_with_helper_files: calls the private _list_skills (discovery is tested through the middleware)
#   test_list_skills_with_windows_style_paths: calls the private _list_skills (discovery is tested through the middleware)
#   TestSkillMetadataFromResponseLogging: calls a private upstream helper
#   test_format_skills_locations_with_windows_path: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_builtin_leaf: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_skills_leaf_climbs_to_parent: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_explicit_label_tuples: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_fallback_capitalize: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_empty_path_fallback: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_single_registry: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_locations_multiple_registries: calls the private _format_skills_locations (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_empty: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_load_warnings: calls the private _format_skills_load_warnings (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_load_warnings_escapes_prompt_delimiters: calls the private _format_skills_load_warnings (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_load_warnings_truncates_long_warnings: calls the private _format_skills_load_warnings (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_load_warnings_caps_warning_count: calls the private _format_skills_load_warnings (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_single_skill: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_multiple_skills_multiple_registries: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_with_license_and_compatibility: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_license_only: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_compatibility_only: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
#   test_format_skills_list_no_optional_fields: calls the private _format_skills_list (nbagents: the prompt's sections are tested in tests/test_skills_prompt.py)
"""Unit tests for skills middleware with FilesystemBackend.

This module tests the skills middleware and helper functions using temporary
directories and the FilesystemBackend in normal (non-virtual) mode.
"""

from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING
from unittest.mock import MagicMock

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware.types import ModelRequest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import var_child_runnable_config
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import CONF
from langgraph.runtime import CONFIG_KEY_RUNTIME, Runtime, ServerInfo

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
from fake_model import GenericFakeChatModel
from langgraph.store.memory import InMemoryStore

from nbagents import create_deep_agent
from nbagents.backends import (
    FileDownloadResponse,
    FileInfo,
    FilesystemBackend,
    LsResult,
    StateBackend,
    StoreBackend,
)
from nbagents.skills import (
    SkillMetadata,
    SkillsMiddleware,
)


def _assistant_id_namespace(rt: Runtime) -> tuple[str, ...]:
    """Namespace factory: scope by assistant_id when running under LangGraph server."""
    assistant_id = rt.server_info.assistant_id if rt.server_info else None
    if assistant_id:
        return (assistant_id, "filesystem")
    return ("filesystem",)


@contextmanager
def _runtime_context(assistant_id: str | None = None):
    """Set a LangGraph Runtime in the current context so `get_runtime()` resolves."""
    server_info = (
        ServerInfo(assistant_id=assistant_id, graph_id="test") if assistant_id is not None else None
    )
    runtime = Runtime(server_info=server_info)
    token = var_child_runnable_config.set({CONF: {CONFIG_KEY_RUNTIME: runtime}})
    try:
        yield
    finally:
        var_child_runnable_config.reset(token)


def make_skill_content(name: str, description: str) -> str:
    """Create SKILL.md content with YAML frontmatter.

    Args:
        name: Skill name for frontmatter
        description: Skill description for frontmatter

    Returns:
        Complete SKILL.md content as string
    """
    return f"""---
name: {name}
description: {description}
---

# {name.title()} Skill

Instructions go here.
"""


@pytest.mark.parametrize(
    "bad_source",
    [
        ("/only-one-element",),
        ("/one", "two", "three"),
        ("/path", 42),
        (None, "label"),
    ],
    ids=["one-tuple", "three-tuple", "non-string-label", "non-string-path"],
)
def test_malformed_tuple_source_raises_type_error(bad_source: object) -> None:
    """Malformed tuple sources raise `TypeError` at construction time.

    Fails close to the caller rather than surfacing later as an
    `IndexError` in the middleware or a silently-coerced non-string path
    downstream.
    """
    with pytest.raises(TypeError, match=r"expected str or \(str, str\) tuple"):
        SkillsMiddleware(
            backend=None,  # type: ignore[arg-type]
            sources=[bad_source],  # type: ignore[list-item]
        )


def test_sources_attribute_is_paths_only() -> None:
    """`middleware.sources` exposes paths only; labels live on `source_labels`.

    Backwards-compat: callers that inspected `middleware.sources` before
    the tuple-form API was added continue to see a plain `list[str]`.
    """
    middleware = SkillsMiddleware(
        backend=StateBackend(),  # nbagents: a backend is checked when the middleware is built
        sources=[
            "/skills/user/",
            ("/home/me/.claude/skills", "User Claude"),
        ],
    )

    assert middleware.sources == ["/skills/user/", "/home/me/.claude/skills"]
    assert middleware.source_labels == ["User", "User Claude"]


def test_before_agent_loads_skills(tmp_path: Path) -> None:
    """Test that before_agent loads skills from backend."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create some skills
    skills_dir = tmp_path / "skills" / "user"
    skill1_path = str(skills_dir / "skill-one" / "SKILL.md")
    skill2_path = str(skills_dir / "skill-two" / "SKILL.md")

    skill1_content = make_skill_content("skill-one", "First skill")
    skill2_content = make_skill_content("skill-two", "Second skill")

    backend.upload_files(
        [
            (skill1_path, skill1_content.encode("utf-8")),
            (skill2_path, skill2_content.encode("utf-8")),
        ]
    )

    sources = [str(skills_dir)]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Call before_agent
    result = middleware.before_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert "skills_metadata" in result
    assert len(result["skills_metadata"]) == 2

    skill_names = {s["name"] for s in result["skills_metadata"]}
    assert skill_names == {"skill-one", "skill-two"}


def test_before_agent_skill_override(tmp_path: Path) -> None:
    """Test that skills from later sources override earlier ones."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create same skill name in two sources
    base_dir = tmp_path / "skills" / "base"
    user_dir = tmp_path / "skills" / "user"

    base_skill_path = (base_dir / "shared-skill" / "SKILL.md").as_posix()
    user_skill_path = (user_dir / "shared-skill" / "SKILL.md").as_posix()

    base_content = make_skill_content("shared-skill", "Base description")
    user_content = make_skill_content("shared-skill", "User description")

    backend.upload_files(
        [
            (base_skill_path, base_content.encode("utf-8")),
            (user_skill_path, user_content.encode("utf-8")),
        ]
    )

    sources = [
        base_dir.as_posix(),
        user_dir.as_posix(),
    ]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Call before_agent
    result = middleware.before_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert len(result["skills_metadata"]) == 1

    # Should have the user version (later source wins)
    skill = result["skills_metadata"][0]
    assert skill == {
        "name": "shared-skill",
        "description": "User description",
        "path": user_skill_path,
        "metadata": {},
        "license": None,
        "compatibility": None,
        "allowed_tools": [],
    }


def test_before_agent_empty_registries(tmp_path: Path) -> None:
    """Test before_agent with empty sources."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create empty directories
    (tmp_path / "skills" / "user").mkdir(parents=True)

    sources = [str(tmp_path / "skills" / "user")]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    result = middleware.before_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert result["skills_metadata"] == []


def test_before_agent_records_skill_load_errors() -> None:
    """Source load errors should be available in private middleware state."""
    backend = SimpleNamespace(
        ls=MagicMock(return_value=LsResult(error="Cannot list '/bad': denied", entries=[])),
        download_files=MagicMock(),
    )
    middleware = SkillsMiddleware(backend=backend, sources=["/bad"])

    result = middleware.before_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert result["skills_metadata"] == []
    assert result["skills_load_errors"] == [
        "Cannot load skills from '/bad': Cannot list '/bad': denied"
    ]


def test_before_agent_partial_load_across_sources() -> None:
    """A failing source must not hide skills loaded from a sibling source."""
    skill_content = make_skill_content("good-skill", "Skill from the working source")
    skill_dir_path = "/good/good-skill/"
    skill_md_path = "/good/good-skill/SKILL.md"

    def ls_side_effect(path: str) -> LsResult:
        if path == "/good":
            return LsResult(entries=[FileInfo(path=skill_dir_path, is_dir=True)])
        return LsResult(error="Cannot list '/bad': denied", entries=[])

    backend = SimpleNamespace(
        ls=MagicMock(side_effect=ls_side_effect),
        download_files=MagicMock(
            return_value=[
                FileDownloadResponse(
                    path=skill_md_path, content=skill_content.encode("utf-8"), error=None
                )
            ]
        ),
    )
    middleware = SkillsMiddleware(backend=backend, sources=["/good", "/bad"])

    result = middleware.before_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert [skill["name"] for skill in result["skills_metadata"]] == ["good-skill"]
    assert result["skills_load_errors"] == [
        "Cannot load skills from '/bad': Cannot list '/bad': denied"
    ]


def test_agent_with_skills_middleware_system_prompt(tmp_path: Path) -> None:
    """Test that skills middleware injects skills into the system prompt."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)
    skills_dir = tmp_path / "skills" / "user"
    skill_path = str(skills_dir / "test-skill" / "SKILL.md")
    skill_content = make_skill_content("test-skill", "A test skill for demonstration")

    responses = backend.upload_files([(skill_path, skill_content.encode("utf-8"))])
    assert responses[0].error is None

    # Create a fake chat model that we can inspect
    fake_model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(content="I have processed your request using the test-skill."),
            ]
        )
    )

    # Create middleware
    sources = [str(skills_dir)]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Create agent with middleware
    agent = create_agent(
        model=fake_model,
        middleware=[middleware],
    )

    # Invoke the agent
    result = agent.invoke({"messages": [HumanMessage(content="Hello, please help me.")]})

    # Verify the agent was invoked
    assert "messages" in result
    assert len(result["messages"]) > 0

    # Inspect the call history to verify system prompt was injected
    assert len(fake_model.call_history) > 0, "Model should have been called at least once"

    # Get the first call
    first_call = fake_model.call_history[0]
    messages = first_call["messages"]

    system_message = messages[0]
    assert system_message.type == "system", "First message should be system prompt"
    content = system_message.text
    assert "Skills System" in content, "System prompt should contain 'Skills System' section"
    assert "test-skill" in content, "System prompt should mention the skill name"


def test_skills_middleware_with_state_backend() -> None:
    """Test that SkillsMiddleware can be initialized with StateBackend instance."""
    sources = ["/skills/user"]
    middleware = SkillsMiddleware(
        backend=StateBackend(),
        sources=sources,
    )

    # Verify the middleware was created successfully
    assert middleware is not None
    assert isinstance(middleware.backend, StateBackend)  # nbagents: the public attribute backend
    assert len(middleware.sources) == 1
    assert middleware.sources[0] == "/skills/user"


def test_skills_middleware_with_store_backend_instance() -> None:
    """Test that SkillsMiddleware can be initialized with StoreBackend instance."""
    store = InMemoryStore()
    sources = ["/skills/user"]
    middleware = SkillsMiddleware(
        backend=StoreBackend(store=store, namespace=_assistant_id_namespace),
        sources=sources,
    )

    # Verify the middleware was created successfully
    assert middleware is not None
    assert isinstance(middleware.backend, StoreBackend)  # nbagents: the public attribute backend
    assert len(middleware.sources) == 1
    assert middleware.sources[0] == "/skills/user"


async def test_agent_with_skills_middleware_async(tmp_path: Path) -> None:
    """Test that skills middleware works with async agent invocation."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)
    skills_dir = tmp_path / "skills" / "user"
    skill_path = str(skills_dir / "async-skill" / "SKILL.md")
    skill_content = make_skill_content("async-skill", "A test skill for async testing")

    responses = backend.upload_files([(skill_path, skill_content.encode("utf-8"))])
    assert responses[0].error is None

    # Create a fake chat model
    fake_model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(content="I have processed your async request using the async-skill."),
            ]
        )
    )

    # Create middleware
    sources = [str(skills_dir)]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Create agent with middleware
    agent = create_agent(
        model=fake_model,
        middleware=[middleware],
    )

    # Invoke the agent asynchronously
    result = await agent.ainvoke({"messages": [HumanMessage(content="Hello, please help me.")]})

    # Verify the agent was invoked
    assert "messages" in result
    assert len(result["messages"]) > 0

    # Verify skills_metadata is NOT in final state (it's a PrivateStateAttr)
    assert "skills_metadata" not in result, (
        "skills_metadata should be private and not in final state"
    )

    # Inspect the call history to verify system prompt was injected
    assert len(fake_model.call_history) > 0, "Model should have been called at least once"

    # Get the first call
    first_call = fake_model.call_history[0]
    messages = first_call["messages"]

    system_message = messages[0]
    assert system_message.type == "system", "First message should be system prompt"
    content = system_message.text
    assert "Skills System" in content, "System prompt should contain 'Skills System' section"
    assert "async-skill" in content, "System prompt should mention the skill name"


def test_agent_with_skills_middleware_multiple_registries_override(tmp_path: Path) -> None:
    """Test skills middleware with multiple sources where later sources override earlier ones."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create same-named skill in two sources with different descriptions
    base_dir = tmp_path / "skills" / "base"
    user_dir = tmp_path / "skills" / "user"

    base_skill_path = str(base_dir / "shared-skill" / "SKILL.md")
    user_skill_path = str(user_dir / "shared-skill" / "SKILL.md")

    base_content = make_skill_content("shared-skill", "Base registry description")
    user_content = make_skill_content("shared-skill", "User registry description - should win")

    responses = backend.upload_files(
        [
            (base_skill_path, base_content.encode("utf-8")),
            (user_skill_path, user_content.encode("utf-8")),
        ]
    )
    assert all(r.error is None for r in responses)

    # Create a fake chat model
    fake_model = GenericFakeChatModel(
        messages=iter(
            [
                AIMessage(content="I have processed your request."),
            ]
        )
    )

    # Create middleware with multiple sources - user should override base
    sources = [
        str(base_dir),
        str(user_dir),
    ]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Create agent with middleware
    agent = create_agent(
        model=fake_model,
        middleware=[middleware],
    )

    # Invoke the agent
    result = agent.invoke({"messages": [HumanMessage(content="Hello, please help me.")]})

    # Verify the agent was invoked
    assert "messages" in result
    assert len(result["messages"]) > 0

    # Verify skills_metadata is NOT in final state (it's a PrivateStateAttr)
    assert "skills_metadata" not in result, (
        "skills_metadata should be private and not in final state"
    )

    # Inspect the call history to verify system prompt was injected with USER version
    assert len(fake_model.call_history) > 0, "Model should have been called at least once"

    # Get the first call
    first_call = fake_model.call_history[0]
    messages = first_call["messages"]

    system_message = messages[0]
    assert system_message.type == "system", "First message should be system prompt"
    content = system_message.text
    assert "Skills System" in content, "System prompt should contain 'Skills System' section"
    assert "shared-skill" in content, "System prompt should mention the skill name"
    assert "User registry description - should win" in content, "Should use user source description"
    assert "Base registry description" not in content, "Should not contain base source description"


def test_before_agent_skips_loading_if_metadata_present(tmp_path: Path) -> None:
    """Test that before_agent skips loading if skills_metadata is already in state."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create a skill in the backend
    skills_dir = tmp_path / "skills" / "user"
    skill_path = str(skills_dir / "test-skill" / "SKILL.md")
    skill_content = make_skill_content("test-skill", "A test skill")

    backend.upload_files([(skill_path, skill_content.encode("utf-8"))])

    sources = [str(skills_dir)]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Case 1: State has skills_metadata with some skills
    existing_metadata: list[SkillMetadata] = [
        {
            "name": "existing-skill",
            "description": "An existing skill",
            "path": "/some/path/SKILL.md",
            "metadata": {},
            "license": None,
            "compatibility": None,
            "allowed_tools": [],
        }
    ]
    state_with_metadata = {"skills_metadata": existing_metadata}
    result = middleware.before_agent(state_with_metadata, None, {})  # type: ignore[arg-type]

    # Should return None, not load new skills
    assert result is None

    # Case 2: State has empty list for skills_metadata
    state_with_empty_list = {"skills_metadata": []}
    result = middleware.before_agent(state_with_empty_list, None, {})  # type: ignore[arg-type]

    # Should still return None and not reload
    assert result is None

    # Case 3: State does NOT have skills_metadata key
    state_without_metadata = {}
    result = middleware.before_agent(state_without_metadata, None, {})  # type: ignore[arg-type]

    # Should load skills and return update
    assert result is not None
    assert "skills_metadata" in result
    assert len(result["skills_metadata"]) == 1
    assert result["skills_metadata"][0]["name"] == "test-skill"


def test_create_deep_agent_with_skills_and_filesystem_backend(tmp_path: Path) -> None:
    """Test end-to-end: create_deep_agent with skills parameter and FilesystemBackend."""
    # Create skill on filesystem
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)
    skills_dir = tmp_path / "skills" / "user"
    skill_path = str(skills_dir / "test-skill" / "SKILL.md")
    skill_content = make_skill_content("test-skill", "A test skill for deep agents")

    backend.upload_files([(skill_path, skill_content.encode("utf-8"))])

    # Create agent with skills parameter and FilesystemBackend
    agent = create_deep_agent(
        backend=backend,
        skills=[str(skills_dir)],
        model=GenericFakeChatModel(
            messages=iter([AIMessage(content="I see the test-skill in the system prompt.")])
        ),
    )

    # Invoke agent
    result = agent.invoke({"messages": [HumanMessage(content="What skills are available?")]})

    # Verify invocation succeeded
    assert "messages" in result
    assert len(result["messages"]) > 0


def test_create_deep_agent_with_skills_empty_directory(tmp_path: Path) -> None:
    """Test that skills work gracefully when no skills are found (empty directory)."""
    # Create empty skills directory
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)
    skills_dir = tmp_path / "skills" / "user"
    skills_dir.mkdir(parents=True)

    # Create agent with skills parameter but empty directory
    agent = create_deep_agent(
        backend=backend,
        skills=[str(skills_dir)],
        model=GenericFakeChatModel(
            messages=iter([AIMessage(content="No skills found, but that's okay.")])
        ),
    )

    # Invoke agent
    result = agent.invoke({"messages": [HumanMessage(content="What skills are available?")]})

    # Verify invocation succeeded even without skills
    assert "messages" in result
    assert len(result["messages"]) > 0


def test_create_deep_agent_with_skills_default_backend() -> None:
    """Test create_deep_agent with skills parameter using default backend (no backend specified).

    When no backend is specified, StateBackend is used by tools. Since SkillsMiddleware
    receives None for backend (no explicit backend provided), it logs a warning and
    returns empty skills. However, if we pass files via invoke(), tools can still
    access those files via StateBackend.
    """
    checkpointer = InMemorySaver()
    agent = create_deep_agent(
        skills=["/skills/user"],
        model=GenericFakeChatModel(
            messages=iter([AIMessage(content="Working with default backend.")])
        ),
        checkpointer=checkpointer,
    )

    # Create skill content with proper
    skill_content = make_skill_content("test-skill", "A test skill for default backend")
    timestamp = datetime.now(UTC).isoformat()

    # Prepare files dict with FileData format (for StateBackend tools)
    # Note: SkillsMiddleware will still get backend=None, so it won't load these
    # But this demonstrates the proper format for StateBackend
    skill_files = {
        "/skills/user/test-skill/SKILL.md": {
            "content": skill_content,
            "encoding": "utf-8",
            "created_at": timestamp,
            "modified_at": timestamp,
        }
    }

    config: RunnableConfig = {"configurable": {"thread_id": "123"}}

    # Invoke agent with files parameter
    # Skills won't be loaded (backend=None for SkillsMiddleware), but tools can access files
    result = agent.invoke(
        {
            "messages": [HumanMessage(content="What skills are available?")],
            "files": skill_files,
        },
        config,
    )

    assert len(result["messages"]) > 0

    # Use get_state() for `files`: DeltaChannel only writes a snapshot blob every
    # 50 steps, so checkpoint["channel_values"] won't contain "files" on non-snapshot steps.
    state_values = agent.get_state(config).values
    assert "/skills/user/test-skill/SKILL.md" in state_values["files"]
    checkpoint = agent.checkpointer.get(config)
    assert checkpoint["channel_values"]["skills_metadata"] == [
        {
            "allowed_tools": [],
            "compatibility": None,
            "description": "A test skill for default backend",
            "license": None,
            "metadata": {},
            "name": "test-skill",
            "path": "/skills/user/test-skill/SKILL.md",
        },
    ]


def create_store_skill_item(content: str) -> dict:
    """Create a skill item in StoreBackend FileData format.

    Args:
        content: Skill content string

    Returns:
        Dict with content as str, encoding, created_at, and modified_at
    """
    timestamp = datetime.now(UTC).isoformat()
    return {
        "content": content,
        "encoding": "utf-8",
        "created_at": timestamp,
        "modified_at": timestamp,
    }


def test_skills_middleware_with_store_backend_assistant_id() -> None:
    """Test namespace isolation: each assistant_id gets its own skills namespace."""
    store = InMemoryStore()
    middleware = SkillsMiddleware(
        backend=StoreBackend(store=store, namespace=_assistant_id_namespace),
        sources=["/skills/user"],
    )
    runtime = SimpleNamespace(context=None, store=store, stream_writer=lambda _: None)

    # Add skill for assistant-123 with namespace (assistant-123, filesystem)
    assistant_1_skill = make_skill_content("skill-one", "Skill for assistant 1")
    store.put(
        ("assistant-123", "filesystem"),
        "/skills/user/skill-one/SKILL.md",
        create_store_skill_item(assistant_1_skill),
    )

    # Test: assistant-123 can read its own skill
    with _runtime_context("assistant-123"):
        result_1 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_1 is not None
    assert len(result_1["skills_metadata"]) == 1
    assert result_1["skills_metadata"][0]["name"] == "skill-one"
    assert result_1["skills_metadata"][0]["description"] == "Skill for assistant 1"

    # Test: assistant-456 cannot see assistant-123's skill (different namespace)
    with _runtime_context("assistant-456"):
        result_2 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_2 is not None
    assert len(result_2["skills_metadata"]) == 0  # No skills in assistant-456's namespace yet

    # Add skill for assistant-456 with namespace (assistant-456, filesystem)
    assistant_2_skill = make_skill_content("skill-two", "Skill for assistant 2")
    store.put(
        ("assistant-456", "filesystem"),
        "/skills/user/skill-two/SKILL.md",
        create_store_skill_item(assistant_2_skill),
    )

    # Test: assistant-456 can read its own skill
    with _runtime_context("assistant-456"):
        result_3 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_3 is not None
    assert len(result_3["skills_metadata"]) == 1
    assert result_3["skills_metadata"][0]["name"] == "skill-two"
    assert result_3["skills_metadata"][0]["description"] == "Skill for assistant 2"

    # Test: assistant-123 still only sees its own skill (no cross-contamination)
    with _runtime_context("assistant-123"):
        result_4 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_4 is not None
    assert len(result_4["skills_metadata"]) == 1
    assert result_4["skills_metadata"][0]["name"] == "skill-one"
    assert result_4["skills_metadata"][0]["description"] == "Skill for assistant 1"


def test_skills_middleware_with_store_backend_no_assistant_id() -> None:
    """Test default namespace: when no assistant_id is provided, uses (filesystem,) namespace."""
    store = InMemoryStore()
    middleware = SkillsMiddleware(
        backend=StoreBackend(store=store, namespace=_assistant_id_namespace),
        sources=["/skills/user"],
    )
    runtime = SimpleNamespace(context=None, store=store, stream_writer=lambda _: None)

    # Add skill to default namespace (filesystem,) - no assistant_id
    shared_skill = make_skill_content("shared-skill", "Shared namespace skill")
    store.put(
        ("filesystem",),
        "/skills/user/shared-skill/SKILL.md",
        create_store_skill_item(shared_skill),
    )

    # Test: runtime without server_info accesses default namespace
    with _runtime_context(None):
        result_1 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_1 is not None
    assert len(result_1["skills_metadata"]) == 1
    assert result_1["skills_metadata"][0]["name"] == "shared-skill"
    assert result_1["skills_metadata"][0]["description"] == "Shared namespace skill"

    # Test: runtime with server_info but empty assistant_id also uses default namespace
    with _runtime_context(""):
        result_2 = middleware.before_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_2 is not None
    assert len(result_2["skills_metadata"]) == 1
    assert result_2["skills_metadata"][0]["name"] == "shared-skill"
    assert result_2["skills_metadata"][0]["description"] == "Shared namespace skill"


async def test_skills_middleware_with_store_backend_assistant_id_async() -> None:
    """Test namespace isolation with async: each assistant_id gets its own skills namespace."""
    store = InMemoryStore()
    middleware = SkillsMiddleware(
        backend=StoreBackend(store=store, namespace=_assistant_id_namespace),
        sources=["/skills/user"],
    )
    runtime = SimpleNamespace(context=None, store=store, stream_writer=lambda _: None)

    # Add skill for assistant-123 with namespace (assistant-123, filesystem)
    assistant_1_skill = make_skill_content("async-skill-one", "Async skill for assistant 1")
    store.put(
        ("assistant-123", "filesystem"),
        "/skills/user/async-skill-one/SKILL.md",
        create_store_skill_item(assistant_1_skill),
    )

    # Test: assistant-123 can read its own skill
    with _runtime_context("assistant-123"):
        result_1 = await middleware.abefore_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_1 is not None
    assert len(result_1["skills_metadata"]) == 1
    assert result_1["skills_metadata"][0]["name"] == "async-skill-one"
    assert result_1["skills_metadata"][0]["description"] == "Async skill for assistant 1"

    # Test: assistant-456 cannot see assistant-123's skill (different namespace)
    with _runtime_context("assistant-456"):
        result_2 = await middleware.abefore_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_2 is not None
    assert len(result_2["skills_metadata"]) == 0  # No skills in assistant-456's namespace yet

    # Add skill for assistant-456 with namespace (assistant-456, filesystem)
    assistant_2_skill = make_skill_content("async-skill-two", "Async skill for assistant 2")
    store.put(
        ("assistant-456", "filesystem"),
        "/skills/user/async-skill-two/SKILL.md",
        create_store_skill_item(assistant_2_skill),
    )

    # Test: assistant-456 can read its own skill
    with _runtime_context("assistant-456"):
        result_3 = await middleware.abefore_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_3 is not None
    assert len(result_3["skills_metadata"]) == 1
    assert result_3["skills_metadata"][0]["name"] == "async-skill-two"
    assert result_3["skills_metadata"][0]["description"] == "Async skill for assistant 2"

    # Test: assistant-123 still only sees its own skill (no cross-contamination)
    with _runtime_context("assistant-123"):
        result_4 = await middleware.abefore_agent({}, runtime, {})  # type: ignore[arg-type]

    assert result_4 is not None
    assert len(result_4["skills_metadata"]) == 1
    assert result_4["skills_metadata"][0]["name"] == "async-skill-one"
    assert result_4["skills_metadata"][0]["description"] == "Async skill for assistant 1"


# --- system_prompt override / suppression --------------------------------


def test_init_rejects_non_str_system_prompt() -> None:
    """`system_prompt` must be str or None."""
    with pytest.raises(TypeError, match="must be str or None"):
        SkillsMiddleware(backend=StateBackend(), sources=[], system_prompt=0)  # type: ignore[arg-type]


def test_init_rejects_template_missing_slot() -> None:
    """Custom template missing any required slot fails fast at construction."""
    with pytest.raises(ValueError, match="missing required format slot"):
        SkillsMiddleware(
            backend=StateBackend(),
            sources=[],
            # Missing `{skills_list}`.
            system_prompt="{skills_locations} {skills_load_warnings}",
        )


def test_modify_request_returns_unchanged_when_system_prompt_none() -> None:
    """`system_prompt=None` skips appending; system message identical to input."""
    middleware = SkillsMiddleware(backend=StateBackend(), sources=[], system_prompt=None)
    base = SystemMessage(content="base")
    request = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])),  # ty: ignore[unresolved-reference]
        messages=[HumanMessage(content="hi")],
        system_message=base,
        state={"messages": [], "skills_metadata": []},  # type: ignore[typeddict-unknown-key]
    )

    result = middleware.modify_request(request)

    assert result is request
    assert result.system_message is base


def test_modify_request_uses_custom_template() -> None:
    """Custom template flows through `modify_request` instead of the default constant."""
    middleware = SkillsMiddleware(
        backend=StateBackend(),
        sources=[],
        system_prompt="LOC:{skills_locations}|WARN:{skills_load_warnings}|LIST:{skills_list}",
    )
    request = ModelRequest(
        model=GenericFakeChatModel(messages=iter([])),  # ty: ignore[unresolved-reference]
        messages=[HumanMessage(content="hi")],
        system_message=SystemMessage(content="base"),
        state={"messages": [], "skills_metadata": []},  # type: ignore[typeddict-unknown-key]
    )

    result = middleware.modify_request(request)
    appended = list(result.system_message.content_blocks)[-1].get("text", "")  # type: ignore[union-attr]

    assert "LOC:" in appended
    assert "WARN:" in appended
    assert "LIST:" in appended
    assert "## Skills System" not in appended  # default template marker absent
