"""MCP from the command line, as real subprocesses: `agentls tools` / `agentls tool` see
exactly a session's MCP tools, `--allow-mcp` approves the workspace's `.mcp.json` for one
command (all servers, or only those named), servers awaiting approval or failing are
named on stderr, and `agentls doctor` reports every server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli
from tests.mcp_servers.support import stdio


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """`.mcp.json` with the demo server `proj` and `evil`, which only leaves a marker."""
    root = tmp_path / "ws"
    root.mkdir()
    code = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('x')"
    evil = {"command": sys.executable, "args": ["-c", code, str(tmp_path / "evil.started")]}
    servers = {"proj": stdio("--name", "proj"), "evil": evil}
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return root


def _env(tmp_path: Path, api_url: str | None = None, **extra: str) -> dict[str, str]:
    state = tmp_path / "state"
    return cli_env(api_url, state, XDG_CONFIG_HOME=str(state / "config"), **extra)


def _names(stdout: str) -> list[str]:
    return [t["name"] for t in json.loads(stdout)]


def test_tools_without_approval_say_how_to_approve(workspace: Path, tmp_path: Path) -> None:
    listed = run_cli("tools", "--json", "-w", str(workspace), env=_env(tmp_path))
    assert listed.code == 0, listed.stderr
    assert not any(n.startswith("mcp__") for n in _names(listed.stdout))
    assert "need your approval" in listed.stderr
    assert "--allow-mcp" in listed.stderr
    assert not (tmp_path / "evil.started").exists()


def test_allow_mcp_by_name_starts_only_that_server(workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    listed = run_cli("tools", "--json", "--allow-mcp=proj", "-w", str(workspace), env=env)
    assert listed.code == 0, listed.stderr
    names = _names(listed.stdout)
    assert {"mcp__proj__echo", "mcp__proj__add", "read_file"} <= set(names)
    assert names == sorted(names)
    assert not (tmp_path / "evil.started").exists()  # named servers only
    assert "evil" in listed.stderr  # still waiting, and said so
    table = run_cli("tools", "--allow-mcp=proj", "-w", str(workspace), env=env)
    assert table.code == 0
    assert "mcp__proj__echo" in table.stdout
    called = run_cli(
        "tool", "mcp__proj__echo", '{"text": "hi", "times": 2}', "--allow-mcp=proj",
        "-w", str(workspace), env=env,
    )  # fmt: skip
    assert called.code == 0, called.stderr
    assert called.stdout.strip() == "hihi"


def test_a_bare_allow_mcp_approves_every_server(workspace: Path, tmp_path: Path) -> None:
    listed = run_cli("tools", "--json", "-w", str(workspace), "--allow-mcp", env=_env(tmp_path))
    assert listed.code == 0, listed.stderr
    assert "mcp__proj__echo" in _names(listed.stdout)
    assert (tmp_path / "evil.started").exists()  # the user said "all"
    assert "failed to start" in listed.stderr  # evil exits at once: reported


def test_allow_mcp_before_the_prompt_is_refused_with_the_fix(tmp_path: Path) -> None:
    result = run_cli("run", "--allow-mcp", "fix the bug", env=_env(tmp_path, ANTHROPIC_API_KEY="k"))
    assert result.code == 2
    assert "not a list of MCP server names" in result.stderr
    assert "after the prompt" in result.stderr


def test_a_run_uses_the_servers_allowed_on_the_command_line(
    workspace: Path, tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    api.extend(tool_turn(("mcp__proj__add", {"a": 2, "b": 40})), text_turn("It is 42."))
    env = _env(tmp_path, api.base_url)
    result = run_cli(
        "run", "add 2 and 40", "--allow-mcp=proj", "--allow", "mcp__proj", "--json",
        "-w", str(workspace), env=env,
    )  # fmt: skip
    assert result.code == 0, result.stdout + result.stderr
    payload: dict[str, Any] = json.loads(result.stdout)
    assert payload["status"] == "completed"
    assert payload["text"] == "It is 42."
    assert api.message_requests[1].tool_results()[0]["content"] == "42"
    assert "evil" in result.stderr  # --json: stdout is the result, notices go to stderr
    assert not (tmp_path / "evil.started").exists()


def test_doctor_reports_each_mcp_server(workspace: Path, tmp_path: Path) -> None:
    env = _env(tmp_path)
    user_file = tmp_path / "state" / "config" / "agentls" / "mcp.json"
    user_file.parent.mkdir(parents=True)
    servers = {
        "mine": stdio("--name", "mine"),
        "broken": {"command": "no-such-mcp-program"},
        "odd": {"type": "ftp", "url": "ftp://example.org"},  # malformed: said, not started
    }
    user_file.write_text(json.dumps({"mcpServers": servers}))
    result = run_cli("doctor", "--json", "--timeout", "60", "-w", str(workspace), env=env)
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"] if c["group"] == "mcp"}
    assert checks["mine"]["status"] == "ok"
    assert "tools" in checks["mine"]["detail"]
    assert checks["broken"]["status"] == "warn"
    assert "not found" in checks["broken"]["detail"]
    assert checks["config odd"]["status"] == "warn"
    assert "needs `command`" in checks["config odd"]["detail"]
    for name in ("proj", "evil"):
        assert checks[name]["status"] == "warn"
        assert "needs-approval" in checks[name]["detail"]
        assert "--allow-mcp" in checks[name]["detail"]
    assert not (tmp_path / "evil.started").exists()
