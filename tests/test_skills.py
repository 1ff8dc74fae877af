"""Skills: discovery, the system prompt, the skill tool, and read_file's narrow access to
skill folders outside the workspace, tested as an attacker would try to widen it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.agent.claude.skills import discover_skills
from agentls.agent.run.pipeline import ToolCall
from agentls.agent.settings import AgentSettings
from agentls.host import AgentHost, HostOptions
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.workspace import Workspace
from tests.ws_support import Runner, make_ctx

PDF_SKILL = """---
name: pdf
description: Fill in and merge PDF forms.
allowed-tools: Bash(python:*), Read
---
# PDF forms
Use forms.py to fill forms. See reference.md.
"""


async def load_skill(run: Runner, name: str, *, error: bool = False) -> str:
    result = await run.pipeline.execute(ToolCall("s1", "skill", {"name": name}), run.ctx)
    assert result.is_error == error, result.content
    assert isinstance(result.content, str)
    return result.content


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    write(home / ".claude" / "skills" / "pdf" / "SKILL.md", PDF_SKILL)
    write(home / ".claude" / "skills" / "pdf" / "reference.md", "Field names: a, b.\n")
    write(home / ".claude" / "skills" / "pdf" / "scripts" / "forms.py", "print('x')\n")
    write(home / ".claude" / "settings.json", '{"permissions": {}}\n')
    write(home / ".ssh" / "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    write(home / ".ssh" / "config", "Host *\n")
    write(home / "notes.txt", "private notes\n")
    write(home / ".claude" / "skills" / "pdf-evil" / "loot.txt", "not a skill\n")
    return home


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    write(
        root / ".claude" / "skills" / "release" / "SKILL.md",
        "---\nname: release\ndescription: Write the release notes\n  from the changelog.\n---\n"
        "Read CHANGELOG.md and summarise it.\n",
    )
    write(
        root / ".agentls" / "skills" / "style" / "SKILL.md",
        "---\ndescription: House style for Python.\n---\nUse type hints.\n",
    )
    write(root / ".claude" / "skills" / "broken" / "SKILL.md", "---\n\tname: [oops\n---\nbody\n")
    write(root / ".claude" / "skills" / "nodesc" / "SKILL.md", "---\nname: nodesc\n---\nbody\n")
    write(root / ".claude" / "skills" / "plain" / "SKILL.md", "just text, no front matter\n")
    write(root / "app.py", "x = 1\n")
    return root


def test_discovery_reports_and_skips_malformed_skills(root: Path, home: Path) -> None:
    catalog = discover_skills([root], home)
    assert catalog.names == ["release", "style", "pdf"]
    assert catalog.find("style") is not None
    assert catalog.find("style").source == "project"  # type: ignore[union-attr]
    assert catalog.find("pdf").allowed_tools == ("Bash(python:*)", "Read")  # type: ignore[union-attr]
    problems = "\n".join(catalog.problems)
    assert "broken/SKILL.md: its front matter is not valid YAML" in problems
    assert "nodesc/SKILL.md: no `description`; skipped" in problems
    assert "plain/SKILL.md: no front matter" in problems
    section = catalog.prompt_section()
    assert "- release: Write the release notes from the changelog." in section
    assert "- pdf: Fill in and merge PDF forms." in section


async def test_the_skill_tool_loads_the_body_and_lists_its_files(root: Path, home: Path) -> None:
    run = Runner(make_ctx(root))
    run.ctx.services.skills = discover_skills([root], home)
    out = await load_skill(run, "pdf")
    folder = home / ".claude" / "skills" / "pdf"
    assert f'<skill name="pdf" folder="{folder}">' in out
    assert "Use forms.py to fill forms." in out
    assert "description:" not in out
    assert f"- {folder / 'reference.md'} (19 bytes)" in out
    assert f"- {folder / 'scripts' / 'forms.py'}" in out
    assert "a skill grants none" in out
    message = await load_skill(run, "nope", error=True)
    assert "no skill named 'nope' (skills: release, style, pdf)" in message
    read = await run.ok("read_file", path=str(folder / "reference.md"))
    assert "Field names: a, b." in read
    read = await run.ok(
        "read_file", path="~/.claude/skills/pdf/reference.md".replace("~", str(home))
    )
    assert "Field names" in read


@pytest.mark.parametrize(
    "target",
    [
        "{home}/.claude/skills/pdf/../../settings.json",  # .. out of the skill folder
        "{home}/.claude/skills/pdf/../pdf-evil/loot.txt",  # a sibling that is no skill
        "{home}/.claude/skills/pdf-evil/loot.txt",  # a name sharing the prefix
        "{home}/notes.txt",
        "{home}/.ssh/config",
        "{home}/.claude/skills/pdf/link-to-ssh/config",  # a symlink inside the skill
        "{home}/.claude/skills/pdf/notes-link.txt",
        "{home}/.claude/skills",  # the skills folder itself
    ],
)
async def test_read_file_outside_the_workspace_stays_refused(
    root: Path, home: Path, target: str
) -> None:
    folder = home / ".claude" / "skills" / "pdf"
    os.symlink(home / ".ssh", folder / "link-to-ssh")
    os.symlink(home / "notes.txt", folder / "notes-link.txt")
    run = Runner(make_ctx(root))
    run.ctx.services.skills = discover_skills([root], home)
    message = await run.error("read_file", path=target.format(home=home))
    assert "outside the workspace" in message, message
    listed = await load_skill(run, "pdf")
    assert "link-to-ssh" not in listed
    assert "notes-link" not in listed


async def test_a_skill_folder_that_is_a_symlink_is_not_followed(root: Path, home: Path) -> None:
    write(home / ".ssh" / "SKILL.md", "---\nname: keys\ndescription: harmless\n---\nhi\n")
    os.symlink(home / ".ssh", home / ".claude" / "skills" / "keys")
    os.symlink(home / ".ssh", root / ".claude" / "skills" / "keys2")
    catalog = discover_skills([root], home)
    assert "keys" not in catalog.names
    assert "keys2" not in catalog.names
    problems = "\n".join(catalog.problems)
    assert f"skill folder {home / '.claude' / 'skills' / 'keys'} is a symbolic link" in problems
    run = Runner(make_ctx(root))
    run.ctx.services.skills = catalog
    for path in (home / ".claude/skills/keys/config", home / ".ssh/config"):
        message = await run.error("read_file", path=str(path))
        assert "outside the workspace" in message
    assert "no skill named 'keys'" in await load_skill(run, "keys", error=True)


async def test_secret_files_inside_a_skill_stay_denied(root: Path, home: Path) -> None:
    folder = home / ".claude" / "skills" / "pdf"
    write(folder / ".env", "TOKEN=abc\n")
    run = Runner(make_ctx(root))
    run.ctx.services.skills = discover_skills([root], home)
    message = await run.error("read_file", path=str(folder / ".env"))
    assert "secret-file pattern" in message


async def test_skill_files_are_read_only(root: Path, home: Path) -> None:
    run = Runner(make_ctx(root))
    run.ctx.services.skills = discover_skills([root], home)
    reference = home / ".claude" / "skills" / "pdf" / "reference.md"
    message = await run.error(
        "edit_file", path=str(reference), old_string="Field", new_string="Hacked"
    )
    assert "outside the workspace" in message
    message = await run.error("write_file", path=str(reference), content="x")
    assert "outside the workspace" in message


async def test_the_system_prompt_lists_skills_and_stays_byte_stable(
    api: ScriptedMessagesServer, tmp_path: Path, root: Path, home: Path
) -> None:
    api.extend(tool_turn(("skill", {"name": "release"})), text_turn("Done."))
    host = AgentHost(
        Workspace([root]),
        options=HostOptions(
            skills=lambda workspace: discover_skills(workspace.roots, home),
            transcript_dir=tmp_path / "t",
        ),
    )
    host.options.settings = lambda: AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": api.base_url}
    )
    handle = host.start_run("write the release notes")
    assert handle.task is not None
    result = await handle.task
    assert result["status"] == "completed", result
    first, second = api.requests[-2].json, api.requests[-1].json
    assert first["system"] == second["system"]  # identical bytes on every turn
    system = first["system"][0]["text"]
    assert "# Skills" in system
    assert "- release: Write the release notes" in system
    answer = second["messages"][-1]["content"][0]["content"]
    assert "Read CHANGELOG.md and summarise it." in answer
    await host.shutdown()
