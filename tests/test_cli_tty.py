"""`agentls run` on a terminal: a spinner, and approval prompts answered at the keyboard."""

from __future__ import annotations

import sys
from pathlib import Path

from agentls.testing import ScriptedMessagesServer, text_turn, tool_turn
from tests.cli_support import answer_once, cli_env, on_a_terminal, write_tree

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def test_terminal_run_shows_a_spinner_and_asks_before_an_auto_edit(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    workspace = write_tree(tmp_path / "ws", {"a.py": "X = 1\n"})
    api.extend(
        tool_turn(("edit_file", {"path": "a.py", "old_string": "X = 1", "new_string": "X = 2"})),
        text_turn("done"),
    )
    env = cli_env(api.base_url, tmp_path / "state")
    argv = [sys.executable, "-m", "agentls", "run", "bump", "-w", str(workspace)]
    argv += ["--mode", "auto", "--apply"]
    run = on_a_terminal(argv, env, answer_once(b"choice [1]", b"1\n"))  # Allow once
    text, plain = run.raw, run.plain
    assert run.code == 0, plain[-3000:]
    assert "choice [1]" in plain, plain[-3000:]
    assert any(frame in plain for frame in SPINNER), "a spinner on a terminal"
    assert "\x1b[" in text, "styled output on a terminal"
    assert "allow edit_file? Editing a.py" in plain
    assert "Allow for this session" in plain
    assert (workspace / "a.py").read_text() == "X = 2\n"
