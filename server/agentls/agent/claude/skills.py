"""Skills in Claude Code's format: `<folder>/SKILL.md` with front matter `name`,
`description` and optional `allowed-tools`, plus any files the skill brings.

Discovered in `.claude/skills/*/`, `.agentls/skills/*/` of each workspace root and in
`~/.claude/skills/*/`. Names and descriptions go into the system prompt (once per session,
so it stays byte-stable); the `skill` tool loads a skill's body and lists its files, which
`read_file` may then read even outside the workspace — those files only.

That last point is a boundary, so it is narrow:
- a skill folder must be a real folder: a symbolic link (to `~/.ssh`, say) is skipped and
  reported, never followed; so is a `SKILL.md` that is a link;
- a file is readable only when its real path (symlinks resolved, `..` collapsed) is inside
  the real path of a discovered skill folder;
- the pipeline's own steps still apply to those reads (secret files, deny rules).
A skill that cannot be used (no front matter, bad YAML, no description, a link) is
reported in the catalog's `problems` and skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from agentls.agent.claude.frontmatter import (
    FrontMatterError,
    read_markdown,
    text_field,
    tools_field,
)

SkillSource = Literal["project", "user"]
SKILL_FILE = "SKILL.md"
MAX_SKILLS = 200
MAX_LISTED_FILES = 200
DESCRIPTION_BUDGET = 16_000
"""Characters of skill descriptions in the system prompt, as Claude Code caps its listing
(`SLASH_COMMAND_TOOL_CHAR_BUDGET` changes it); skills past it are listed by name only."""


def description_budget() -> int:
    raw = os.environ.get("SLASH_COMMAND_TOOL_CHAR_BUDGET", "")
    return int(raw) if raw.strip().isdigit() and int(raw) > 0 else DESCRIPTION_BUDGET


_NAME = re.compile(r"^[^\x00-\x1f\x7f/\\:]{1,64}$")
"""Claude Code shows a skill's `name` as written: `Agent Development` is a name."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    """The skill's real folder (no symlink anywhere in it)."""
    source: SkillSource
    body: str
    allowed_tools: tuple[str, ...] = ()
    plugin: str = ""
    """The plugin it came from (`plugin-dev@claude-code-plugins`); named `plugin:name`."""

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass
class SkillCatalog:
    skills: list[Skill] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def find(self, name: str) -> Skill | None:
        wanted = name.strip().lower()
        return next((s for s in self.skills if s.name.lower() == wanted), None)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]

    def readable(self, raw: str | Path) -> Path | None:
        """The real path of `raw` when it is a file inside a skill folder, else None."""
        text = os.path.expanduser(str(raw).strip())
        if not os.path.isabs(text):
            return None
        real = Path(os.path.realpath(text))
        for skill in self.skills:
            if real.is_relative_to(skill.folder) and real != skill.folder:
                return real
        return None

    def prompt_section(self) -> str:
        """The system prompt's list of skills (empty without skills)."""
        if not self.skills:
            return ""
        lines = [
            "# Skills",
            "Skills are instructions and files for particular tasks. When a task matches a "
            "skill's description, load it with the skill tool before you start, then follow "
            "it (its files can be read with read_file).",
        ]
        budget = description_budget()
        used = 0
        hidden: list[str] = []
        for skill in self.skills:
            line = f"- {skill.name}: {skill.description}"
            if used + len(line) > budget:
                hidden.append(skill.name)
                continue
            lines.append(line)
            used += len(line)
        if hidden:
            lines.append(
                f"More skills (descriptions left out to keep this list within {budget} "
                f"characters; load one with the skill tool to read it): {', '.join(hidden)}"
            )
        return "\n".join(lines)


def skill_bases(roots: Sequence[Path], home: Path) -> list[tuple[Path, SkillSource]]:
    """Where skills live, in precedence order (the first skill of a name wins)."""
    bases: list[tuple[Path, SkillSource]] = []
    for root in roots:
        bases.append((root / ".claude" / "skills", "project"))
        bases.append((root / ".agentls" / "skills", "project"))
    bases.append((home / ".claude" / "skills", "user"))
    return bases


def discover_skills(roots: Sequence[Path], home: Path | None = None) -> SkillCatalog:
    catalog = SkillCatalog()
    for base, source in skill_bases(roots, home or Path.home()):
        for folder in _folders(base, catalog):
            if len(catalog.skills) >= MAX_SKILLS:
                catalog.problems.append(f"more than {MAX_SKILLS} skills; the rest are skipped")
                return catalog
            skill = _load(folder, source, catalog)
            if skill is None:
                continue
            if catalog.find(skill.name) is not None:
                catalog.problems.append(
                    f"skill {skill.name!r} in {folder} has the name of an earlier one; skipped"
                )
                continue
            catalog.skills.append(skill)
    _add_plugin_skills(catalog, roots, home or Path.home())
    return catalog


def _add_plugin_skills(catalog: SkillCatalog, roots: Sequence[Path], home: Path) -> None:
    """Enabled plugins' `skills/`, named `plugin:skill` (`agentls.agent.claude.plugins`)."""
    from agentls.agent.claude.plugins import load_plugins

    for plugin, base in load_plugins(roots, home).folders("skills"):
        source: SkillSource = "user" if plugin.user_level else "project"
        for folder in _folders(base, catalog):
            skill = _load(folder, source, catalog)
            if skill is None or len(catalog.skills) >= MAX_SKILLS:
                continue
            named = replace(skill, name=f"{plugin.name}:{skill.name}", plugin=plugin.key)
            if catalog.find(named.name) is None:
                catalog.skills.append(named)


def _folders(base: Path, catalog: SkillCatalog) -> Iterator[Path]:
    try:
        if base.is_symlink() or not base.is_dir():
            if base.is_symlink():
                catalog.problems.append(f"{base} is a symbolic link; skills there are not read")
            return
        entries = sorted(base.iterdir())
    except OSError:
        return
    for entry in entries:
        if entry.is_symlink():
            catalog.problems.append(
                f"skill folder {entry} is a symbolic link (to {os.path.realpath(entry)}); "
                "skipped: skills must be real folders (copy it instead)"
            )
        elif entry.is_dir():
            yield entry


def _load(folder: Path, source: SkillSource, catalog: SkillCatalog) -> Skill | None:
    file = folder / SKILL_FILE
    if file.is_symlink():
        catalog.problems.append(f"{file} is a symbolic link; skipped")
        return None
    if not file.is_file():
        return None  # not a skill folder (a README, shared files)
    try:
        data, body = read_markdown(file)
        name = text_field(data, "name") or folder.name
        description = text_field(data, "description")
        tools = tools_field(data)
    except FrontMatterError as exc:
        catalog.problems.append(f"skill {file}: {exc}; skipped")
        return None
    if not data:
        catalog.problems.append(
            f"skill {file}: no front matter (`---` with name and description); skipped"
        )
        return None
    if not description:
        catalog.problems.append(f"skill {file}: no `description`; skipped")
        return None
    if not _NAME.match(name):
        catalog.problems.append(
            f"skill {file}: the name {name!r} is not a name (1 to 64 characters, no line "
            "breaks, `/`, `\\` or `:`); skipped"
        )
        return None
    real = Path(os.path.realpath(folder))
    return Skill(name, " ".join(description.split()), real, source, body.strip(), tools)


def skill_files(skill: Skill) -> list[Path]:
    """The skill's other files (no symlinks followed), for the skill tool to list."""
    found: list[Path] = []
    for top, dirs, files in os.walk(skill.folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            path = Path(top, name)
            if path == skill.file or path.is_symlink():
                continue
            found.append(path)
            if len(found) >= MAX_LISTED_FILES:
                return found
    return found
