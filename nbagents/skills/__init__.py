"""Skills: SKILL.md folders found on a backend and listed in the prompt (progressive disclosure)."""

from nbagents._contract import SKILLS_ERRORS_KEY, SKILLS_METADATA_KEY
from nbagents.skills._built_in import (
    BUILT_IN_SKILLS_DIR,
    BUILT_IN_SKILLS_SOURCE,
    SKILL_CREATOR,
    SKILL_TEMPLATE_FILE,
    built_in_skills_backend,
    skill_template,
)
from nbagents.skills._discovery import (
    acheck_skill,
    check_skill,
    discover_skill_dirs,
    discover_skills,
)
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
from nbagents.skills._records import (
    SkillCheck,
    SkillMetadata,
    SkillsDiscovery,
    SkillSource,
    SkillWarning,
)
from nbagents.skills._tool import CHECK_SKILL_TOOL, check_skill_tool

__all__ = [
    "BUILT_IN_SKILLS_DIR",
    "BUILT_IN_SKILLS_SOURCE",
    "CHECK_SKILL_TOOL",
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
    "SKILL_CREATOR",
    "SKILL_TEMPLATE_FILE",
    "SkillCheck",
    "SkillFormatError",
    "SkillMetadata",
    "SkillSource",
    "SkillWarning",
    "SkillsDiscovery",
    "SkillsMiddleware",
    "SkillsState",
    "acheck_skill",
    "built_in_skills_backend",
    "check_skill",
    "check_skill_tool",
    "discover_skill_dirs",
    "discover_skills",
    "name_problem",
    "parse_skill",
    "skill_template",
    "skills_section",
]
