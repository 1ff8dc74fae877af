"""Hooks stay outside the sandbox but never see the agent's key unless the user opts in."""

from __future__ import annotations

import shlex
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.agent.hooks.commands import CommandHooks
from agentls.agent.safety import load_safety
from agentls.workspace import ChangeSet, Workspace

KEY = "sk-ant-api03-hook-secret-4411"
ENV = {"ANTHROPIC_API_KEY": KEY, "PATH": "/usr/bin:/bin"}


def _hook(seen: Path, **extra: object) -> dict[str, object]:
    command = f"printenv ANTHROPIC_API_KEY > {shlex.quote(str(seen))}; true"
    return {"PreToolUse": [{"hooks": [{"type": "command", "command": command, **extra}]}]}


async def _seen(tmp_path: Path, section: dict[str, object], project: bool = False) -> str:
    seen = tmp_path / "seen.txt"
    hooks_section = {"hooks": _hook(seen, **section)}
    safety = load_safety(
        [tmp_path],
        home=tmp_path / "home",
        section=None if project else hooks_section,
        project_section=hooks_section if project else None,
        env=ENV,
    )
    hooks: CommandHooks = safety.hooks()
    hooks.env = ENV
    ctx = ToolContext(session_id="s", workspace=Workspace([tmp_path]), changes=ChangeSet())
    await hooks.pre_tool("read_file", {"path": "a"}, ctx)
    problems = " ".join(safety.problems)
    return (seen.read_text() if seen.exists() else "") + problems


async def test_a_hook_gets_no_key_by_default(tmp_path: Path) -> None:
    assert KEY not in await _seen(tmp_path, {})


async def test_a_user_hook_may_opt_in(tmp_path: Path) -> None:
    assert KEY in await _seen(tmp_path, {"passCredentials": True})


async def test_a_project_hook_cannot_opt_in(tmp_path: Path) -> None:
    seen = await _seen(tmp_path, {"passCredentials": True}, project=True)
    assert KEY not in seen
    assert "passCredentials can only be set in user settings" in seen
