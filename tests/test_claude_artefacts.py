"""Real, unchanged artefacts people publish for Claude Code load in agentls.

The repositories are exported from the fetched mirrors (`tests/artefact_support.py`);
without them these tests skip. Every file Claude Code accepts must load; a file that does
not is reported with its reason, never silently dropped.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.agent.claude.plugins import commands_with_plugins
from agentls.agent.claude.prompt_commands import discover_commands
from agentls.agent.claude.skills import discover_skills
from agentls.agent.claude.subagents import AgentCatalog, parse_agent_file
from tests.artefact_support import Artefacts

ANTHROPIC = "anthropics/claude-code"
WSHOBSON_AGENTS = "wshobson/agents"
HOOKS_MASTERY = "disler/claude-code-hooks-mastery"


def _component_files(repo: Path, kind: str) -> Iterator[Path]:
    """Plugin components of `kind` (agents, commands) outside skills' own files."""
    for path in sorted(repo.rglob("*.md")):
        parts = path.relative_to(repo).parts
        if kind in parts[:-1] and "skills" not in parts and "examples" not in parts:
            yield path


def test_every_agent_of_anthropics_plugins_loads(artefacts: Artefacts) -> None:
    repo = artefacts(ANTHROPIC)
    files = sorted((repo / "plugins").glob("*/agents/*.md"))
    agents = [parse_agent_file(path) for path in files]
    assert len(agents) == 15
    assert {a.name for a in agents} >= {"agent-creator", "silent-failure-hunter"}
    assert all(a.description and a.prompt for a in agents)
    creator = next(a for a in agents if a.name == "agent-creator")
    assert "<example>" in creator.description
    assert "Context:" in creator.description
    assert creator.tools == ("Write", "Read")


def test_every_agent_of_wshobson_agents_loads(artefacts: Artefacts) -> None:
    repo = artefacts(WSHOBSON_AGENTS)
    files = list(_component_files(repo / "plugins", "agents"))
    assert len(files) > 150
    for path in files:
        agent = parse_agent_file(path)
        assert agent.name, path
        assert agent.description, path


def test_hooks_mastery_workspace_loads_every_agent_and_command(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    repo = artefacts(HOOKS_MASTERY)
    agent_files = list((repo / ".claude" / "agents").rglob("*.md"))
    catalog = AgentCatalog([repo], home=tmp_path)
    assert catalog.problems == []
    custom = [t for t in catalog.types() if t.source != "built-in"]
    assert len(custom) == len(agent_files) == 19
    assert catalog.find("builder") is not None  # .claude/agents/team/builder.md
    commands = discover_commands([repo], home=tmp_path)
    assert commands.problems == []
    assert len(commands.commands) == len(list((repo / ".claude" / "commands").rglob("*.md")))


def test_skills_and_commands_of_the_artefacts_load(artefacts: Artefacts, tmp_path: Path) -> None:
    for name in (ANTHROPIC, WSHOBSON_AGENTS, "anthropics/skills"):
        repo = artefacts(name)
        skill_files = sorted(repo.rglob("SKILL.md"))
        for index, skill in enumerate(skill_files):
            target = tmp_path / name / ".claude" / "skills" / f"{index:03}"
            shutil.copytree(skill.parent, target)
        catalog = discover_skills([tmp_path / name], home=tmp_path / "home")
        assert catalog.problems == [], name
        assert len(catalog.skills) + _duplicates(catalog.names, skill_files) == len(skill_files)
        for index, command in enumerate(_component_files(repo, "commands")):
            target = tmp_path / f"{name}-commands" / ".claude" / "commands" / f"{index:03}"
            target.mkdir(parents=True)
            shutil.copy(command, target / command.name)
        commands = discover_commands([tmp_path / f"{name}-commands"], home=tmp_path / "home")
        assert all("also defined" in p for p in commands.problems), commands.problems


def _duplicates(names: list[str], files: list[Path]) -> int:
    from agentls.agent.claude.frontmatter import read_markdown

    declared = [str(read_markdown(f)[0].get("name") or f.parent.name).lower() for f in files]
    return len(declared) - len(set(declared))


def test_wshobsons_181_skills_stay_within_the_description_budget(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    repo = artefacts(WSHOBSON_AGENTS)
    for index, skill in enumerate(sorted(repo.rglob("SKILL.md"))):
        shutil.copytree(skill.parent, tmp_path / ".claude" / "skills" / f"{index:03}")
    catalog = discover_skills([tmp_path], home=tmp_path / "home")
    assert len(catalog.skills) == 181
    full = sum(len(s.description) for s in catalog.skills)
    assert full > 40_000  # what the listing held before
    section = catalog.prompt_section()
    assert len(section) < 16_000 + 181 * 64  # descriptions capped, the rest by name
    assert all(s.name in section for s in catalog.skills)  # every skill stays loadable


def test_an_output_style_of_hooks_mastery_joins_the_system_prompt(
    artefacts: Artefacts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.agent.run.prompts import build_system_prompt

    repo = artefacts(HOOKS_MASTERY)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"outputStyle": "Ultra Concise"}')
    monkeypatch.setenv("HOME", str(home))
    [block] = build_system_prompt([repo])
    assert "# Output style: Ultra Concise" in block["text"]


def test_wshobsons_marketplace_offers_every_agent_skill_and_command(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    """`wshobson/agents` is a marketplace of 90-odd plugins: enabled through
    `~/.claude/settings.json`, every local plugin loads and every agent and command file is
    offered under its plugin's name (agents of the same name in two plugins stay apart)."""
    import json

    from agentls.agent.claude.plugins import load_plugins

    repo = artefacts(WSHOBSON_AGENTS)
    entries = json.loads((repo / ".claude-plugin/marketplace.json").read_text())["plugins"]
    names = [entry["name"] for entry in entries]
    remote = [entry["name"] for entry in entries if not isinstance(entry["source"], str)]
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "extraKnownMarketplaces": {
                    "wshobson": {"source": {"source": "directory", "path": str(repo)}}
                },
                "enabledPlugins": {f"{name}@wshobson": True for name in names},
            }
        )
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    plugins = load_plugins([ws], home)
    # a plugin whose source is a git repository is skipped, saying why (never silently)
    assert [why.split(":")[0] for why in plugins.skipped] == [f"{n}@wshobson" for n in remote]
    assert all("is a git-subdir source" in why for why in plugins.skipped)
    assert len(plugins.plugins) == len(names) - len(remote)
    agent_files = [f for p in plugins.plugins for d in p.folders("agents") for f in d.rglob("*.md")]
    catalog = AgentCatalog([ws], home=home)
    assert catalog.problems == []
    custom = [t for t in catalog.types() if t.source != "built-in"]
    assert len(custom) == len(agent_files)
    command_files = [
        f for p in plugins.plugins for d in p.folders("commands") for f in d.rglob("*.md")
    ]
    commands = commands_with_plugins([ws], home=home)
    assert commands.problems == []
    assert len(commands.commands) == len(command_files)
