"""Hosts take a session's parts from the runtime, and never build their own (issue 26).

`agentls doctor` reports from the runtime a session would get
(`agentls.headless.doctor.session_parts`, through `start_runtime` like the language
server and the ACP agent), and the ACP agent's slash commands are the runtime's commands
and skills. Each behaviour below differs between the runtime and a host that rediscovers
the parts itself, so the tests fail if a host goes back to that; the static check names
the builders a host must not call. The LSP and ACP hosts side by side over the protocol are
`tests/test_host_parity.py`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.acp.commands import BUILTIN, available_commands, expand
from agentls.headless import doctor
from agentls.testing import ScriptedMessagesServer, text_turn

PACKAGE = Path(__file__).resolve().parents[1] / "server" / "agentls"

HOST_MODULES = [
    *sorted((PACKAGE / "acp").glob("*.py")),
    *sorted((PACKAGE / "lsp").glob("*.py")),
    PACKAGE / "headless" / "doctor.py",
    PACKAGE / "headless" / "mcp_report.py",
]
"""The session hosts (LSP, ACP) and the doctor's report of what a session would get."""

BUILDERS = {
    "discover_skills",  # the runtime's `skills`
    "commands_with_plugins",  # the runtime's `commands`
    "AgentCatalog",  # the runtime's `services.agents`
    "load_safety",  # `reload_safety`
    "load_project_config",  # `start_runtime`'s layers
    "load_project_layer",
    "assess_trust",  # the trust gate's `refresh`
    "WebSearch",  # the runtime's `web_search`
    "builtin_tools",  # the runtime's `tools`
    "from_config",  # `McpManager.from_config`: the runtime's `mcp`
}

SKILL = "---\nname: release\ndescription: Write release notes.\n---\nList the changes.\n"
COMMAND = "---\ndescription: Ship the branch\nargument-hint: <version>\n---\nShip $ARGUMENTS.\n"


def _calls(path: Path, base: Path = PACKAGE) -> list[str]:
    """Every call of a builder in `path`, by name or attribute, lazy imports included."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name in BUILDERS:
                found.append(f"{path.relative_to(base)}:{node.lineno} {name}()")
    return found


def test_no_host_builds_a_sessions_parts_itself() -> None:
    assert [call for path in HOST_MODULES for call in _calls(path)] == []


def test_the_static_check_sees_a_host_that_rediscovers(tmp_path: Path) -> None:
    module = tmp_path / "host.py"
    module.write_text(
        "from agentls.agent.claude.skills import discover_skills\n"
        "def f(roots):\n    return discover_skills(roots), x.McpManager.from_config(r)\n",
        encoding="utf-8",
    )
    found = sorted(c.split(" ")[1] for c in _calls(module, tmp_path))
    assert found == ["discover_skills()", "from_config()"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace with a skill, a custom command, and Claude Code settings whose `ask`
    rule keeps `web_search` from being offered; HOME apart, so no user files count."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "home" / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "home" / ".local" / "share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "home" / ".local" / "state"))
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)  # Anthropic's API
    root = tmp_path / "ws"
    files = {
        ".claude/skills/release/SKILL.md": SKILL,
        ".claude/commands/ship.md": COMMAND,
        ".claude/settings.json": '{"permissions": {"ask": ["WebSearch"]}}',
        ".agentls.toml": "[[lint]]\nname = 'sqlcheck'\ncommand = ['sqlcheck', '{paths}']\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def parts(project: Path) -> Iterator[doctor.SessionParts]:
    found = doctor.session_parts(project, timeout=1)
    yield found
    found.runtime.services.sandbox.close()
    found.runtime.workspace.close()


def test_the_doctor_reports_web_search_with_the_rules_a_session_has(
    parts: doctor.SessionParts,
) -> None:
    """The `ask` rule in `.claude/settings.json` keeps a session from offering the
    server-side search; a doctor that built `WebSearch` from the project file alone would
    say it is offered."""
    [check] = doctor.check_web(parts)
    assert check.status == "info"
    assert "the rule `WebSearch` asks before each search" in check.detail
    assert parts.runtime.web_search().is_enabled() is False  # what the session gets


def test_the_doctor_lists_the_checks_a_session_would_run(parts: doctor.SessionParts) -> None:
    """The project's own `lint` command is held back until the workspace is trusted (as
    in every session); the doctor says so instead of listing it as if it ran."""
    assert parts.trust is not None
    assert parts.trust.state == "pending"
    names = {c.name for c in doctor.check_workspace_checks(parts)}
    assert "sqlcheck" not in names
    [trust] = doctor.check_trust(parts)
    assert trust.status == "warn"
    assert "lint" in trust.detail


def test_the_doctor_reports_the_runtimes_skills_commands_and_agents(
    parts: doctor.SessionParts,
) -> None:
    runtime = parts.runtime
    checks = {c.name: c.detail for c in doctor.check_prompt_files(parts)}
    assert checks["skills"] == "1 found: release"
    assert checks["commands"] == "1 found: /ship"
    agents = {c.name for c in doctor.check_agents(parts)}
    assert agents == {agent.name for agent in runtime.services.agents.types()}


def test_the_acp_commands_are_the_runtimes(parts: doctor.SessionParts) -> None:
    """`available_commands_update` lists the runtime's commands, then its skills; `/ship`
    and `/release` expand from the same catalogs."""
    runtime = parts.runtime
    commands, problems = available_commands(runtime)
    assert problems == []
    names = [c.name for c in commands]
    custom = [c.name for c in runtime.commands().commands]
    skills = list(runtime.skills(runtime.workspace).names)
    assert (
        names
        == [*(c.name for c in BUILTIN), *custom, *skills]
        == [
            "accept",
            "rewind",
            "reject",
            "ship",
            "release",
        ]
    )
    shipped = expand("/ship 1.2", "/ship 1.2", runtime, trusted=False)
    assert shipped.prompt.strip() == "Ship 1.2."
    assert shipped.command is not None
    loaded = expand("/release v2", "/release v2", runtime, trusted=False)
    assert "Load the `release` skill" in loaded.prompt
    assert "v2" in loaded.prompt


def test_the_doctor_shows_the_problems_a_session_would_show(project: Path) -> None:
    """A rule a session skips (and warns about at start-up) is a warning in the doctor's
    report too; the doctor never read Claude Code's rules before it asked the runtime."""
    settings = '{"permissions": {"ask": ["WebSearch"], "deny": ["NoSuchTool("]}}'
    (project / ".claude" / "settings.json").write_text(settings, encoding="utf-8")
    found = doctor.session_parts(project, timeout=1)
    try:
        checks = doctor.check_settings(found)
    finally:
        found.runtime.services.sandbox.close()
        found.runtime.workspace.close()
    [check] = [c for c in checks if "NoSuchTool(" in c.detail]
    assert check.status == "warn"
    assert check.detail in found.problems
    assert "is not of the form Tool or Tool(specifier)" in check.detail


def test_the_doctors_request_uses_the_model_a_session_would(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The project file chooses the model; the doctor's one-token request asks for it, as
    a session's would (not the environment's default)."""
    (project / ".agentls.toml").write_text('model = "claude-from-project"\n', encoding="utf-8")
    with ScriptedMessagesServer([text_turn("pong")]) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.delenv("AGENTLS_MODEL", raising=False)
        found = doctor.session_parts(project, timeout=5)
        try:
            checks = doctor.check_endpoint(found.runtime, 5)
        finally:
            found.runtime.services.sandbox.close()
            found.runtime.workspace.close()
        [request] = api.requests
    assert [c.status for c in checks] == ["ok", "ok"]
    assert checks[1].name == "request to claude-from-project"
    assert request.json["model"] == found.runtime.settings().model == "claude-from-project"
