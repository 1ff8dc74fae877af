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
    assert session[:6] in table.stdout
    assert "completed" in table.stdout
    assert session not in table.stdout  # a short unique prefix, never cut by the table

    # any unique prefix names the session
    resumed = run_cli(
        "resume", session[:6], "What did I say?", "-w", str(workspace), "--json", env=env
    )
    assert resumed.code == 0, resumed.stdout + resumed.stderr
    assert json.loads(resumed.stdout)["text"] == "You said: the sky is green."
    history = str(api.message_requests[-1].messages)
    assert "Note that the sky is green." in history
    assert "What did I say?" in history


def test_resume_of_an_unknown_session_says_so_without_a_traceback(tmp_path: Path) -> None:
    workspace = write_tree(tmp_path / "ws", {"README.md": "hello\n"})
    env = cli_env("http://127.0.0.1:9", tmp_path / "state")
    result = run_cli("resume", "deadbeef", "hi", "-w", str(workspace), env=env)
    assert result.code == 2
    assert "no saved session 'deadbeef'" in result.stderr
    assert "agentls sessions" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_an_ambiguous_prefix_is_refused_with_the_candidates(tmp_path: Path) -> None:
    state = tmp_path / "state"
    transcripts = state
    transcripts.mkdir(parents=True)
    for sid in ("abc123000001", "abc123000002"):
        (transcripts / f"{sid}.jsonl").write_text("")
    env = cli_env("http://127.0.0.1:9", state)
    result = run_cli("transcript", "abc123", env=env)
    assert result.code == 2
    assert "ambiguous" in result.stderr
    assert "abc123000001" in result.stderr
    single = run_cli("transcript", "abc123000002", env=env)
    assert single.code == 0, single.stderr
