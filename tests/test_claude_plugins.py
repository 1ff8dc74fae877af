"""Claude Code plugins and marketplaces (`agentls.agent.claude.plugins`), tested on Anthropic's own
marketplace (the fetched `anthropics/claude-code`: `.claude-plugin/marketplace.json` and
`plugins/`, unchanged) enabled through a temporary `~/.claude/settings.json`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentls.agent.claude.plugins import commands_with_plugins, load_plugins
from agentls.agent.claude.skills import discover_skills
from agentls.agent.claude.subagents import AgentCatalog
from agentls.agent.framework.registry import ToolPool
from agentls.agent.hooks.commands import CommandHooks
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest
from agentls.agent.permissions.policy import RulePolicy
from agentls.agent.protocol.events import AgentEvent, Notice
from agentls.agent.run.pipeline import Pipeline, ToolCall
from agentls.agent.safety import load_safety
from agentls.testing import ScriptedMessagesServer, text_turn
from agentls.tools import builtin_tools
from agentls.workspace import Workspace
from tests.artefact_support import Artefacts
from tests.shadow_support import make_ctx, unsandboxed

MARKET = "claude-code-plugins"


def _settings(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _marketplace(repo: Path) -> list[str]:
    data = json.loads((repo / ".claude-plugin" / "marketplace.json").read_text())
    return [entry["name"] for entry in data["plugins"]]


@pytest.fixture
def anthropic(artefacts: Artefacts) -> Path:
    return artefacts("anthropics/claude-code")


@pytest.fixture
def home(tmp_path: Path, anthropic: Path) -> Path:
    """A HOME whose ~/.claude/settings.json knows the marketplace and enables every plugin."""
    folder = tmp_path / "home"
    _settings(
        folder / ".claude" / "settings.json",
        {
            "extraKnownMarketplaces": {
                MARKET: {"source": {"source": "directory", "path": str(anthropic)}}
            },
            "enabledPlugins": {f"{name}@{MARKET}": True for name in _marketplace(anthropic)},
        },
    )
    return folder


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def test_the_marketplace_offers_every_agent_skill_and_command(
    anthropic: Path, home: Path, ws: Path
) -> None:
    plugins = load_plugins([ws], home)
    assert plugins.skipped == []
    assert sorted(p.name for p in plugins.plugins) == sorted(_marketplace(anthropic))
    agents = [t for t in AgentCatalog([ws], home=home).types() if t.source != "built-in"]
    assert len(agents) == 15
    assert any(t.name == "pr-review-toolkit:silent-failure-hunter" for t in agents)
    skills = discover_skills([ws], home=home)
    assert skills.problems == []
    assert len(skills.skills) == 10
    assert skills.find("plugin-dev:Agent Development") is not None
    commands = commands_with_plugins([ws], home=home)
    files = list((anthropic / "plugins").glob("*/commands/*.md"))
    assert commands.problems == []
    assert len(commands.commands) == len(files) == 15
    assert commands.find("commit-commands:commit") is not None
    assert commands.find("commit") is commands.find("commit-commands:commit")  # unique
    assert commands.find("help") is None  # hookify:help and ralph-wiggum:help: ambiguous
    report = "\n".join(plugins.report())
    assert f"hookify@{MARKET}" in report
    assert "hooks (PostToolUse, PreToolUse, Stop, UserPromptSubmit)" in report


class _Allow:
    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        return "allow_once"


async def test_hookifys_dangerous_rm_rule_blocks_rm_rf(
    anthropic: Path, home: Path, ws: Path, tmp_path: Path
) -> None:
    (ws / ".claude").mkdir()
    example = anthropic / "plugins" / "hookify" / "examples" / "dangerous-rm.local.md"
    shutil.copy(example, ws / ".claude" / "hookify.dangerous-rm.local.md")
    safety = load_safety([ws], home=home)
    assert [p for p in safety.problems if "plugin" in p] == []
    hooks = CommandHooks(safety.hook_config, transcript_dir=tmp_path / "t")
    events: list[AgentEvent] = []
    pipeline = Pipeline(
        ToolPool(builtin_tools()),
        permissions=RulePolicy(mode="acceptEdits", approver=_Allow()),
        hooks=hooks,
        events=events.append,
    )
    ctx = make_ctx(unsandboxed(Workspace([ws])), session="s")
    (ws / "build").mkdir()
    blocked = await pipeline.execute(
        ToolCall("t1", "run_command", {"command": "rm -rf build"}), ctx
    )
    assert blocked.is_error
    assert "hook refused this call" in str(blocked.content)
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("Dangerous rm command detected" in n for n in notices)  # its systemMessage
    assert (ws / "build").is_dir()
    fine = await pipeline.execute(ToolCall("t2", "run_command", {"command": "echo ok"}), ctx)
    assert not fine.is_error


def test_a_plugin_a_repository_enables_waits_for_trust(
    anthropic: Path, ws: Path, tmp_path: Path
) -> None:
    _settings(
        ws / ".claude" / "settings.json",
        {
            "extraKnownMarketplaces": {
                MARKET: {"source": {"source": "directory", "path": str(anthropic)}}
            },
            "enabledPlugins": {f"hookify@{MARKET}": True},
        },
    )
    held = load_plugins([ws], tmp_path / "home", project_trusted=False)
    assert held.plugins == []
    assert "held back until you trust this workspace" in held.skipped[0]
    assert load_safety([ws], home=tmp_path / "home", project_trusted=False).hook_config.groups == []
    trusted = load_plugins([ws], tmp_path / "home", project_trusted=True)
    assert [p.name for p in trusted.plugins] == ["hookify"]


def test_a_github_marketplace_is_skipped_with_how_to_make_it_local(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _settings(
        home / ".claude" / "settings.json",
        {
            "extraKnownMarketplaces": {
                "remote": {"source": {"source": "github", "repo": "someone/market"}}
            },
            "enabledPlugins": {"x@remote": True, "z@remote": True, "y@nowhere": True},
        },
    )
    found = load_plugins([tmp_path], home)
    assert found.plugins == []
    assert "does not download marketplaces" in found.skipped[0]
    assert "someone/market" in found.skipped[0]
    # each enabled plugin is named; the marketplace's reason is said once
    assert found.skipped[1:] == [
        "x@remote: not loaded: its marketplace 'remote' was skipped",
        "z@remote: not loaded: its marketplace 'remote' was skipped",
        f"y@nowhere: enabled in {home / '.claude' / 'settings.json'}, but no marketplace "
        "'nowhere' is known (add it to extraKnownMarketplaces)",
    ]


def test_a_plugin_source_cannot_leave_its_marketplace(tmp_path: Path) -> None:
    market = tmp_path / "market"
    (tmp_path / "outside" / "commands").mkdir(parents=True)
    _settings(
        market / ".claude-plugin" / "marketplace.json",
        {"name": "m", "plugins": [{"name": "evil", "source": "../outside"}]},
    )
    home = tmp_path / "home"
    _settings(
        home / ".claude" / "settings.json",
        {
            "extraKnownMarketplaces": {
                "m": {"source": {"source": "directory", "path": str(market)}}
            },
            "enabledPlugins": {"evil@m": True},
        },
    )
    found = load_plugins([tmp_path], home)
    assert found.plugins == []
    assert "not a folder inside the marketplace" in found.skipped[0]


def test_doctor_lists_plugins_with_what_they_bring_and_why_one_was_skipped(
    home: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.headless.doctor import check_plugins

    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"]["gone@elsewhere"] = True
    settings.write_text(json.dumps(data))
    monkeypatch.setenv("HOME", str(home))
    checks = check_plugins(ws)
    lines = {c.detail.split(" ", 1)[0]: c for c in checks}
    assert "15 commands" not in lines[f"hookify@{MARKET}"].detail
    assert "4 commands, 1 agents, 1 skills, hooks (" in lines[f"hookify@{MARKET}"].detail
    skipped = [c for c in checks if c.name == "skipped"]
    assert len(skipped) == 1
    assert "no marketplace 'elsewhere' is known" in skipped[0].detail


def _local_market(tmp_path: Path, enable_in: Path) -> Path:
    """A marketplace with one plugin that brings an MCP server; enabled in `enable_in`."""
    market = tmp_path / "market"
    plugin = market / "plugins" / "tools"
    _settings(
        market / ".claude-plugin" / "marketplace.json",
        {"name": "local", "plugins": [{"name": "tools", "source": "./plugins/tools"}]},
    )
    _settings(
        plugin / ".mcp.json",
        {"mcpServers": {"pt": {"command": "${CLAUDE_PLUGIN_ROOT}/server", "args": ["-q"]}}},
    )
    _settings(
        enable_in,
        {
            "extraKnownMarketplaces": {
                "local": {"source": {"source": "directory", "path": str(market)}}
            },
            "enabledPlugins": {"tools@local": True},
        },
    )
    return plugin


def test_a_user_enabled_plugins_mcp_server_is_offered(tmp_path: Path, ws: Path) -> None:
    from agentls.mcp.manager import McpManager

    home = tmp_path / "home"
    plugin = _local_market(tmp_path, home / ".claude" / "settings.json")
    manager = McpManager.from_config(ws, {}, home=home, user_config=tmp_path / "none.json")
    [entry] = [e for e in manager.status() if e["name"] == "pt"]
    assert entry["source"] == "user"
    assert str(plugin / "server") in entry["target"]


def test_a_repository_enabled_plugin_starts_no_mcp_server(
    tmp_path: Path, ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.agent.claude import plugins
    from agentls.mcp.manager import McpManager

    monkeypatch.setattr(plugins, "_trusted", lambda roots: True)  # the user trusted it
    _local_market(tmp_path, ws / ".claude" / "settings.json")
    found = load_plugins([ws], tmp_path / "home", project_trusted=True)
    assert [p.name for p in found.plugins] == ["tools"]  # trusted: its commands, hooks load
    manager = McpManager.from_config(
        ws, {}, home=tmp_path / "home", user_config=tmp_path / "none.json"
    )
    [entry] = [e for e in manager.status() if e["name"] == "*"]
    assert entry["state"] == "invalid-config"
    assert "a repository cannot approve its own servers" in entry["error"]


def test_claude_codes_user_scope_servers_are_read_by_default(tmp_path: Path, ws: Path) -> None:
    from agentls.mcp.manager import McpManager

    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text(json.dumps({"mcpServers": {"mine": {"command": "mine"}}}))
    manager = McpManager.from_config(ws, {}, home=home, user_config=tmp_path / "none.json")
    assert [e["source"] for e in manager.status() if e["name"] == "mine"] == ["user"]
    off = McpManager.from_config(
        ws, {"claudeCodeUserConfig": False}, home=home, user_config=tmp_path / "none.json"
    )
    assert not any(e["name"] == "mine" for e in off.status())


async def test_ralph_wiggums_stop_hook_reads_the_transcript_and_loops(
    api: ScriptedMessagesServer, home: Path, ws: Path
) -> None:
    """The plugin's unchanged `stop-hook.sh` greps `transcript_path` for Claude Code's
    `"role":"assistant"` lines and reads `.message.content`."""
    from agentls.agent.run.conversation import SessionConfig
    from agentls.agent.run.model_client import AnthropicModelClient
    from agentls.agent.run.session import AgentSession
    from agentls.agent.settings import AgentSettings
    from tests.agent_support import close_at_loop_end

    settings = home / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    data["enabledPlugins"] = {f"ralph-wiggum@{MARKET}": True}  # its hooks only
    settings.write_text(json.dumps(data))
    state = ws / ".claude" / "ralph-loop.local.md"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(
        '---\nactive: true\niteration: 1\nmax_iterations: 5\ncompletion_promise: "DONE"\n'
        "---\n\nFix the tests.\n"
    )
    safety = load_safety([ws], home=home)
    agent = AgentSettings.from_env(
        {"ANTHROPIC_API_KEY": "sk-ralph", "ANTHROPIC_BASE_URL": api.base_url},
        retry_base_delay=0.01,
    )
    config = SessionConfig(
        settings=agent,
        workspace=Workspace([ws]),
        tools=[],
        permissions=safety.policy(),
        hooks=safety.hooks(transcript_dir=ws.parent / "transcripts"),
        transcript_dir=ws.parent / "transcripts",
    )
    session = close_at_loop_end(AgentSession(AnthropicModelClient(agent), config))
    api.extend(text_turn("Still working."), text_turn("All green. <promise>DONE</promise>"))
    result = await session.run("Fix the tests.")
    assert result.status == "completed"
    assert len(api.message_requests) == 2  # the hook fed the prompt back once
    assert "Fix the tests." in api.message_requests[1].user_text().split("Still working.")[-1]
    assert not state.exists()  # the hook saw the promise in the transcript and ended the loop


def test_trust_holds_back_a_repositorys_plugins_until_answered(
    anthropic: Path, ws: Path, tmp_path: Path
) -> None:
    """Without an answer, the trust assessment lists the repository's plugin settings as
    held back, so `load_plugins` (asking the trust store itself) loads none of them."""
    from agentls.agent.claude.trust import TrustStore, assess_trust
    from agentls.config.project import load_project_layer

    _settings(
        ws / ".claude" / "settings.json",
        {
            "extraKnownMarketplaces": {
                MARKET: {"source": {"source": "directory", "path": str(anthropic)}}
            },
            "enabledPlugins": {f"hookify@{MARKET}": True},
        },
    )
    store = TrustStore(tmp_path / "trust.json")
    trust = assess_trust([ws], project=load_project_layer(ws), store=store)
    assert trust.state == "pending"
    assert {h.setting for h in trust.held_back} >= {"enabled_plugins", "extra_known_marketplaces"}
    assert load_plugins([ws], tmp_path / "home").plugins == []  # nobody said yes
    store.record(trust, True)
    trusted = assess_trust([ws], project=load_project_layer(ws), store=store)
    assert trusted.trusted
