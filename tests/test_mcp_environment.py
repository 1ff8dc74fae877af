"""What a stdio MCP server inherits, read where an attacker would read it: the server
process's `/proc/<pid>/environ`. The agent's credentials stay out even when this process
still has them in its environment (a host that did not isolate them); the server's own
`env` entry and the rest of the environment go in."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.credentials import CREDENTIAL_VARS
from agentls.mcp import ApprovalStore, McpManager
from agentls.mcp.processes import server_pid
from tests.mcp_servers.support import stdio

SECRET = "sk-ant-api03-must-not-leak"


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace")
    return dict(entry.partition("=")[::2] for entry in raw.split("\0") if entry)


async def test_a_stdio_server_never_inherits_the_agents_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in CREDENTIAL_VARS:
        monkeypatch.setenv(name, SECRET)
    monkeypatch.setenv("AGENTLS_TEST_HARMLESS", "kept")
    entry = {**stdio(), "env": {"SERVER_OWN": "given"}}
    manager = McpManager.from_config(
        tmp_path,
        {"mcpServers": {"demo": entry}, "startupTimeoutSeconds": 60},
        approvals=ApprovalStore(tmp_path / "approvals.json"),
        user_config=tmp_path / "user-mcp.json",
        home=tmp_path,
    )
    try:
        await manager.start()
        connection = manager.connection("demo")
        assert connection is not None, manager.status()
        assert connection.state == "ready", manager.status()
        pid = server_pid(connection.marker)
        assert pid is not None
        environ = _environ(pid)
        assert [name for name in CREDENTIAL_VARS if name in environ] == []
        assert SECRET not in "\n".join(environ.values())
        assert environ["SERVER_OWN"] == "given"
        assert environ["AGENTLS_TEST_HARMLESS"] == "kept"
    finally:
        await manager.aclose()
