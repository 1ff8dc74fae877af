"""Commands as Claude Code runs them: its argument rules, `!`cmd`` lines through the
pipeline, and `@path` only for what looks like a path. The real commands come from the
fetched `anthropics/claude-code` (skipped when absent)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from agentls.agent.claude.prompt_commands import command_run, discover_commands, substitute
from agentls.agent.permissions.policy import RulePolicy
from agentls.testing import ScriptedMessagesServer, text_turn
from agentls.tools import builtin_tools
from tests.agent_support import EventLog, make_session
from tests.artefact_support import Artefacts

COMMIT_COMMANDS = Path("plugins") / "commit-commands" / "commands"


def test_arguments_follow_claude_codes_rules() -> None:
    body = "first=$0 second=$ARGUMENTS[1] third=$2 all=$ARGUMENTS"
    assert substitute(body, 'a "b c"') == 'first=a second=b c third=$2 all=a "b c"'
    assert substitute("keep $1 and $10x", "") == "keep $1 and $10x"
    assert substitute("Explain.", "main loop") == "Explain.\n\nARGUMENTS: main loop"
    assert substitute("cost $5", "x") == "cost $5"  # a $N beyond the arguments stays


def test_clean_gone_keeps_its_awk_program(artefacts: Artefacts, tmp_path: Path) -> None:
    repo = artefacts("anthropics/claude-code")
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    shutil.copy(repo / COMMIT_COMMANDS / "clean_gone.md", commands)
    catalog = discover_commands([tmp_path], home=tmp_path / "home")
    expansion = catalog.expand("/clean_gone")
    assert expansion is not None
    assert "awk '{print $1}'" in expansion.prompt
    assert expansion.files == ()


def test_code_in_a_body_is_not_a_file_reference(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("read me\n")
    commands = tmp_path / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "fix.md").write_text(
        "Use @pytest.fixture for setup and @self.app.middleware as shown.\n"
        "```python\n@pytest.fixture\ndef db(): ...\n```\n"
        "See @README.md, @docs/guide.md and `@src/inline.py`.\n"
    )
    expansion = discover_commands([tmp_path], home=tmp_path / "home").expand("/fix")
    assert expansion is not None
    assert expansion.files == ("README.md", "docs/guide.md")


async def test_commits_shell_lines_run_through_the_pipeline(
    api: ScriptedMessagesServer, artefacts: Artefacts, tmp_path: Path
) -> None:
    repo = artefacts("anthropics/claude-code")
    root = tmp_path / "project"
    commands = root / ".claude" / "commands"
    commands.mkdir(parents=True)
    shutil.copy(repo / COMMIT_COMMANDS / "commit.md", commands)
    (commands / "touchy.md").write_text("State: !`touch made.txt`\n")
    subprocess.run(["git", "init", "-q", "-b", "trunk", str(root)], check=True)  # noqa: ASYNC221
    (root / "new.txt").write_text("x\n")
    catalog = discover_commands([root], home=tmp_path / "home")
    session = make_session(api, root, tools=builtin_tools())
    session.config.permissions = RulePolicy()
    api.extend(text_turn("committed"), text_turn("ok"))
    commit = catalog.expand("/commit")
    assert commit is not None
    assert [line for _, line in commit.shell][:2] == ["git status", "git diff HEAD"]
    run = command_run(commit, root, trusted_project=True)  # allowed-tools: git status, …
    await session.run(commit.prompt, command=run)
    sent = "\n".join(b.get("text", "") for b in api.requests[0].json["messages"][0]["content"])
    assert "!`git status`" not in sent
    assert "Current branch: " in sent
    assert "trunk" in sent  # `git branch --show-current` ran
    assert "new.txt" in sent  # `git status` ran
    events = EventLog()
    touchy = catalog.expand("/touchy")
    assert touchy is not None
    await session.run(
        touchy.prompt, events=events, command=command_run(touchy, root, trusted_project=True)
    )
    sent = "\n".join(b.get("text", "") for b in api.requests[1].json["messages"][-1]["content"])
    assert "[!`touch made.txt` was not run:" in sent  # not allowed: asked, nobody to answer
    assert not (root / "made.txt").exists()
    assert any("!`touch made.txt` was not run" in e.message for e in events.of("notice"))
