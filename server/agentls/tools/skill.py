"""`skill`: load a skill's instructions (its SKILL.md body) and list its files."""

from __future__ import annotations

from pydantic import Field

from agentls.agent.claude.skills import Skill, skill_files
from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.workspace.textio import human_size


class SkillInput(ToolInput):
    name: str = Field(description="The skill's name, as the system prompt lists it.")


class SkillTool(Tool[SkillInput]):
    name = "skill"
    input_model = SkillInput
    search_hint = "skill instructions playbook load"
    usage = """
Load a skill: instructions (and files) for a particular kind of task, written by the user
or their team. The system prompt lists the skills available, each with a description.

- When the task matches a skill's description, load it before you start and follow it.
- The result is the skill's instructions and the list of its other files (absolute paths);
  read those you need with read_file — they may be outside the workspace.
- Load a skill once per conversation; it stays in the context.

Example: {"name": "release-notes"}
"""

    def is_read_only(self, input: SkillInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: SkillInput) -> bool:
        return True

    def summary(self, input: SkillInput) -> str:
        return f"Loading skill {input.name}"

    async def call(self, input: SkillInput, ctx: ToolContext) -> str:
        catalog = ctx.services.skills
        skill = catalog.find(input.name)
        if skill is None:
            known = ", ".join(catalog.names) or "none are installed"
            raise ToolError(f"no skill named {input.name!r} (skills: {known})")
        return render(skill)


def render(skill: Skill) -> str:
    lines = [f'<skill name="{skill.name}" folder="{skill.folder}">', skill.body, "</skill>"]
    files = skill_files(skill)
    if files:
        lines.append("Files of this skill (read them with read_file when the instructions say):")
        for path in files:
            try:
                size = human_size(path.stat().st_size)
            except OSError:
                size = "?"
            lines.append(f"- {path} ({size})")
    if skill.allowed_tools:
        lines.append(
            "The skill says it uses these tools: "
            + ", ".join(skill.allowed_tools)
            + ". They need the user's permission as usual (a skill grants none)."
        )
    return "\n".join(lines)
