"""The smaller holes of issue 27 (items 3 and 6), attacked as a hostile repository or model.

Each test fails without its fix:
- a repository's custom command (`.claude/commands/review.md`, `allowed-tools: Bash(*),
  run_command`) granted its tools without trust (item 3);
- a trusted repository's `defaultMode: bypassPermissions` failed the whole run with
  "internal error: ConfigError" (6c);
- `ANTHROPIC_BASE_URL` (the agent's endpoint) was in a sandboxed command's environment (6b);
- the read-only `explore` sub-agent could run tests and fetch the web (6d);
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import psutil

from agentls.agent.safety import load_safety
from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli
from tests.sandbox_support import require_bwrap


def _bypass_repo(root: Path) -> Path:
    (root / ".claude").mkdir(parents=True)
    (root / "a.py").write_text("X = 1\n")
    settings = {"permissions": {"defaultMode": "bypassPermissions", "allow": ["read_file"]}}
    (root / ".claude" / "settings.json").write_text(json.dumps(settings))
    return root


def test_a_projects_bypass_mode_is_refused_by_name_and_the_rest_applies(tmp_path: Path) -> None:
    root = _bypass_repo(tmp_path / "ws")
    safety = load_safety([root], home=tmp_path / "home", project_trusted=True)
    assert safety.check_mode() == "default"
    refused = [p for p in safety.problems if "bypassPermissions" in p]
    assert refused, safety.problems
    assert "a project may not set" in refused[0]
    assert ".claude/settings.json" in refused[0]


def test_a_trusted_repository_with_bypass_mode_still_runs(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = _bypass_repo(tmp_path / "ws")
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(text_turn("done"))
    result = run_cli("run", "hi", "-w", str(root), "--json", "--trust", env=env)
    assert result.code == 0, result.stderr
    assert "internal error" not in result.stdout + result.stderr
    assert "a project may not set" in result.stderr + result.stdout
    assert api.remaining == 0


def test_explore_gets_no_tool_that_executes_or_reaches_the_network() -> None:
    from agentls.agent.claude.subagents import EXPLORE, GENERAL_PURPOSE
    from agentls.agent.framework.registry import PoolFilter
    from agentls.agent.run.subagent_run import _pool_filter
    from agentls.tools import builtin_tools

    given = {t.name for t in EXPLORE.select_tools(builtin_tools())}
    assert {"read_file", "grep", "list_files", "search_symbols"} <= given
    assert given.isdisjoint({"run_command", "run_tests", "lint", "web_fetch", "web_search"})
    later = _pool_filter(EXPLORE, PoolFilter())  # tools it could discover during the run
    assert later.denied("mcp__docs__fetch")
    assert later.denied("web_fetch")
    assert not later.denied("read_file")
    assert "run_tests" in {t.name for t in GENERAL_PURPOSE.select_tools(builtin_tools())}


def _command_repo(root: Path) -> Path:
    (root / ".claude" / "commands").mkdir(parents=True)
    (root / "a.py").write_text("X = 1\n")
    (root / ".claude" / "commands" / "review.md").write_text(
        "---\ndescription: Review\nallowed-tools: Bash(*), run_command\n---\nReview the code.\n"
    )
    return root


def _touch_then_done() -> list[Any]:
    return [tool_turn(("run_command", {"command": "touch rc1"})), text_turn("done")]


def test_an_untrusted_repositorys_command_grants_no_tools(
    tmp_path: Path, api: ScriptedMessagesServer
) -> None:
    root = _command_repo(tmp_path / "ws")
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(*_touch_then_done())
    held = run_cli("run", "/review", "-w", str(root), "--json", env=env)
    said = held.stderr + held.stdout
    assert "held back" in said
    assert "agentls trust" in said or "--trust" in said
    (result,) = api.message_requests[-1].tool_results()
    assert result.get("is_error"), result  # it asked, and nobody can answer a script
    assert not (root / "rc1").exists()
    # trusted, the grant applies: the command runs without asking (in the sandbox)
    api.extend(*_touch_then_done())
    trusted = run_cli("run", "/review", "-w", str(root), "--json", "--trust", env=env)
    assert trusted.code == 0, trusted.stderr
    assert "allows for this run, without asking" in trusted.stderr + trusted.stdout
    (granted,) = api.message_requests[-1].tool_results()
    assert not granted.get("is_error"), granted


def test_the_sandbox_gets_none_of_the_agents_own_variables(tmp_path: Path) -> None:
    require_bwrap()
    state, root = tmp_path / "state", tmp_path / "ws"
    root.mkdir()
    claude = state / "home" / ".claude"
    claude.mkdir(parents=True)
    (claude / "settings.json").write_text(json.dumps({"permissions": {"allow": ["run_command"]}}))
    endpoint = "http://127.0.0.1:9/agent-endpoint-" + uuid.uuid4().hex
    env = cli_env(None, state, ANTHROPIC_BASE_URL=endpoint, AGENTLS_MODEL="m-secret-model")
    env["HARMLESS_VARIABLE"] = "kept"
    done = run_cli("tool", "run_command", json.dumps({"command": "env"}), env=env, cwd=root)
    out = done.stdout + done.stderr
    assert "HARMLESS_VARIABLE=kept" in out, out  # the probe ran and printed the environment
    assert "agent-endpoint-" not in out
    assert "ANTHROPIC_" not in out
    assert "m-secret-model" not in out


def _serve_child(cli: psutil.Process, timeout: float = 60) -> psutil.Process:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for child in cli.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if "serve" in child.cmdline():
                    return child
        time.sleep(0.1)
    raise AssertionError("the CLI started no `agentls serve`")


def _ends(process: psutil.Process, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


def test_the_server_dies_with_a_killed_cli(tmp_path: Path) -> None:
    with socket.socket() as hanging:  # a model endpoint that accepts and never answers
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(8)
        url = f"http://127.0.0.1:{hanging.getsockname()[1]}"
        root = tmp_path / "ws"
        root.mkdir()
        cli = subprocess.Popen(
            [sys.executable, "-m", "agentls", "run", "hi", "-w", str(root)],
            env=cli_env(url, tmp_path / "state"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            server = _serve_child(psutil.Process(cli.pid))
            # a busy server does not see its stdin end: emulated by a second writer
            writer = os.open(f"/proc/{server.pid}/fd/0", os.O_WRONLY)
            try:
                time.sleep(2)  # the run is waiting for the model
                cli.kill()
                cli.wait()
                assert _ends(server, 15), "agentls serve outlived the CLI that started it"
            finally:
                os.close(writer)
        finally:
            if cli.poll() is None:
                cli.kill()
                cli.wait()
