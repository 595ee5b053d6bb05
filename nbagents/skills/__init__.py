"""Skills: SKILL.md folders found on a backend and listed in the prompt (progressive disclosure)."""

from nbagents._contract import SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.skills._discovery import discover_skill_dirs, discover_skills
from nbagents.skills._frontmatter import (
    MAX_DESCRIPTION_CHARS,
    MAX_FRONTMATTER_BYTES,
    MAX_NAME_CHARS,
    MAX_SKILL_FILE_BYTES,
    SkillFormatError,
    name_problem,
    parse_skill,
)
from nbagents.skills._middleware import SkillsMiddleware, SkillsState
from nbagents.skills._prompt import SKILLS_PROMPT_SECTION, skills_section
from nbagents.skills._records import SkillMetadata, SkillsDiscovery, SkillSource, SkillWarning

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_FRONTMATTER_BYTES",
    "MAX_NAME_CHARS",
    "MAX_SKILL_FILE_BYTES",
    "SKILLS_ERRORS_KEY",
    "SKILLS_METADATA_KEY",
    "SKILLS_PROMPT_SECTION",
    "SkillFormatError",
    "SkillMetadata",
    "SkillSource",
    "SkillWarning",
    "SkillsDiscovery",
    "SkillsMiddleware",
    "SkillsState",
    "discover_skill_dirs",
    "discover_skills",
    "name_problem",
    "parse_skill",
    "skills_section",
]
