"""Front matter as Claude Code reads it (docs/claude-code.md, "Front matter").

Synthetic files pin each rule; `test_claude_artefacts.py` runs the real ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.claude.frontmatter import FrontMatterError, split_front_matter, text_field
from agentls.agent.claude.prompt_commands import discover_commands
from agentls.agent.claude.skills import discover_skills
from agentls.agent.claude.subagents import AgentCatalog, parse_agent_file

EXAMPLES_AGENT = """---
name: reviewer
description: Use this agent after a change. Examples:

<example>
Context: The user has just finished a feature.
user: "Review it"
assistant: "I'll use the reviewer agent."
<commentary>
A review was asked for.
</commentary>
</example>
model: inherit
tools: ["Read", "Grep"]
---

You review code.
"""


def test_strict_yaml_is_read_as_it_is() -> None:
    data, body = split_front_matter("---\nname: a\ntools:\n  - Read\n  - Grep\n---\nbody\n")
    assert data == {"name": "a", "tools": ["Read", "Grep"]}
    assert body == "body\n"


def test_unquoted_description_with_examples_is_one_field(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.md"
    path.write_text(EXAMPLES_AGENT)
    agent = parse_agent_file(path)
    assert agent.name == "reviewer"
    assert agent.description.startswith("Use this agent after a change. Examples: <example>")
    assert 'user: "Review it"' in agent.description
    assert agent.description.endswith("</example>")
    assert agent.tools == ("Read", "Grep")
    assert agent.model == "inherit"
    assert agent.prompt == "You review code."


def test_one_line_description_with_reserved_characters_is_quoted() -> None:
    text = (
        '---\nname: a\ndescription: Finds bugs. <example>Context: x\\nuser: "go"</example>\n'
        "argument-hint: [user prompt] [orchestration prompt]\n---\n"
    )
    data, _ = split_front_matter(text)
    assert data["description"] == 'Finds bugs. <example>Context: x\\nuser: "go"</example>'
    assert data["argument-hint"] == "[user prompt] [orchestration prompt]"


def test_bracketed_argument_hint_reads_as_written() -> None:
    data, _ = split_front_matter("---\nargument-hint: [project-name]\n---\nx")
    assert text_field(data, "argument-hint") == "[project-name]"


def test_front_matter_without_name_or_description_still_fails() -> None:
    with pytest.raises(FrontMatterError, match="not valid YAML"):
        split_front_matter("---\nfoo: a: b\n---\nbody")


def test_skill_name_with_spaces_loads(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "agent-development"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: Agent Development\ndescription: Build agents.\n---\nSteps.\n"
    )
    catalog = discover_skills([tmp_path], home=tmp_path / "home")
    assert catalog.names == ["Agent Development"]
    assert catalog.problems == []
    assert catalog.find("agent development") is not None


def test_skill_name_with_a_line_break_or_slash_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "skills" / "x"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text('---\nname: "../evil"\ndescription: d\n---\nbody\n')
    catalog = discover_skills([tmp_path], home=tmp_path / "home")
    assert catalog.names == []
    assert "not a name" in catalog.problems[0]


def test_command_with_bracketed_hint_loads(tmp_path: Path) -> None:
    folder = tmp_path / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "new.md").write_text(
        "---\ndescription: Start a project\nargument-hint: [project-name]\n---\nCreate $1\n"
    )
    catalog = discover_commands([tmp_path], home=tmp_path / "home")
    assert catalog.problems == []
    command = catalog.find("new")
    assert command is not None
    assert command.argument_hint == "[project-name]"


def test_agents_in_subfolders_load(tmp_path: Path) -> None:
    team = tmp_path / ".claude" / "agents" / "team"
    team.mkdir(parents=True)
    (team / "builder.md").write_text("---\nname: builder\ndescription: Builds.\n---\nBuild.\n")
    catalog = AgentCatalog([tmp_path], home=tmp_path / "home")
    assert catalog.find("builder") is not None
    assert catalog.problems == []


def test_claude_codes_tool_names_in_tools_keep_their_tools() -> None:
    from agentls.agent.claude.subagents import AgentType
    from agentls.tools import builtin_tools

    names = ("WebFetch", "WebSearch", "NotebookEdit", "NotebookRead", "TaskCreate", "Skill")
    agent = AgentType("a", "d", "p", tools=names)
    tools = builtin_tools()
    chosen = {t.name for t in agent.select_tools(tools)}
    assert chosen == {
        "web_fetch",
        "web_search",
        "notebook_edit",
        "read_file",
        "todo_write",
        "skill",
    }
    assert agent.missing_tools(tools) == []
    odd = AgentType("b", "d", "p", tools=("WebSearch", "Teleport"))
    assert odd.missing_tools(tools) == ["Teleport"]


def test_model_aliases_resolve_as_claude_code_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentls.agent.claude.subagents import AgentType

    def model(name: str) -> str:
        return AgentType("a", "d", "p", model=name).model_for("claude-parent-1")[0]

    assert model("inherit") == "claude-parent-1"
    assert model("haiku") == "claude-haiku-5-5"
    assert model("opus") == "claude-opus-5-5"
    assert model("fable") == "claude-fable-5-1"
    assert model("sonnet[1m]") == "claude-sonnet-5-5"
    assert model("claude-x-9") == "claude-x-9"
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "claude-haiku-4-5")
    assert model("haiku") == "claude-haiku-4-5"


def test_a_projects_safe_env_is_kept_and_a_dangerous_one_dropped() -> None:
    from agentls.agent.claude.settings import filter_env

    env = {"NODE_ENV": "test", "RUST_LOG": "debug", "NODE_OPTIONS": "--require x", "PATH": "/x"}
    kept, problems = filter_env(env, ".claude/settings.json", user_level=False)
    assert kept == {"NODE_ENV": "test", "RUST_LOG": "debug"}
    assert len(problems) == 2
