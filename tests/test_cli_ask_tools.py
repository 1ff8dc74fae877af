"""`agentls ask`, `agentls tools`, `agentls tool` as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import cli_env, run_cli, snapshot, write_tree


def test_ask_is_read_only_and_prints_markdown(api: ScriptedMessagesServer, tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"notes.md": "hello\n"})
    before = snapshot(workspace)
    api.extend(
        tool_turn(("read_file", {"path": "notes.md"})),
        text_turn("# Answer\n\nThe notes say **hello**.\n\n- one\n- two\n"),
    )
    result = run_cli(
        "ask",
        "What do the notes say?",
        "-w",
        str(workspace),
        env=cli_env(api.base_url, tmp_path / "state"),
    )
    assert result.code == 0, result.stdout + result.stderr
    assert "The notes say hello." in result.stdout  # rendered: no ** markers
    assert "**" not in result.stdout
    assert "• one" in result.stdout
    assert "Answer" in result.stdout
    request = api.message_requests[0]
    assert "write_file" not in request.tool_names
    assert "read_file" in request.tool_names
    assert snapshot(workspace) == before


def test_tools_lists_the_definitions_sent_to_the_model(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    env = cli_env(None, tmp_path / "state")
    listed = run_cli("tools", "--json", "-w", str(workspace), env=env)
    assert listed.code == 0, listed.stderr
    tools = json.loads(listed.stdout)
    names = [t["name"] for t in tools]
    assert names == sorted(names)
    assert {"read_file", "edit_file", "run_tests"} <= set(names)
    # client tools; a server tool (web_search, on Anthropic's endpoint) is the API's own
    assert all("input_schema" in t and t["description"] for t in tools if "type" not in t)
    assert tools[-1].get("cache_control") == {"type": "ephemeral"}
    table = run_cli("tools", "-w", str(workspace), env=env)
    assert table.code == 0
    assert "read_file" in table.stdout
    assert "tools (review mode)" in table.stdout
    plan = json.loads(
        run_cli("tools", "--json", "--mode", "plan", "-w", str(workspace), env=env).stdout
    )
    assert "write_file" not in {t["name"] for t in plan}


def test_tool_runs_one_tool_and_exits_1_on_error(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\nB = 2\n"})
    env = cli_env(None, tmp_path / "state")
    read = run_cli("tool", "read_file", '{"path": "a.py"}', "-w", str(workspace), env=env)
    assert read.code == 0, read.stderr
    assert "A = 1" in read.stdout
    assert "B = 2" in read.stdout
    missing = run_cli("tool", "read_file", '{"path": "nope.py"}', "-w", str(workspace), env=env)
    assert missing.code == 1
    assert "nope.py" in missing.stderr
    bad = run_cli("tool", "read_file", "{not json", "-w", str(workspace), env=env)
    assert bad.code == 2
    assert "not valid JSON" in bad.stderr
    unknown = run_cli("tool", "no_such_tool", "{}", "-w", str(workspace), "--json", env=env)
    assert unknown.code == 1
    assert json.loads(unknown.stdout)["is_error"] is True


def test_tool_write_is_a_dry_run_unless_applied(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "A = 1\n"})
    env = cli_env(None, tmp_path / "state")
    edit = '{"path": "a.py", "old_string": "A = 1", "new_string": "A = 2"}'
    dry = run_cli("tool", "edit_file", edit, "-w", str(workspace), env=env)
    assert dry.code == 0, dry.stderr
    assert "+A = 2" in dry.stdout
    assert "dry run" in dry.stderr
    assert (workspace / "a.py").read_text() == "A = 1\n"
    applied = run_cli("tool", "edit_file", edit, "-w", str(workspace), "--apply", env=env)
    assert applied.code == 0, applied.stderr
    assert (workspace / "a.py").read_text() == "A = 2\n"
