"""Skills: SKILL.md folders found on a backend and listed in the prompt (progressive disclosure)."""

from nbagents._contract import SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.skills._discovery import discover_skill_dirs, discover_skills
from nbagents.skills._frontmatter import (
    MAX_FRONTMATTER_BYTES,
    MAX_SKILL_COMPATIBILITY_LENGTH,
    MAX_SKILL_DESCRIPTION_LENGTH,
    MAX_SKILL_FILE_SIZE,
    MAX_SKILL_NAME_LENGTH,
    SkillFormatError,
    name_problem,
    parse_skill,
)
from nbagents.skills._middleware import SkillsMiddleware, SkillsState
from nbagents.skills._prompt import (
    MAX_SKILL_LOAD_WARNING_LENGTH,
    MAX_SKILLS_LOAD_WARNINGS,
    SKILLS_PROMPT_SECTION,
    skills_section,
)
from nbagents.skills._records import SkillMetadata, SkillsDiscovery, SkillSource, SkillWarning

__all__ = [
    "MAX_FRONTMATTER_BYTES",
    "MAX_SKILLS_LOAD_WARNINGS",
    "MAX_SKILL_COMPATIBILITY_LENGTH",
    "MAX_SKILL_DESCRIPTION_LENGTH",
    "MAX_SKILL_FILE_SIZE",
    "MAX_SKILL_LOAD_WARNING_LENGTH",
    "MAX_SKILL_NAME_LENGTH",
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
