"""One-shot commands import only what they use (issue 33): `agentls tool`, `tools` and
`commands` never import the model SDK, the MCP SDK or tree-sitter, neither in the CLI nor
in the server it starts, unless a request needs them (a symbol search imports tree-sitter).

Behavioural, not timed: the imports are read from `python -X importtime` output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tests.cli_support import cli_env, run_cli, write_tree
from tests.process_support import end_process

HEAVY = ("anthropic", "mcp", "mcp_types", "tree_sitter")
TIMEOUT = 120


def imported(importtime: str) -> set[str]:
    """Top-level packages named in `-X importtime` output."""
    names: set[str] = set()
    for line in importtime.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
    return names


class RawClient:
    """A bare LSP client over the server's pipes (as the CLI talks to it)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        stdin: IO[bytes] | None = self.proc.stdin
        assert stdin is not None
        stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        stdin.flush()

    def request(self, method: str, params: Any = None) -> Any:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self._read()
            if "method" in message and "id" in message:  # a request of the server's
                self.send({"id": message["id"], "result": None})
            elif message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result")

    def _read(self) -> dict[str, Any]:
        stdout = self.proc.stdout
        assert stdout is not None
        length = 0
        while (line := stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert length, "the server closed its output"
        message: dict[str, Any] = json.loads(stdout.read(length))
        return message


def serve_and_call(
    workspace: Path, env: dict[str, str], calls: list[tuple[str, Any]]
) -> tuple[set[str], list[Any]]:
    """Start `agentls serve` as `agentls tool` does, make `calls`, shut down: the packages
    the server imported, and the results."""
    results: list[Any] = []
    log = workspace.parent / "serve-imports.txt"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-m", "agentls", "serve", "--stdio"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=workspace,
            env=env,
        )
        try:
            client = RawClient(proc)
            uri = workspace.resolve().as_uri()
            capabilities = {"experimental": {"agentls": {"indexOnDemand": True}}}
            client.request(
                "initialize",
                {"processId": os.getpid(), "rootUri": uri, "capabilities": capabilities},
            )
            client.send({"method": "initialized", "params": {}})
            for command, argument in calls:
                result = client.request(
                    "workspace/executeCommand", {"command": command, "arguments": [argument]}
                )
                assert result is not None
                assert not (isinstance(result, dict) and result.get("is_error")), result
                results.append(result)
            client.request("shutdown")
            client.send({"method": "exit"})
            assert proc.wait(TIMEOUT) == 0
        finally:
            end_process(proc)
    return imported(log.read_text(encoding="utf-8", errors="replace")), results


def test_tool_tools_and_commands_import_no_sdk_mcp_or_tree_sitter(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "def a():\n    return 1\n", "b.py": "B = 2\n"})
    env = cli_env(None, tmp_path / "state")
    calls: list[tuple[str, Any]] = [
        ("agentls.tool", {"name": "read_file", "input": {"path": "a.py"}}),
        ("agentls.tool", {"name": "grep", "input": {"pattern": "return"}}),
        ("agentls.tools", {"mode": "review", "deferred": True}),
        ("agentls.commands", {}),
    ]
    server, results = serve_and_call(workspace, env, calls)
    assert "return 1" in results[0]["content"]
    assert "agentls" in server  # the log is the server's
    assert not server & set(HEAVY), sorted(server & set(HEAVY))


def test_a_symbol_search_loads_the_index_on_demand(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "def alpha():\n    return 1\n"})
    env = cli_env(None, tmp_path / "state")
    search = ("agentls.tool", {"name": "search_symbols", "input": {"query": "alpha"}})
    server, results = serve_and_call(workspace, env, [search])
    assert "alpha" in results[0]["content"]
    assert "tree_sitter" in server
    assert "anthropic" not in server


def test_the_cli_process_itself_imports_none_of_them(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    env = cli_env(None, tmp_path / "state")
    result = run_cli(
        "tool",
        "read_file",
        '{"path": "a.py"}',
        "-w",
        str(workspace),
        env=env,
        python=["-X", "importtime"],
    )
    assert result.code == 0, result.stderr[-2000:]
    assert "A = 1" in result.stdout
    cli = imported(result.stderr)
    assert "agentls" in cli
    assert not cli & set(HEAVY), sorted(cli & set(HEAVY))


def test_a_server_imports_no_yaml_xml_or_pydantic_settings_until_needed(tmp_path: Path) -> None:
    """An idle server's memory (issue 33: ≤ 70 MB): YAML is parsed only for skill, agent
    and command files, XML only for JUnit reports, and the environment is read without
    pydantic-settings; a project with none of those files never imports them."""
    workspace = write_tree(tmp_path / "ws", {"a.py": "def a():\n    return 1\n"})
    env = cli_env(None, tmp_path / "state") | {"AGENTLS_DISK_POLL_SECONDS": "30"}
    calls: list[tuple[str, Any]] = [
        ("agentls.tool", {"name": "read_file", "input": {"path": "a.py"}}),
        ("agentls.tools", {"mode": "review", "deferred": True}),
    ]
    server, results = serve_and_call(workspace, env, calls)
    assert "return 1" in results[0]["content"]
    assert "agentls" in server
    assert not server & {"yaml", "xml", "pydantic_settings", "dotenv"}, sorted(server)
