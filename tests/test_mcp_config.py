"""MCP configuration: the `.mcp.json` shape, sources and precedence, project-file approval,
start-up timeout, naming and permission-rule matching. Servers here fail fast (missing
commands, a process that never answers), so no real MCP server is needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentls.mcp import ApprovalStore, McpManager, ProjectFileRequest, RemoteServer, StdioServer
from agentls.mcp.naming import API_NAME, rule_matches_tool, tool_name, unique_tool_names
from agentls.mcp.processes import marked_processes


def _manager(tmp_path: Path, config: dict[str, object] | None = None, **kw: object) -> McpManager:
    kw.setdefault("approvals", ApprovalStore(tmp_path / "approvals.json"))
    kw.setdefault("user_config", tmp_path / "user-mcp.json")
    return McpManager.from_config(tmp_path, config, **kw)  # type: ignore[arg-type]


def _states(manager: McpManager) -> dict[str, str]:
    return {s["name"]: s["state"] for s in manager.status()}


def test_claude_code_shape_env_expansion_and_bad_entries(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "files": {"command": "srv-${TOOL:-files}", "args": ["--root", "${HOME_DIR}"]},
            "remote": {
                "type": "http",
                "url": "https://h/${PATH_PART}",
                "headers": {"A": "${TOKEN}"},
            },
            "legacy": {"type": "sse", "url": "http://localhost:1/sse"},
            "nokey": {"command": "x", "env": {"KEY": "${UNSET_VAR}"}},
            "weird": {"type": "ftp", "url": "ftp://x"},
        }
    }
    environ = {"HOME_DIR": "/home/u", "PATH_PART": "mcp", "TOKEN": "secret"}
    manager = _manager(tmp_path, config, environ=environ)
    files = manager.connection("files")
    remote = manager.connection("remote")
    legacy = manager.connection("legacy")
    assert files is not None
    assert isinstance(files.spec, StdioServer)
    assert files.spec.command == "srv-files"
    assert files.spec.args == ("--root", "/home/u")
    assert remote is not None
    assert isinstance(remote.spec, RemoteServer)
    assert remote.spec.url == "https://h/mcp"
    assert remote.spec.headers == {"A": "secret"}
    assert legacy is not None
    assert legacy.spec.transport == "sse"
    problems = {s["name"]: s for s in manager.status() if s["state"] == "invalid-config"}
    assert "UNSET_VAR" in problems["nokey"]["error"]
    assert "needs `command`" in problems["weird"]["error"]
    assert _states(manager)["files"] == "pending"  # nothing starts before it is needed


def test_our_config_wins_over_the_user_file_and_servers_can_be_disabled(tmp_path: Path) -> None:
    user = tmp_path / "user-mcp.json"
    user.write_text(
        json.dumps(
            {"mcpServers": {"shared": {"command": "from-user"}, "mine": {"command": "user-only"}}}
        )
    )
    config = {
        "mcpServers": {"shared": {"command": "from-config"}, "off": {"command": "x"}},
        "disabledServers": ["off"],
        "startup": "eager",
        "startupTimeoutSeconds": 5,
    }
    manager = _manager(tmp_path, config, user_config=user)
    shared, mine = manager.connection("shared"), manager.connection("mine")
    assert shared is not None
    assert shared.spec.describe() == "from-config"
    assert mine is not None
    assert mine.spec.source == "user"
    assert manager.connection("off") is None
    assert manager.options.startup == "eager"
    assert manager.options.startup_timeout == 5.0


def _project(tmp_path: Path, command: str = "no-such-mcp-program") -> Path:
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"proj": {"command": command, "args": ["-v"]}}}))
    return path


async def test_project_servers_wait_for_approval(tmp_path: Path) -> None:
    _project(tmp_path)
    manager = _manager(tmp_path)
    assert await manager.tools() == []
    status = {s["name"]: s for s in manager.status()}
    assert status["proj"]["state"] == "needs-approval"
    assert ".mcp.json" in status["proj"]["error"]
    assert "approve" in status["proj"]["error"]
    assert manager.connection("proj") is None  # never started
    # the host asks later (e.g. from a command); the next start picks it up
    await manager.approve_project(True)
    await manager.tools()
    assert _states(manager)["proj"] == "failed"  # it was started: the command is missing
    await manager.aclose()


async def test_project_approval_is_asked_once_and_remembered_per_content(tmp_path: Path) -> None:
    path = _project(tmp_path)
    asked: list[ProjectFileRequest] = []

    async def approve(request: ProjectFileRequest) -> bool:
        asked.append(request)
        return True

    first = _manager(tmp_path, approve_project_file=approve)
    await first.tools()
    assert len(asked) == 1
    assert asked[0].servers == (("proj", "no-such-mcp-program -v"),)
    assert "no-such-mcp-program" in asked[0].message()
    assert _states(first)["proj"] == "failed"

    async def must_not_ask(request: ProjectFileRequest) -> bool:
        raise AssertionError("asked again")

    second = _manager(tmp_path, approve_project_file=must_not_ask)
    await second.tools()
    assert _states(second)["proj"] == "failed"  # remembered: started without asking

    path.write_text(path.read_text().replace("-v", "--changed"))
    third = _manager(tmp_path, approve_project_file=approve)
    await third.tools()
    assert len(asked) == 2  # the file changed, so it is asked about again


async def test_a_denied_project_file_is_remembered_and_reported(tmp_path: Path) -> None:
    _project(tmp_path)
    calls = 0

    async def deny(request: ProjectFileRequest) -> bool:
        nonlocal calls
        calls += 1
        return False

    for _ in range(2):
        manager = _manager(tmp_path, approve_project_file=deny)
        await manager.tools()
        status = {s["name"]: s for s in manager.status()}
        assert status["proj"]["state"] == "denied"
        assert "declined" in status["proj"]["error"]
    assert calls == 1


async def test_a_server_that_never_answers_times_out_and_is_killed(tmp_path: Path) -> None:
    config = {
        "mcpServers": {
            "mute": {"command": sys.executable, "args": ["-c", "import time\ntime.sleep(60)"]}
        },
        "startupTimeoutSeconds": 1,
    }
    manager = _manager(tmp_path, config)
    assert await manager.tools() == []
    status = {s["name"]: s for s in manager.status()}
    assert status["mute"]["state"] == "failed"
    assert "did not start within 1 s" in status["mute"]["error"]
    connection = manager.connection("mute")
    assert connection is not None
    assert marked_processes(connection.marker) == []
    await manager.aclose()


def test_tool_names_fit_the_api_pattern() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my server", "get.weather v2") == "mcp__my_server__get_weather_v2"
    long = tool_name("a-very-long-server-name", "an_extremely_long_tool_name_" * 3)
    assert len(long) == 64
    assert API_NAME.match(long)
    assert long == tool_name("a-very-long-server-name", "an_extremely_long_tool_name_" * 3)
    names = unique_tool_names("s", ["a.b", "a_b", "a b"])
    assert len(set(names.values())) == 3
    assert all(API_NAME.match(n) for n in names.values())
    assert names["a_b"] == "mcp__s__a_b"


@pytest.mark.parametrize(
    ("rule", "name", "matches"),
    [
        ("mcp__github", "mcp__github__create_issue", True),
        ("mcp__github__*", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("mcp__github__create_issue", "mcp__github__close_issue", False),
        ("mcp__git", "mcp__github__create_issue", False),
        ("mcp__github", "mcp__github_enterprise__x", False),
        ("read_file", "read_file", True),
        ("read", "read_file", False),
    ],
)
def test_permission_rules_match_by_mcp_name(rule: str, name: str, matches: bool) -> None:
    assert rule_matches_tool(rule, name) is matches


async def test_eager_start_begins_without_waiting_for_a_run(tmp_path: Path) -> None:
    lazy = _manager(tmp_path, {"mcpServers": {"x": {"command": "no-such-mcp-program"}}})
    assert lazy.start_soon() is None
    eager = _manager(
        tmp_path, {"mcpServers": {"x": {"command": "no-such-mcp-program"}}, "startup": "eager"}
    )
    task = eager.start_soon()
    assert task is not None
    await task
    assert _states(eager)["x"] == "failed"
    await eager.aclose()


async def test_restart_starts_a_failed_server_again(tmp_path: Path) -> None:
    manager = _manager(tmp_path, {"mcpServers": {"x": {"command": "no-such-mcp-program"}}})
    await manager.tools()
    before = manager.connection("x")
    assert before is not None
    first_marker = before.marker
    await manager.restart("x")
    after = manager.connection("x")
    # the same connection (tools that sessions hold keep working), started afresh
    assert after is before
    assert after.state == "failed"
    assert after.marker != first_marker
    with pytest.raises(KeyError):
        await manager.restart("unknown")
    await manager.aclose()


def test_settings_entries_are_validated_once_into_typed_servers() -> None:
    """The settings' `mcpServers` holds typed entries after the one validation of the
    settings: a server's model, or why it is not one — a bad entry fails alone."""
    from agentls.config import McpSettings
    from agentls.config.mcp import InvalidMcpServer, McpServerConfig

    settings = McpSettings.model_validate(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "x"], "oauth": {"ignored": True}},
                "broken": {"command": "x", "args": "not a list"},
                "number": 3,
            }
        }
    )
    files, broken, number = (settings.mcp_servers[k] for k in ("files", "broken", "number"))
    assert isinstance(files, McpServerConfig)
    assert files.args == ["-y", "x"]
    assert isinstance(broken, InvalidMcpServer)
    assert "`args`" in broken.problem
    assert isinstance(number, InvalidMcpServer)
    assert "expected an object" in number.problem
