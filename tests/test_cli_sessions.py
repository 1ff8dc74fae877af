"""`agentls sessions` and `agentls resume`: a session continues in a new CLI process."""

from __future__ import annotations

import json
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn
from tests.cli_support import cli_env, run_cli, write_tree


def test_sessions_lists_and_resume_continues_in_a_new_process(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"README.md": "hello\n"})
    other = write_tree(tmp_path / "other", {"x.txt": "x\n"})
    env = cli_env(api.base_url, tmp_path / "state")
    api.extend(text_turn("Noted."), text_turn("You said: the sky is green."))

    first = run_cli("run", "Note that the sky is green.", "-w", str(workspace), "--json", env=env)
    assert first.code == 0, first.stdout + first.stderr
    session = json.loads(first.stdout)["session"]

    listed = run_cli("sessions", "-w", str(workspace), "--json", env=env)
    entries = json.loads(listed.stdout)
    assert [e["id"] for e in entries] == [session]
    assert entries[0]["first_prompt"] == "Note that the sky is green."
    assert json.loads(run_cli("sessions", "-w", str(other), "--json", env=env).stdout) == []
    table = run_cli("sessions", "-w", str(workspace), env=env)
    assert session in table.stdout and "completed" in table.stdout

    resumed = run_cli("resume", session, "What did I say?", "-w", str(workspace), "--json", env=env)
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert json.loads(resumed.stdout)["text"] == "You said: the sky is green."
    history = str(api.message_requests[-1].messages)
    assert "Note that the sky is green." in history and "What did I say?" in history
