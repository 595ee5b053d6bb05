"""SKILL.md frontmatter validation against the Agent Skills format."""

from __future__ import annotations

import pytest

from nbagents.skills import (
    MAX_FRONTMATTER_BYTES,
    MAX_SKILL_FILE_SIZE,
    SkillFormatError,
    name_problem,
    parse_skill,
)


def skill_md(frontmatter: str, body: str = "Body.\n") -> str:
    return f"---\n{frontmatter}\n---\n{body}"


def parse(text: str, folder: str = "pdf-tools") -> tuple[dict[str, object], list[str]]:
    skill, warnings = parse_skill(text, folder=folder, path="/s/pdf-tools/SKILL.md")
    return dict(skill), warnings


def test_a_full_skill_keeps_every_field() -> None:
    text = skill_md(
        "name: pdf-tools\n"
        "description: Work with PDF files.\n"
        "license: MIT\n"
        "compatibility: Needs poppler.\n"
        "metadata:\n  author: ada\n  version: '1.0'\n"
        "allowed-tools: read_file grep"
    )
    skill, warnings = parse(text)
    assert skill == {
        "name": "pdf-tools",
        "description": "Work with PDF files.",
        "path": "/s/pdf-tools/SKILL.md",
        "license": "MIT",
        "compatibility": "Needs poppler.",
        "metadata": {"author": "ada", "version": "1.0"},
        "allowed_tools": ["read_file", "grep"],
    }
    assert warnings == []


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("PDF", "lowercase letters, digits and single hyphens"),
        ("pdf_tools", "lowercase letters"),
        ("-pdf", "may not start or end with a hyphen"),
        ("pdf-", "may not start or end with a hyphen"),
        ("pdf--tools", "single hyphens"),
        ("pdf tools", "lowercase letters"),
        ("a" * 65, "65 characters long; the limit is 64"),
        ("", "non-empty string"),
    ],
)
def test_bad_names(name: str, problem: str) -> None:
    assert problem in (name_problem(name) or "")
    with pytest.raises(SkillFormatError, match=problem):
        parse(skill_md(f"name: {name!r}\ndescription: d"), folder=name or "x")


def test_good_names() -> None:
    for name in ("a", "pdf", "pdf-tools", "v2-api-3", "a" * 64):
        assert name_problem(name) is None


def test_name_must_equal_the_folder() -> None:
    with pytest.raises(
        SkillFormatError, match="name 'pdf-tools' must equal its folder's name 'pdf'"
    ):
        parse(skill_md("name: pdf-tools\ndescription: d"), folder="pdf")


@pytest.mark.parametrize(
    ("frontmatter", "problem"),
    [
        ("name: pdf-tools", "description must be a non-empty string"),
        ("name: pdf-tools\ndescription: '   '", "description must be a non-empty string"),
        ("name: pdf-tools\ndescription: [a, b]", "description must be a non-empty string"),
        (f"name: pdf-tools\ndescription: {'d' * 1025}", "1025 characters long; the limit is 1024"),
        ("description: d", "name must be a non-empty string"),
        ("name: 42\ndescription: d", "name must be a non-empty string"),
        ("- just\n- a list", "must be a YAML mapping"),
        ("name: [unclosed\ndescription: d", "not valid YAML"),
        ("name: pdf-tools\n  description: : bad", "not valid YAML"),
    ],
)
def test_bad_frontmatter(frontmatter: str, problem: str) -> None:
    with pytest.raises(SkillFormatError, match=problem):
        parse(skill_md(frontmatter))


def test_yaml_errors_name_the_line() -> None:
    with pytest.raises(SkillFormatError, match=r"frontmatter line \d"):
        parse(skill_md("name: pdf-tools\ndescription: d\nbad: [1, 2"))


def test_missing_or_unclosed_frontmatter() -> None:
    with pytest.raises(SkillFormatError, match="must start with a '---' line"):
        parse("# PDF tools\n")
    with pytest.raises(SkillFormatError, match="must start with a '---' line"):
        parse("---name: x\n")
    with pytest.raises(SkillFormatError, match="not closed: add a '---' line"):
        parse("---\nname: pdf-tools\ndescription: d\n")


def test_oversized_frontmatter_and_file() -> None:
    huge = "---\nname: pdf-tools\ndescription: d\nx: " + "y" * MAX_FRONTMATTER_BYTES + "\n---\n"
    with pytest.raises(SkillFormatError, match=f"not closed within {MAX_FRONTMATTER_BYTES}"):
        parse(huge)
    big_body = skill_md("name: pdf-tools\ndescription: d", "z" * MAX_SKILL_FILE_SIZE)
    with pytest.raises(SkillFormatError, match=r"SKILL\.md is \d+ characters long"):
        parse(big_body)


def test_bom_and_crlf_are_accepted() -> None:
    skill, _ = parse("\ufeff---\r\nname: pdf-tools\r\ndescription: d\r\n---\r\nBody\r\n")
    assert skill["name"] == "pdf-tools" and skill["description"] == "d"


def test_bad_optional_fields_are_warnings_not_errors() -> None:
    skill, warnings = parse(
        skill_md(
            "name: pdf-tools\ndescription: d\nlicense: 3\n"
            f"compatibility: {'c' * 501}\nmetadata:\n  version: 1.0\n"
            "allowed-tools: {a: b}\nowner: me\ntags: [x]"
        )
    )
    # Ignored fields keep deepagents' empty values: every record has the same keys.
    assert {k: skill[k] for k in ("license", "compatibility", "metadata", "allowed_tools")} == {
        "license": None,
        "compatibility": None,
        "metadata": {},
        "allowed_tools": [],
    }
    assert warnings == [
        "unknown frontmatter keys ignored: owner, tags",
        "license must be a string; ignored",
        "compatibility is 501 characters long (limit 500); ignored",
        "metadata must map strings to strings (quote numbers and dates); ignored",
        "allowed-tools must be a space-separated string of tool names; ignored",
    ]


def test_allowed_tools_as_a_list() -> None:
    skill, _ = parse(skill_md("name: pdf-tools\ndescription: d\nallowed-tools: [ls, grep]"))
    assert skill["allowed_tools"] == ["ls", "grep"]
