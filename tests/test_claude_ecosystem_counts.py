"""Issue 28's targets, counted on the real artefacts (unchanged, from the fetched mirrors).

- Anthropic's marketplace: every hook handler its plugins declare loads (13/13), and the
  ones that can run here fire and exit cleanly — the output-style plugins' SessionStart
  context reaches the session, hookify's four events, ralph-wiggum's Stop, and
  security-guidance's prompt, edit and stop hooks; its two `if: Bash(git commit:*)` /
  `Bash(git push:*)` hooks are chosen for exactly those commands. (Its SessionStart
  bootstrap pip-installs the Agent SDK into ~/.claude: loaded and counted, not run here.)
- disler/claude-code-hooks-mastery: every handler of its settings loads (13/13); what
  agentls does not run (Setup, statusLine) is said by name, never silently ignored.
- wshobson/commands, cloned into ~/.claude/commands as its README says: 57/57 commands.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from agentls.agent.claude.prompt_commands import discover_commands
from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import ToolOutput
from agentls.agent.hooks.commands import CommandHooks
from agentls.agent.hooks.config import HookConfig
from agentls.agent.safety import load_safety
from agentls.workspace import ChangeSet, Workspace
from tests.artefact_support import Artefacts

MARKET = "claude-code-plugins"
BOOTSTRAP = "ensure_agent_sdk.py"


def _declared_handlers(repo: Path) -> int:
    total = 0
    for path in (repo / "plugins").glob("*/hooks/hooks.json"):
        data = json.loads(path.read_text())
        hooks = data.get("hooks", data)
        total += sum(len(group["hooks"]) for groups in hooks.values() for group in groups)
    return total


def _enable_all(repo: Path, home: Path) -> None:
    entries = json.loads((repo / ".claude-plugin" / "marketplace.json").read_text())["plugins"]
    (home / ".claude").mkdir(parents=True)
    settings = {
        "extraKnownMarketplaces": {MARKET: {"source": {"source": "directory", "path": str(repo)}}},
        "enabledPlugins": {f"{entry['name']}@{MARKET}": True for entry in entries},
    }
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))


def _without_bootstrap(config: HookConfig) -> HookConfig:
    """security-guidance's SessionStart installs a package from the network: not in a test."""
    kept = HookConfig(problems=list(config.problems))
    kept.groups = [g for g in config.groups if not any(BOOTSTRAP in c.command for c in g.commands)]
    return kept


async def test_every_hook_of_anthropics_marketplace_loads_and_fires(
    artefacts: Artefacts, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = artefacts("anthropics/claude-code")
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    _enable_all(repo, home)
    monkeypatch.setenv("HOME", str(home))
    safety = load_safety([ws], home=home)
    assert [p for p in safety.problems if "plugin" in p or "hook" in p] == []
    loaded = [c for g in safety.hook_config.groups for c in g.commands]
    assert len(loaded) == _declared_handlers(repo) == 13
    config = _without_bootstrap(safety.hook_config)
    env = {**os.environ, "HOME": str(home)}
    hooks = CommandHooks(config, transcript_dir=tmp_path / "t", cwd=ws, env=env)
    ctx = ToolContext(session_id="s1", workspace=Workspace([ws]), changes=ChangeSet())
    start = await hooks.session_start(ctx, source="startup")
    assert "'learning' output style mode" in start.additional_context
    assert "'explanatory' output style mode" in start.additional_context
    await hooks.user_prompt_submit("add a login form", ctx)
    await hooks.pre_tool("run_command", {"command": "echo hi"}, ctx)
    await hooks.post_tool(
        "write_file", {"path": "a.py", "content": "x = 1\n"}, ToolOutput("ok"), ctx
    )
    await hooks.stop(ctx, stop_hook_active=False)
    await asyncio.gather(*list(hooks._background))  # the asyncRewake ones
    assert hooks.reports == []  # no hook crashed, hung or printed invalid JSON
    records = [json.loads(line) for line in (tmp_path / "t" / "s1.jsonl").read_text().splitlines()]
    ran = [r for r in records if r.get("type") == "hook"]
    assert all(r["exit_code"] == 0 for r in ran), ran
    fired = {(r["event"], r["source"].split(":")[0].removeprefix("plugin ")) for r in ran}
    assert fired == {
        ("SessionStart", f"learning-output-style@{MARKET}"),
        ("SessionStart", f"explanatory-output-style@{MARKET}"),
        *{(e, f"hookify@{MARKET}") for e in ("UserPromptSubmit", "PreToolUse", "PostToolUse")},
        ("Stop", f"hookify@{MARKET}"),
        ("Stop", f"ralph-wiggum@{MARKET}"),
        ("UserPromptSubmit", f"security-guidance@{MARKET}"),
        ("PostToolUse", f"security-guidance@{MARKET}"),
        ("Stop", f"security-guidance@{MARKET}"),
    }
    assert len(ran) == 10  # + the bootstrap and the two git hooks: 13
    for command in ("git commit -m x", "git push origin main"):
        chosen = hooks._for_tool("PostToolUse", "run_command", {"command": command}, ctx)
        guarded = [c for c in chosen if c.condition]
        assert len(guarded) == 1, command  # its own `if` hook, and not the other's
    plain = hooks._for_tool("PostToolUse", "run_command", {"command": "ls"}, ctx)
    assert [c for c in plain if c.condition] == []


def test_hooks_mastery_every_hook_loads_and_what_cannot_run_is_said(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    repo = artefacts("disler/claude-code-hooks-mastery")
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    declared = sum(len(g["hooks"]) for groups in settings["hooks"].values() for g in groups)
    safety = load_safety([repo], home=tmp_path / "home", project_trusted=True)
    loaded = [c for g in safety.hook_config.groups for c in g.commands]
    assert len(loaded) == declared == 13
    assert {g.event for g in safety.hook_config.groups} == set(settings["hooks"])
    text = "\n".join(safety.problems)
    assert "Setup hooks run with Claude Code's `--init`" in text
    assert "agentls does not use (ignored): statusLine" in text
    assert len(safety.problems) == 2


def test_wshobson_commands_cloned_into_the_user_commands_all_load(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    repo = artefacts("wshobson/commands")
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    shutil.copytree(repo, home / ".claude" / "commands")
    files = [*(repo / "tools").glob("*.md"), *(repo / "workflows").glob("*.md")]
    catalog = discover_commands([ws], home=home)
    assert catalog.problems == []
    names = {c.name for c in catalog.commands}
    assert len(files) == 57
    assert {f.stem for f in files} <= names  # 57/57
    assert catalog.find("api-scaffold") is not None


def test_every_output_style_of_hooks_mastery_can_be_chosen(
    artefacts: Artefacts, tmp_path: Path
) -> None:
    from agentls.agent.claude.frontmatter import read_markdown
    from agentls.agent.claude.output_styles import output_style

    repo = artefacts("disler/claude-code-hooks-mastery")
    files = sorted((repo / ".claude" / "output-styles").glob("*.md"))
    assert len(files) == 8
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    for path in files:
        name = str(read_markdown(path)[0].get("name") or path.stem)
        (home / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": name}))
        chosen = output_style([repo], home)
        assert chosen is not None, name
        assert chosen.path.name == path.name


def test_an_output_style_that_cannot_be_used_is_said(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    (home / ".claude").mkdir(parents=True)
    for wanted, why in (
        ("Explanatory", "Claude Code's built-in styles are not files"),
        ("Pirate", "no such style in .claude/output-styles"),
    ):
        (home / ".claude" / "settings.json").write_text(json.dumps({"outputStyle": wanted}))
        problems = load_safety([ws], home=home).problems
        [said] = [p for p in problems if "outputStyle" in p]
        assert said.startswith(f"outputStyle {wanted!r} is not used: {why}")
