"""``load_subagents``: Markdown sub-agent files, overrides and every error they can raise."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.tools import tool

from nbagents import ScriptedChatModel, create_deep_agent, load_subagents
from nbagents.models import delegate, say
from nbagents.subagents._loader import SubAgentFileError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "subagents"


@tool
def search(query: str) -> str:
    """Search the web."""
    return f"results for {query}"


@tool
def fetch(url: str) -> str:
    """Fetch a page."""
    return f"page {url}"


def write_agent(root: Path, directory: str, text: str) -> Path:
    path = root / directory / "AGENTS.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def agent_md(name: str, description: str = "Does things.", extra: str = "", body: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body or 'Be useful.'}\n"


# -- happy paths -------------------------------------------------------------------------------


def test_examples_load_with_tools_resolved() -> None:
    specs = load_subagents(EXAMPLES, tools=[search, fetch])
    assert [s["name"] for s in specs] == ["critic", "researcher"]
    critic, researcher = specs
    assert critic["tools"] == []
    assert researcher["tools"] == [search]
    assert researcher["description"].startswith("Researches one focused question")
    assert researcher["system_prompt"].startswith("You are a research assistant")
    assert not researcher["system_prompt"].endswith("\n")
    assert "model" not in researcher


def test_optional_fields_absent_mean_inherit(tmp_path: Path) -> None:
    write_agent(tmp_path, "helper", agent_md("helper", body="Line one.\n\nLine two."))
    [spec] = load_subagents(tmp_path)
    assert spec == {
        "name": "helper",
        "description": "Does things.",
        "system_prompt": "Line one.\n\nLine two.",
    }


def test_model_string_and_factory(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", agent_md("a", extra="model: openai:gpt-4.1-mini\n"))
    assert load_subagents(tmp_path)[0]["model"] == "openai:gpt-4.1-mini"
    scripted = ScriptedChatModel()
    seen: list[str] = []

    def factory(name: str) -> ScriptedChatModel:
        seen.append(name)
        return scripted

    assert load_subagents(tmp_path, model_factory=factory)[0]["model"] is scripted
    assert seen == ["openai:gpt-4.1-mini"]


def test_tools_by_mapping_sequence_and_comma_string(tmp_path: Path) -> None:
    def lookup(query: str) -> str:
        """Look up."""
        return query

    write_agent(tmp_path, "a", agent_md("a", extra="tools: search, lookup\n"))
    [spec] = load_subagents(tmp_path, tools=[search, lookup])
    assert spec["tools"] == [search, lookup]
    [spec] = load_subagents(tmp_path, tools={"search": fetch, "lookup": lookup})
    assert spec["tools"] == [fetch, lookup]


def test_later_directories_override_by_name(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    write_agent(user, "shared", agent_md("shared", "From the user."))
    write_agent(user, "only-user", agent_md("only-user"))
    write_agent(project, "shared", agent_md("shared", "From the project."))
    write_agent(project, "alpha", agent_md("alpha"))
    specs = load_subagents(user, project)
    assert [s["name"] for s in specs] == ["alpha", "only-user", "shared"]
    assert specs[2]["description"] == "From the project."
    assert load_subagents(project, user)[2]["description"] == "From the user."


def test_missing_directory_is_skipped_and_tilde_expands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    write_agent(tmp_path / "agents", "a", agent_md("a"))
    specs = load_subagents(tmp_path / "no-such-dir", "~/agents")
    assert [s["name"] for s in specs] == ["a"]
    assert load_subagents() == []


def test_skips_dirs_without_agents_md_hidden_dirs_and_files(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", agent_md("a"))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "README.md").write_text("not an agent")
    write_agent(tmp_path, ".hidden", agent_md(".hidden"))
    write_agent(tmp_path, "__pycache__", "junk")
    (tmp_path / "loose.md").write_text("a file beside the agents")
    assert [s["name"] for s in load_subagents(tmp_path)] == ["a"]


def test_crlf_and_bom_files(tmp_path: Path) -> None:
    text = "\ufeff" + agent_md("a").replace("\n", "\r\n")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "AGENTS.md").write_bytes(text.encode("utf-8"))
    [spec] = load_subagents(tmp_path)
    assert spec["description"] == "Does things."
    assert spec["system_prompt"] == "Be useful."


def test_loaded_specs_run_in_a_deep_agent() -> None:
    model = ScriptedChatModel(
        script={
            "main": [delegate("Find X", "researcher"), say("X found.")],
            "researcher": ["X is here."],
        }
    )
    agent = create_deep_agent(model, [search], subagents=load_subagents(EXAMPLES, tools=[search]))
    out = agent.invoke({"messages": [("user", "find X")]})
    assert out["messages"][-1].content == "X found."
    assert out["messages"][-2].content == "X is here."


# -- errors ------------------------------------------------------------------------------------


def load_error(root: Path, **kwargs: object) -> SubAgentFileError:
    with pytest.raises(SubAgentFileError) as info:
        load_subagents(root, **kwargs)  # type: ignore[arg-type]
    return info.value


@pytest.mark.parametrize("field", ["name", "description"])
def test_missing_required_field(tmp_path: Path, field: str) -> None:
    lines = {"name": "name: a\n", "description": "description: Does.\n"}
    del lines[field]
    path = write_agent(tmp_path, "a", "---\n" + "".join(lines.values()) + "---\nBody.\n")
    error = load_error(tmp_path)
    assert error.path == path
    assert str(path) in str(error)
    assert f"no {field!r} field" in str(error)


def test_empty_string_and_wrong_type_fields(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\nname: a\ndescription: ''\n---\nBody.\n")
    assert "'description' must be a non-empty string" in str(load_error(tmp_path))
    write_agent(tmp_path, "a", "---\nname: a\ndescription: [x]\n---\nBody.\n")
    assert "not list ['x']" in str(load_error(tmp_path))
    write_agent(tmp_path, "a", agent_md("a", extra="model: 3\n"))
    assert "'model' must be a non-empty string" in str(load_error(tmp_path))


def test_unknown_tool_lists_known_ones(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "a", agent_md("a", extra="tools: [search, browse]\n"))
    error = load_error(tmp_path, tools=[search, fetch])
    assert error.path == path
    assert "unknown tool 'browse'" in str(error)
    assert "known tools are: fetch, search" in str(error)


def test_tool_names_without_tools_argument(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", agent_md("a", extra="tools: [search]\n"))
    assert "was not given tools=" in str(load_error(tmp_path))


def test_tools_of_the_wrong_shape(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", agent_md("a", extra="tools: {search: true}\n"))
    assert "'tools' must be a list of tool names" in str(load_error(tmp_path, tools=[search]))


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "a", "---\nname: a\ndescription: Does: [unclosed\n---\nBody.\n")
    error = load_error(tmp_path)
    assert error.path == path
    assert "malformed YAML frontmatter" in str(error)
    assert "line " in str(error)


def test_frontmatter_that_is_not_a_mapping(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\n- name\n- description\n---\nBody.\n")
    assert "must be a YAML mapping" in str(load_error(tmp_path))


def test_name_must_match_directory(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "researcher", agent_md("research"))
    error = load_error(tmp_path)
    assert error.path == path
    assert "name 'research' does not match its directory 'researcher'" in str(error)


@pytest.mark.parametrize(
    "text",
    ["Just a prompt, no frontmatter.\n", "\n---\nname: a\ndescription: d\n---\nBody\n", ""],
)
def test_missing_frontmatter(tmp_path: Path, text: str) -> None:
    write_agent(tmp_path, "a", text)
    assert "no YAML frontmatter" in str(load_error(tmp_path))


def test_unclosed_frontmatter(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\nname: a\ndescription: d\nBody\n")
    assert "no closing '---' line" in str(load_error(tmp_path))


def test_empty_frontmatter_reports_the_missing_name(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\n---\nBody\n")
    assert "no 'name' field" in str(load_error(tmp_path))


def test_empty_body(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "---\nname: a\ndescription: d\n---\n\n  \n")
    assert "body after the frontmatter is empty" in str(load_error(tmp_path))


def test_misspelt_field_is_caught_but_unknown_fields_pass(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", agent_md("a", extra="tool: [search]\n"))
    assert "unknown field 'tool'; did you mean 'tools'?" in str(load_error(tmp_path))
    write_agent(tmp_path, "a", agent_md("a", extra="Model: x:y\n"))
    assert "did you mean 'model'?" in str(load_error(tmp_path))
    write_agent(tmp_path, "a", agent_md("a", extra="color: blue\nversion: 2\n"))
    assert load_subagents(tmp_path)[0]["name"] == "a"


def test_invalid_name_is_reported_with_the_file(tmp_path: Path) -> None:
    path = write_agent(tmp_path, "my agent", agent_md("my agent"))
    error = load_error(tmp_path)
    assert error.path == path
    assert "may only use letters, digits" in str(error)


def test_misspelt_file_name(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "agents.md").write_text(agent_md("a"))
    if (tmp_path / "a" / "AGENTS.md").exists():
        pytest.skip("case-insensitive file system")
    assert "rename it to AGENTS.md" in str(load_error(tmp_path))


def test_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "AGENTS.md").write_bytes(b"---\nname: \xff\n---\n")
    assert "not UTF-8" in str(load_error(tmp_path))


def test_path_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="is not a directory"):
        load_subagents(tmp_path / "file")


def test_duplicate_tool_names_in_sequence(tmp_path: Path) -> None:
    @tool("search")
    def other(query: str) -> str:
        """Another search."""
        return query

    with pytest.raises(ValueError, match="Two different tools are named 'search'"):
        load_subagents(tmp_path, tools=[search, other])


def test_error_is_a_value_error(tmp_path: Path) -> None:
    write_agent(tmp_path, "a", "no frontmatter")
    with pytest.raises(ValueError):
        load_subagents(tmp_path)
