"""Claude Code's memory files (`agentls.agent.run.memory`): every source it reads, `@path`
imports (and the boundary on them), nested `CLAUDE.md` and path rules when files there are
touched, through a real session against the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.agent.run.memory import memory_files, nested_for
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from agentls.tools import builtin_tools
from tests.agent_support import make_session


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    root, home = tmp_path / "ws", tmp_path / "home"
    _write(home / ".claude" / "CLAUDE.md", "USER-MEMORY\n")
    _write(root / "CLAUDE.md", "ROOT-MEMORY see @docs/style.md and `@not/code.md`\n")
    _write(root / "docs" / "style.md", "STYLE-IMPORT and @nested.md\n")
    _write(root / "docs" / "nested.md", "NESTED-IMPORT\n")
    _write(root / ".claude" / "CLAUDE.md", "DOT-CLAUDE-MEMORY\n")
    _write(root / "CLAUDE.local.md", "LOCAL-MEMORY\n")
    _write(root / ".claude" / "rules" / "always.md", "ALWAYS-RULE\n")
    _write(root / ".claude" / "rules" / "api.md", "---\npaths:\n  - src/api/**\n---\nAPI-RULE\n")
    _write(root / "src" / "api" / "CLAUDE.md", "SUB-MEMORY\n")
    _write(root / "src" / "api" / "app.py", "x = 1\n")
    _write(root / ".env", "SECRET=hunter2\n")
    _write(home / "private.md", "HOME-PRIVATE\n")
    return root, home


def test_every_source_and_import_is_read(tmp_path: Path) -> None:
    root, home = _workspace(tmp_path)
    _write(root / "AGENTS.md", "Also @.env and @~/private.md and @../home/private.md\n")
    files = memory_files([root], home)
    names = [f.path.relative_to(tmp_path).as_posix() for f in files]
    assert names == [
        "home/.claude/CLAUDE.md",
        "ws/AGENTS.md",
        "ws/CLAUDE.md",
        "ws/.claude/CLAUDE.md",
        "ws/CLAUDE.local.md",
        "ws/.claude/rules/always.md",
    ]
    text = "\n".join(f.text for f in files)
    assert "STYLE-IMPORT" in text
    assert "NESTED-IMPORT" in text  # two levels deep
    assert "API-RULE" not in text  # a path rule waits for its files
    assert "SUB-MEMORY" not in text
    # a repository's file imports nothing outside the workspace and no secret file
    assert "hunter2" not in text
    assert "HOME-PRIVATE" not in text
    # said, not silently dropped: the model and the transcript see why
    for raw in (".env", "../home/private.md"):
        assert f"### @{raw}\n(not imported: a project's memory file imports only" in text


def test_nested_memory_and_path_rules_come_with_the_files(tmp_path: Path) -> None:
    root, _ = _workspace(tmp_path)
    seen: set[Path] = set()
    found = nested_for(root / "src" / "api" / "app.py", [root], seen)
    assert [f.text for f in found] == ["SUB-MEMORY", "API-RULE"]
    assert nested_for(root / "src" / "api" / "app.py", [root], seen) == []  # once
    assert nested_for(root / "docs" / "style.md", [root], set()) == []


async def test_a_session_reads_them_all(
    api: ScriptedMessagesServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = _workspace(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    api.extend(tool_turn(("read_file", {"path": "src/api/app.py"})), text_turn("done"))
    session = make_session(api, root, tools=builtin_tools())
    await session.run("go")
    first = api.message_requests[0].user_text()
    for marker in ("USER-MEMORY", "ROOT-MEMORY", "STYLE-IMPORT", "LOCAL-MEMORY", "ALWAYS-RULE"):
        assert marker in first
    result = str(api.message_requests[1].tool_results()[0]["content"])
    assert "SUB-MEMORY" in result
    assert "API-RULE" in result
