# Ported from deepagents (MIT), libs/deepagents/tests/unit_tests/middleware/test_skills_middleware_async.py: public behaviour
# only, imports changed to nbagents names. Changes beyond imports are marked 'nbagents:'.
# Left out:
#   test_alist_skills_from_backend_single_skill: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_from_backend_multiple_skills: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_from_backend_empty_directory: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_from_backend_nonexistent_path: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_logs_ls_error: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_loads_partial_results_with_ls_error: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_from_backend_missing_skill_md: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_from_backend_invalid_frontmatter: calls the private _alist_skills (discovery is tested through the middleware)
#   test_alist_skills_with_windows_style_paths: calls the private _alist_skills (discovery is tested through the middleware)
"""Async unit tests for skills middleware with FilesystemBackend.

This module contains async versions of skills middleware tests.
"""

from pathlib import Path
from types import SimpleNamespace
from unittest.mock import AsyncMock

from fake_model import GenericFakeChatModel
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from nbagents.backends import FileDownloadResponse, FileInfo, FilesystemBackend, LsResult
from nbagents.skills import SkillsMiddleware


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


async def test_abefore_agent_loads_skills(tmp_path: Path) -> None:
    """Test that abefore_agent loads skills from backend."""
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

    # Call abefore_agent
    result = await middleware.abefore_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert "skills_metadata" in result
    assert len(result["skills_metadata"]) == 2

    skill_names = {s["name"] for s in result["skills_metadata"]}
    assert skill_names == {"skill-one", "skill-two"}


async def test_abefore_agent_skill_override(tmp_path: Path) -> None:
    """Test that skills from later sources override earlier ones (async)."""
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

    # Call abefore_agent
    result = await middleware.abefore_agent({}, None, {})  # type: ignore[arg-type]

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


async def test_abefore_agent_empty_sources(tmp_path: Path) -> None:
    """Test abefore_agent with empty sources (async)."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create empty directories
    (tmp_path / "skills" / "user").mkdir(parents=True)

    sources = [str(tmp_path / "skills" / "user")]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    result = await middleware.abefore_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert result["skills_metadata"] == []


async def test_abefore_agent_records_skill_load_errors() -> None:
    """Source load errors should be available in private middleware state."""
    backend = SimpleNamespace(
        als=AsyncMock(return_value=LsResult(error="Cannot list '/bad': denied", entries=[])),
        adownload_files=AsyncMock(),
    )
    middleware = SkillsMiddleware(backend=backend, sources=["/bad"])

    result = await middleware.abefore_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert result["skills_metadata"] == []
    assert result["skills_load_errors"] == [
        "Cannot load skills from '/bad': Cannot list '/bad': denied"
    ]


async def test_abefore_agent_partial_load_across_sources() -> None:
    """A failing source must not hide skills loaded from a sibling source (async)."""
    skill_content = make_skill_content("good-skill", "Skill from the working source")
    skill_dir_path = "/good/good-skill/"
    skill_md_path = "/good/good-skill/SKILL.md"

    async def als_side_effect(path: str) -> LsResult:
        if path == "/good":
            return LsResult(entries=[FileInfo(path=skill_dir_path, is_dir=True)])
        return LsResult(error="Cannot list '/bad': denied", entries=[])

    backend = SimpleNamespace(
        als=AsyncMock(side_effect=als_side_effect),
        adownload_files=AsyncMock(
            return_value=[
                FileDownloadResponse(
                    path=skill_md_path, content=skill_content.encode("utf-8"), error=None
                )
            ]
        ),
    )
    middleware = SkillsMiddleware(backend=backend, sources=["/good", "/bad"])

    result = await middleware.abefore_agent({}, None, {})  # type: ignore[arg-type]

    assert result is not None
    assert [skill["name"] for skill in result["skills_metadata"]] == ["good-skill"]
    assert result["skills_load_errors"] == [
        "Cannot load skills from '/bad': Cannot list '/bad': denied"
    ]


async def test_abefore_agent_skips_loading_if_metadata_present(tmp_path: Path) -> None:
    """Test that abefore_agent skips loading if skills_metadata is already in state."""
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

    # State has skills_metadata already
    state_with_metadata = {"skills_metadata": []}
    result = await middleware.abefore_agent(state_with_metadata, None, {})  # type: ignore[arg-type]

    # Should return None, not load new skills
    assert result is None


async def test_agent_with_skills_middleware_multiple_sources_async(tmp_path: Path) -> None:
    """Test agent with skills from multiple sources (async)."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create skills in multiple sources
    base_dir = tmp_path / "skills" / "base"
    user_dir = tmp_path / "skills" / "user"

    base_skill_path = str(base_dir / "base-skill" / "SKILL.md")
    user_skill_path = str(user_dir / "user-skill" / "SKILL.md")

    base_content = make_skill_content("base-skill", "Base skill description")
    user_content = make_skill_content("user-skill", "User skill description")

    responses = backend.upload_files(
        [
            (base_skill_path, base_content.encode("utf-8")),
            (user_skill_path, user_content.encode("utf-8")),
        ]
    )
    assert all(r.error is None for r in responses)

    # Create fake model
    fake_model = GenericFakeChatModel(messages=iter([AIMessage(content="I see both skills.")]))

    # Create middleware with multiple sources
    sources = [
        str(base_dir),
        str(user_dir),
    ]
    middleware = SkillsMiddleware(
        backend=backend,
        sources=sources,
    )

    # Create agent
    agent = create_agent(model=fake_model, middleware=[middleware])

    # Invoke asynchronously
    result = await agent.ainvoke({"messages": [HumanMessage(content="Help me")]})

    assert "messages" in result
    assert len(result["messages"]) > 0

    # Verify both skills are in system prompt
    first_call = fake_model.call_history[0]
    system_message = first_call["messages"][0]
    content = system_message.text

    assert "base-skill" in content
    assert "user-skill" in content


async def test_agent_with_skills_middleware_empty_sources_async(tmp_path: Path) -> None:
    """Test that agent works with empty skills sources (async)."""
    backend = FilesystemBackend(root_dir=str(tmp_path), virtual_mode=False)

    # Create empty skills directory
    skills_dir = tmp_path / "skills"
    skills_dir.mkdir()

    # Create fake model
    fake_model = GenericFakeChatModel(messages=iter([AIMessage(content="Working without skills.")]))

    # Create middleware with empty directory
    middleware = SkillsMiddleware(backend=backend, sources=[str(skills_dir)])

    # Create agent
    agent = create_agent(model=fake_model, middleware=[middleware])

    # Invoke asynchronously
    result = await agent.ainvoke({"messages": [HumanMessage(content="Hello")]})

    assert "messages" in result
    assert len(result["messages"]) > 0

    # Verify system prompt still contains Skills System section
    first_call = fake_model.call_history[0]
    system_message = first_call["messages"][0]
    content = system_message.text

    assert "Skills System" in content
    assert "No skills available" in content
